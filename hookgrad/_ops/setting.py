"""The eager path's on/off switches (deferred forward, backward fusion, tiered execution)
share one shape: a setting that is also a context manager."""


class Setting:
    """An on/off switch of the eager path (its class's ``_state["enabled"]``): set at
    once; as a context manager it restores the previous value on exit."""

    _state = None

    def __init__(self, enabled):
        self.prev = self._state["enabled"]
        self._state["enabled"] = bool(enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._state["enabled"] = self.prev
