"""``torch._utils`` helpers that ``torch`` re-exports: ``classproperty``."""
from typing import Any


class _ClassProperty:
    """A read-only property of a class: ``owner.name`` calls the getter with the class."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner=None) -> Any:
        return self.fget.__get__(instance, type(instance) if owner is None else owner)()


def classproperty(func) -> Any:
    """Decorate a method to be a property of the class (``Cls.name`` calls it with
    ``Cls``); a ``staticmethod`` is called with no argument."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassProperty(func)
