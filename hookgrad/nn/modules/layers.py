"""Layer classes: the index that modules/__init__ star-imports."""
__all__ = []
