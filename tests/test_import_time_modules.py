"""The modules libraries import at import time (torch.version, torch.accelerator,
torch.nn.attention, torch.overrides, torch.utils._python_dispatch, the distributed stubs):
what they answer, against PyTorch's CPU build, and the stubs' not-implemented errors."""
import importlib
import typing

import pytest

import hookgrad
from tests.differential import raises, same_as_torch


def _mod(L, path):
    return importlib.import_module(L.__name__ + path)


def test_version_and_accelerator_on_a_cpu_machine():
    if hookgrad.cuda.is_available():
        pytest.skip("the comparison is with PyTorch's CPU build")

    def f(L):
        v, acc = _mod(L, ".version"), _mod(L, ".accelerator")
        return [v.__version__.split("+")[0], v.cuda, v.hip, v.debug,
                acc.is_available(), acc.current_accelerator(), acc.device_count()]
    assert same_as_torch(f)[0] == "2.13.0"


def test_sdpa_kernel_selects_and_restores_backends():
    def f(L):
        att = _mod(L, ".nn.attention")
        B = att.SDPBackend
        before = att._cur_sdpa_kernel_backends()
        with att.sdpa_kernel([B.MATH, B.MATH, B.FLASH_ATTENTION]) as ctx:
            inside = att._cur_sdpa_kernel_backends()
        return [repr(B.MATH), str(B.CUDNN_ATTENTION), int(B.ERROR), ctx,
                sorted(int(b) for b in inside), sorted(map(int, before))
                == sorted(map(int, att._cur_sdpa_kernel_backends())),
                raises(lambda: att.sdpa_kernel("math").__enter__())]
    got = same_as_torch(f)
    assert got[4] == [0, 1] and got[6]["raises"] == "AssertionError"


def test_flex_attention_masks_work_and_the_kernel_is_not_implemented():
    def f(L):
        fa = _mod(L, ".nn.attention.flex_attention")
        z = L.tensor(0)
        causal = lambda b, h, q, k: q >= k  # noqa: E731
        both = fa.and_masks(causal, fa.noop_mask)
        either = fa.or_masks(causal, lambda b, h, q, k: k == 0)
        return [[bool(both(z, z, L.tensor(q), L.tensor(k))) for q in range(3) for k in range(3)],
                [bool(either(z, z, L.tensor(q), L.tensor(k))) for q in range(3)
                 for k in range(3)], fa.AuxRequest(lse=True), fa._DEFAULT_SPARSE_BLOCK_SIZE]
    same_as_torch(f)
    fa = hookgrad.nn.attention.flex_attention
    for call in (lambda: fa.flex_attention(1, 2, 3), lambda: fa.create_block_mask(None, 1, 1, 2, 2),
                 lambda: fa.BlockMask()):
        with pytest.raises(NotImplementedError, match=r"hookgrad does not implement torch\.nn\."
                           r"attention\.flex_attention\.\w+ yet"):
            call()


def test_overrides_queries_match_torch():
    def f(L):
        o = _mod(L, ".overrides")

        class Sub(L.Tensor):
            pass

        class Other:
            def __torch_function__(self, *a):
                pass
        sub = Sub(L.ones(1)) if L is hookgrad else L.ones(1).as_subclass(Sub)
        p = L.nn.Parameter(L.ones(1))
        return [o.has_torch_function((L.ones(1),)), o.has_torch_function((p,)),
                o.has_torch_function((sub,)), o.has_torch_function((Other(), 1)),
                o.has_torch_function((1, "a")), o.has_torch_function_unary(sub),
                o.is_tensor_like(L.ones(1)), o.is_tensor_like(Other()), o.is_tensor_like(1),
                o.is_tensor_like(sub), o.is_tensor_like(Sub)]
    assert same_as_torch(f)[:3] == [False, False, True]


def test_dispatch_mode_stack_follows_with_blocks():
    pd = importlib.import_module("hookgrad.utils._python_dispatch")

    class Mode(pd.BaseTorchDispatchMode):
        pass
    assert pd._get_current_dispatch_mode() is None and pd._len_torch_dispatch_stack() == 0
    assert not pd.is_in_torch_dispatch_mode()
    assert not pd.is_traceable_wrapper_subclass(hookgrad.ones(1))
    with Mode() as outer, Mode() as inner:
        assert pd._get_current_dispatch_mode_stack() == [outer, inner]
        with pd._disable_current_modes() as popped:
            assert popped == [outer, inner] and not pd.is_in_torch_dispatch_mode()
        assert pd._get_current_dispatch_mode() is inner
    assert pd._len_torch_dispatch_stack() == 0


def test_distributed_stubs_exist_and_raise_when_called():
    fc = importlib.import_module("hookgrad.distributed._functional_collectives")
    dcp = importlib.import_module("hookgrad.distributed.checkpoint")
    sd = importlib.import_module("hookgrad.distributed.checkpoint.state_dict")
    t = hookgrad.ones(2)
    assert fc.wait_tensor(t) is t
    assert sd.StateDictOptions(full_state_dict=True).strict is True
    for call, name in [(lambda: fc.all_reduce(t, "sum", None),
                        "distributed._functional_collectives.all_reduce"),
                       (lambda: dcp.async_save({}, checkpoint_id="x"),
                        "distributed.checkpoint.async_save"),
                       (lambda: dcp.FileSystemReader("x"),
                        "distributed.checkpoint.FileSystemReader"),
                       (lambda: sd.get_optimizer_state_dict(None, None),
                        "distributed.checkpoint.state_dict.get_optimizer_state_dict")]:
        with pytest.raises(NotImplementedError, match=rf"does not implement torch\.{name} yet"):
            call()
    assert issubclass(dcp.CheckpointException, BaseException)


def test_types_aliases_and_the_deprecated_stateless_call():
    from hookgrad import types
    from hookgrad.nn.utils import stateless
    assert types.Number == typing.Union[int, float, bool] and types._int is int
    m = hookgrad.nn.Linear(1, 1)
    with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call` instead"):
        out = stateless.functional_call(m, {"weight": hookgrad.ones(1, 1),
                                            "bias": hookgrad.zeros(1)}, (hookgrad.ones(1) * 3,))
    assert out.tolist() == [3.0]


def test_torch_functional_holds_torchs_own_functions():
    functional = importlib.import_module("hookgrad.functional")
    assert functional.einsum is hookgrad.einsum and functional.split is hookgrad.split
    for name in functional.__all__:
        assert getattr(functional, name) is getattr(hookgrad, name)
    with pytest.raises(AttributeError, match="hookgrad does not implement "
                       "torch.functional.not_a_function yet"):
        functional.not_a_function


def test_lazy_module_mixin_makes_user_lazy_modules():
    from hookgrad.nn.modules.lazy import LazyModuleMixin
    assert not isinstance(hookgrad.nn.Linear(1, 1), LazyModuleMixin)
    assert isinstance(hookgrad.nn.LazyLinear(2), LazyModuleMixin)

    class LazyScale(LazyModuleMixin, hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = hookgrad.nn.UninitializedParameter()

        def initialize_parameters(self, x):
            self.scale.materialize(x.shape[-1:])
            self.scale.data.fill_(2.0)

        def forward(self, x):
            return x * self.scale

    m = LazyScale()
    assert m.has_uninitialized_params()
    assert m(hookgrad.ones(3, 4)).tolist() == [[2.0] * 4] * 3
    assert not m.has_uninitialized_params() and tuple(m.scale.shape) == (4,)

    class Unfinished(LazyModuleMixin, hookgrad.nn.Module):
        def forward(self, x):
            return x
    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented "
                                                  "for Unfinished"):
        Unfinished()(hookgrad.ones(1))
