"""``torch.backends.cuda``: ``matmul.allow_tf32`` is JAX's matmul precision."""
from ._numerics import get_float32_matmul_precision, set_float32_matmul_precision


def is_built():
    """Whether hookgrad can run on CUDA here: JAX has a GPU backend."""
    from .. import cuda
    return cuda.is_available()


class _Matmul:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` reads and sets the float32 matmul
    precision ('high' when allowed, 'highest' when not), as PyTorch's does."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
