"""The one absent MTIA backend that ``hookgrad.mtia``'s modules answer for."""
from .._absent_backend import AbsentBackend

MTIA = AbsentBackend(
    "MTIA", index_rules="mtia", not_compiled=(
        "Torch not compiled with MTIA enabled. Ensure you have `import "
        "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
        "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"))


def lazy_init():
    """Initializing MTIA: PyTorch's CPU build (and hookgrad, on JAX) has none."""
    raise MTIA.not_compiled()
