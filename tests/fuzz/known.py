"""Seeds whose programs differ from PyTorch on main today, by class (see test_fuzz.py)."""
KNOWN = {}
