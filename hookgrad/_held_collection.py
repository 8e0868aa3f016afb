"""Containers whose size, iteration and membership are those of a collection they hold."""


class _HeldCollection:
    """``len``, ``iter`` and ``in`` of the collection held in the attribute that ``_held``
    names (``ModuleDict``'s ``_modules``, ``ParameterDict``'s keys, a Graph's nodes)."""
    _held = ""

    def __len__(self):
        return len(getattr(self, self._held))

    def __iter__(self):
        return iter(getattr(self, self._held))

    def __contains__(self, key):
        return key in getattr(self, self._held)
