"""What PyTorch's build flags report, answered for hookgrad's build: JAX's ``jaxlib``.

``torch.has_lapack`` and friends say which native libraries the installed build can call.
hookgrad's linear algebra and FFTs run in XLA and ``jaxlib``'s LAPACK and DUCC kernels; it
links neither MKL nor OpenMP (XLA keeps its own thread pools), so those two are False
(docs/differences.md).
"""
has_lapack = True      # jaxlib's CPU linear algebra calls LAPACK
has_spectral = True    # jnp.fft (DUCC on CPU, cuFFT on GPU)
has_mkl = False        # XLA's CPU backend does not use MKL
has_openmp = False     # XLA parallelises with its own thread pool, not OpenMP


def compiled_with_cxx11_abi() -> bool:
    """Whether the native code was built with ``_GLIBCXX_USE_CXX11_ABI=1``: True (jaxlib's
    wheels use the C++11 ABI)."""
    return True
