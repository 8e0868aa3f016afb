"""Fresh deferred-forward state for a test that counts programs: an empty trace (ops
another test left pending would join its first segment), no segment run last, empty
segment caches and, with ``regions``, empty fused-region caches and plans."""
import collections

from hookgrad._engine import fusion
from hookgrad._ops import lazy, lazy_segment


def empty(monkeypatch, regions=False):
    monkeypatch.setattr(lazy._local, "trace", None)
    monkeypatch.setattr(lazy._local, "last", None)
    monkeypatch.setattr(lazy_segment, "_seen", {})
    monkeypatch.setattr(lazy_segment, "_compiled", collections.OrderedDict())
    if regions:
        monkeypatch.setattr(fusion, "_seen", {})
        monkeypatch.setattr(fusion, "_compiled", collections.OrderedDict())
        monkeypatch.setattr(fusion, "_plans", {})
