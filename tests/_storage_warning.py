"""Running a scenario with warnings ignored without spending the once-per-process
"TypedStorage is deprecated" warning of hookgrad or PyTorch (tests/test_storage.py checks
that the first ``storage()`` call warns)."""
import warnings

import hookgrad


def quiet(fn):
    """``fn(L)`` with warnings ignored, leaving the once-per-process "TypedStorage is
    deprecated" warning of both libraries unspent for the tests that check it."""
    def run(L):
        if L is hookgrad:
            saved = hookgrad._storage._warned[0]
        else:
            flag = L.storage._warn_typed_storage_removal.__dict__
            saved = flag.get("has_warned", _UNSET)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(L)
        finally:
            if L is hookgrad:
                hookgrad._storage._warned[0] = saved
            elif saved is _UNSET:
                flag.pop("has_warned", None)
            else:
                flag["has_warned"] = saved
    return run


_UNSET = object()
