"""Testing helpers: ``assert_close`` and ``make_tensor`` as ``torch.testing`` has them, and
``check_grads``, which compares the tape's gradients with float64 finite differences."""
from ._comparison import assert_close
from ._creation import make_tensor
from ._gradients import check_grads

__all__ = ["assert_close", "make_tensor", "check_grads"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
