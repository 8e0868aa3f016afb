"""``pytorch_error(call)``: the error ``call(L)`` raises, as ``[type name, message]``, under
hookgrad and PyTorch, checked equal by ``same_as_torch`` (whose own ``raises`` compares the
types only). None when nothing is raised, so a call that should fail and does not is caught."""
from tests.differential import same_as_torch


def pytorch_error(call):
    def fn(L):
        try:
            call(L)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return [type(e).__name__, str(e)]
        return None
    got = same_as_torch(fn)
    assert got is not None, "expected an error"
    return got
