"""``hookgrad.backends``, the float32 matmul precision (JAX's default matmul precision),
deterministic-algorithm switches and print options, checked against PyTorch."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from tests.differential import raises, same_as_torch

HAS_GPU = hookgrad.cuda.is_available()


@pytest.fixture
def restore_precision():
    before = jax.config.jax_default_matmul_precision
    yield
    jax.config.update("jax_default_matmul_precision", before)


@pytest.fixture
def restore_printoptions():
    yield
    hookgrad.set_printoptions(profile="default")


def test_backend_switches_have_torchs_defaults_and_are_settable():
    def fn(L):
        b = L.backends
        return [b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.enabled, b.cudnn.allow_tf32,
                b.mps.is_available(), b.mps.is_built(), b.cuda.is_built(),
                b.cudnn.is_available(), b.cudnn.version(), b.cudnn.is_acceptable(L.zeros(1)),
                b.cuda.matmul.allow_fp16_reduced_precision_reduction]
    if not HAS_GPU:
        assert same_as_torch(fn) == [False, False, True, True, False, False, False, False,
                                     None, False, True]
    cudnn = hookgrad.backends.cudnn
    cudnn.benchmark = True
    try:
        with cudnn.flags(enabled=False, deterministic=True):
            assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (False, True, False)
        assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (True, False, True)
    finally:
        cudnn.benchmark = False


def test_cpu_capability_is_one_of_torchs_names():
    cap = hookgrad.backends.cpu.get_cpu_capability()
    assert cap in ("DEFAULT", "NO AVX", "AVX2", "AVX512")
    same_as_torch(lambda L: L.backends.cpu.get_cpu_capability())


@pytest.mark.parametrize("level, jax_name", [("highest", "highest"), ("high", "high"),
                                             ("medium", "bfloat16")])
def test_float32_matmul_precision_sets_jax(level, jax_name, restore_precision):
    hookgrad.set_float32_matmul_precision(level)
    assert jax.config.jax_default_matmul_precision == jax_name
    assert hookgrad.get_float32_matmul_precision() == level
    assert hookgrad.backends.cuda.matmul.allow_tf32 == (level != "highest")
    a = hookgrad.tensor([[1.0, 2.0]])  # matmuls still run and give float32
    assert (a @ a.T).dtype == hookgrad.float32


def test_float32_matmul_precision_default_and_allow_tf32(restore_precision):
    jax.config.update("jax_default_matmul_precision", None)
    expected = {"cpu": "highest", "gpu": "high", "tpu": "medium"}[jax.default_backend()]
    assert hookgrad.get_float32_matmul_precision() == expected
    if not HAS_GPU:
        same_as_torch(lambda L: [L.get_float32_matmul_precision(),
                                 L.backends.cuda.matmul.allow_tf32])
    hookgrad.backends.cuda.matmul.allow_tf32 = True
    assert hookgrad.get_float32_matmul_precision() == "high"
    hookgrad.backends.cuda.matmul.allow_tf32 = False
    assert hookgrad.get_float32_matmul_precision() == "highest"
    assert jax.config.jax_default_matmul_precision == "highest"


def test_float32_matmul_precision_bad_input(restore_precision):
    with pytest.raises(RuntimeError, match="set_float32_matmul_precision expects a str, but "
                                           "got int"):
        hookgrad.set_float32_matmul_precision(1)
    hookgrad.set_float32_matmul_precision("high")
    with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
        hookgrad.set_float32_matmul_precision("foo")
    assert hookgrad.get_float32_matmul_precision() == "high"  # unchanged
    same_as_torch(lambda L: raises(L.set_float32_matmul_precision, 1))


def test_matmul_precision_reaches_xla(restore_precision):
    # the precision is part of what JAX compiles: the lowered dot names it
    hookgrad.set_float32_matmul_precision("highest")
    text = jax.jit(jnp.dot).lower(jnp.ones((2, 2)), jnp.ones((2, 2))).as_text()
    assert "HIGHEST" in text


def test_deterministic_algorithms():
    def fn(L):
        out = [L.are_deterministic_algorithms_enabled(),
               L.is_deterministic_algorithms_warn_only_enabled()]
        L.use_deterministic_algorithms(True, warn_only=True)
        out += [L.are_deterministic_algorithms_enabled(),
                L.is_deterministic_algorithms_warn_only_enabled(),
                raises(L.use_deterministic_algorithms, "x"),
                raises(lambda: L.use_deterministic_algorithms(True, warn_only=1)),
                L.are_deterministic_algorithms_enabled()]  # unchanged by the bad calls
        L.use_deterministic_algorithms(False)
        return out + [L.are_deterministic_algorithms_enabled()]
    out = same_as_torch(fn)
    assert out[:4] + out[6:] == [False, False, True, True, True, False]
    with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not str"):
        hookgrad.use_deterministic_algorithms("x")
    with pytest.raises(TypeError, match="argument 'warn_only' must be bool, not int"):
        hookgrad.use_deterministic_algorithms(True, warn_only=1)


# --------------------------------------------------------------------------- printoptions
_VALUES = [[1.5, 2.25], [1.0, 10000.0], [0.0, 10.0], [1e-5, 1.0], [1.2345678, -2.5],
           [1e9, 1.0], [float("nan"), 1.5], [float("inf"), 2.0], 1.23456,
           [[1.5, 2.0], [3.0, 4.0]], list(range(40))]


@pytest.mark.parametrize("options", [
    {}, {"precision": 2}, {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"},
    {"threshold": 5}, {"edgeitems": 1, "threshold": 3}, {"precision": 6, "sci_mode": False},
    {"profile": "full", "precision": 1}])
def test_printoptions_repr_matches_torch(options, restore_printoptions):
    def fn(L):
        L.set_printoptions(**options)
        try:
            return [repr(L.tensor(v, dtype=L.float32)).replace("torch.", "hookgrad.")
                    for v in _VALUES]
        finally:
            L.set_printoptions(profile="default")
    same_as_torch(fn)


_LAYOUTS = [
    lambda L: L.arange(60.0).reshape(3, 20) / 7, lambda L: L.arange(3000.0).reshape(60, 50),
    lambda L: L.arange(2000).reshape(10, 10, 20), lambda L: L.zeros(40),
    lambda L: L.tensor([True, True]), lambda L: L.tensor([[1, 2], [3, 400]]),
    lambda L: L.zeros(2, 0), lambda L: L.zeros(0, 3), lambda L: L.tensor(7),
    lambda L: (L.arange(24.0).reshape(2, 3, 4) - 12) / 5, lambda L: L.tensor(float("nan"))]


@pytest.mark.parametrize("options", [{}, {"linewidth": 40}, {"edgeitems": 1, "threshold": 3},
                                     {"precision": 2, "linewidth": 120}])
def test_printoptions_layout_matches_torch(options, restore_printoptions):
    def fn(L):
        L.set_printoptions(**options)
        try:
            return [repr(make(L)).replace("torch.", "hookgrad.") for make in _LAYOUTS]
        finally:
            L.set_printoptions(profile="default")
    out = same_as_torch(fn)
    if not options:
        assert out[3].startswith("tensor([0., 0.,") and out[6] == "tensor([], size=(2, 0))"


def test_printoptions_explicit(restore_printoptions):
    hookgrad.set_printoptions(precision=2)
    assert repr(hookgrad.tensor([1.2345, 2.0])) == "tensor([1.23, 2.00])"
    hookgrad.set_printoptions(sci_mode=True)  # precision stays; sci_mode is set every call
    assert repr(hookgrad.tensor([1.5])) == "tensor([1.50e+00])"
    hookgrad.set_printoptions(threshold=4, edgeitems=1)
    assert repr(hookgrad.arange(10.0)) == "tensor([0.,  ..., 9.])"
    hookgrad.set_printoptions(profile="nonsense")  # ignored, as PyTorch does
    from hookgrad._repr import get_printoptions
    assert get_printoptions() == {"precision": 2, "threshold": 4, "edgeitems": 1,
                                  "linewidth": 80, "sci_mode": None}
    hookgrad.set_printoptions(profile="default")
    assert repr(hookgrad.tensor([1.2345])) == "tensor([1.2345])"
    np.testing.assert_array_equal(np.asarray(hookgrad.tensor([1.0])), [1.0])
