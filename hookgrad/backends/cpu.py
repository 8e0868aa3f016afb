"""``torch.backends.cpu``."""
import functools
import platform


@functools.lru_cache(maxsize=None)
def get_cpu_capability():
    """The widest vector instruction set of this CPU, as PyTorch names it: ``"AVX512"``,
    ``"AVX2"``, ``"NO AVX"`` (x86) or ``"DEFAULT"``."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "DEFAULT"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "AVX512"
    return "AVX2" if "avx2" in flags else "NO AVX"


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
