"""``torch.torch_version``: ``TorchVersion``, a version string that compares as a version.

``hookgrad.__version__``-style checks in libraries (``torch.__version__ >= "2.1"``,
``>= (2, 1)``) compare release numbers, not characters: ``"2.13.0" > "2.9"`` is True here.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]

# PEP 440's release segment and an optional pre-release (a/b/rc) or dev/post tail
_PATTERN = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d*))?"
                      r"(?:[-_.]?post[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+[\w.]*)?$",
                      re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


def _key(text: str) -> tuple:
    """A sort key of a PEP 440 version: release (trailing zeros dropped), then pre-release,
    post and dev parts ordered as PEP 440 orders them."""
    m = _PATTERN.match(text.strip())
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre, post, dev = m.group(2), m.group(4), m.group(5)
    if pre is not None:
        pre_key = (_PRE[pre.lower()], int(m.group(3) or 0))
    elif dev is not None and post is None:
        pre_key = (-1, 0)  # 1.0.dev0 < 1.0a0
    else:
        pre_key = (3, 0)   # a final release sorts after its pre-releases
    post_key = -1 if post is None else int(post or 0)
    dev_key = float("inf") if dev is None else int(dev or 0)
    return tuple(release), pre_key, post_key, dev_key


def _as_text(other: Any) -> str:
    if isinstance(other, str):
        return other
    if isinstance(other, Iterable):  # (2, 1) is version 2.1
        return ".".join(str(p) for p in other)
    if type(other).__name__ == "Version":  # packaging.version.Version, without importing it
        return str(other)
    raise InvalidVersion(other)


class TorchVersion(str):
    """A string that compares with strings, tuples and ``packaging`` Versions as a version
    (``TorchVersion("2.13.0") > (2, 9)``); a string that is no version compares as text."""

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> bool:
        try:
            mine, theirs = _key(self), _key(_as_text(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, "__gt__")

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, "__lt__")

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, "__ge__")

    def __le__(self, other: Any) -> bool:
        return self._compare(other, "__le__")

    def __eq__(self, other: Any) -> bool:
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__


__version__ = TorchVersion(internal_version)

from . import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
