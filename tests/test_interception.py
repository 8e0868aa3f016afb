"""Interception as PyTorch has it: dispatch modes (``TorchDispatchMode``) see each op as
its ATen overload, ``torch.ops.aten`` names the op table's rows, ``FlopCounterMode``
counts as PyTorch's, and selective activation checkpointing keeps the ops a policy
chooses. Forward and backward, a mode's op log and the FLOP counts per op are PyTorch's
(a node's backward runs PyTorch's formula ops, ``_ops/derivatives.py``)."""
import functools
import importlib
import warnings

import jax
import numpy as np
import pytest

import hookgrad
from hookgrad._ops.derivatives import FORMULAS
from tests.differential import same_as_torch, torch


def _mod(L, name):
    return importlib.import_module(f"{L.__name__}.{name}")


def _logging_mode(L, log):
    class Log(_mod(L, "utils._python_dispatch").TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args, kwargs=None):
            node = L._C._current_autograd_node()
            log.append((str(func), type(node).__name__ if node is not None else None))
            return func(*args, **(kwargs or {}))
    return Log()


def _cnn(L):
    nn, F = L.nn, L.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
            self.fc = nn.Linear(8 * 2 * 2, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2)
            return self.fc(F.relu(self.c2(x)).flatten(1))
    return CNN(), (2, 3, 12, 12)


def _block(L):
    nn, F = L.nn, L.nn.functional

    class Block(nn.Module):
        def __init__(self, d=16, heads=2):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.f1, self.f2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = [z.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
                       for z in self.qkv(self.ln1(x)).split(d, -1)]
            a = L.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5, -1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, n, d))
            return x + self.f2(F.gelu(self.f1(self.ln2(x))))
    return Block(), (2, 5, 16)


def _input(L, shape):
    x = L.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    return x.requires_grad_()


def _loss(L, make):
    """The model's loss on a fixed input: cross entropy for the CNN, a sum for the block
    (the target made before any mode is entered)."""
    L.manual_seed(0)
    model, shape = make(L)
    x = _input(L, shape)
    if make is _cnn:
        target = L.tensor([1, 3])
        return lambda: L.nn.functional.cross_entropy(model(x), target)
    return lambda: model(x).sum()


@pytest.mark.parametrize("make", [_cnn, _block], ids=["cnn", "transformer_block"])
def test_flop_counts_per_op_equal_pytorchs_forward_and_backward(make):
    def scenario(L):
        loss = _loss(L, make)
        counter = _mod(L, "utils.flop_counter").FlopCounterMode
        with counter(display=False) as forward:
            loss()
        with counter(display=False) as both:
            loss().backward()
        return [{str(k): v for k, v in c.get_flop_counts()["Global"].items()}
                for c in (forward, both)]
    fwd, both = same_as_torch(scenario)
    assert sum(both.values()) > 2 * sum(fwd.values())  # a product per operand needing grad


# PyTorch's batch norm makes an unused ``reserve`` Tensor (``_batch_norm_impl_index``):
# hookgrad's has none (docs/differences.md)
_ONLY_PYTORCH = ("aten.empty.memory_format", None)


@pytest.mark.parametrize("make", [_cnn, _block], ids=["cnn", "transformer_block"])
def test_dispatch_mode_log_equals_pytorchs_forward_and_backward(make):
    # every op, in order, with the node whose backward runs it: the factories' and the
    # seed's ops, saved outputs' detach, each op of a derivative formula, the sums where
    # gradients meet and AccumulateGrad's detach
    def scenario(L):
        loss, log = _loss(L, make), []
        with _logging_mode(L, log):
            loss().backward()
        return [list(e) for e in log if e != _ONLY_PYTORCH]
    log = same_as_torch(scenario)
    assert ["aten.ones_like.default", None] in log
    assert ["aten.detach.default", "AccumulateGrad"] in log


def test_dispatch_mode_sees_factories_the_seed_and_each_derivative_op():
    def scenario(L):
        log = []
        with _logging_mode(L, log):
            a = L.rand(10, requires_grad=True)
            a.mul(2).div(3).sum().backward()
            a.grad.zero_()
            L.zeros_like(a).add(a).sum().backward()
        return [list(e) for e in log]
    assert same_as_torch(scenario)[:6] == [
        ["aten.rand.default", None], ["aten.mul.Tensor", None], ["aten.div.Tensor", None],
        ["aten.sum.default", None], ["aten.ones_like.default", None],
        ["aten.expand.default", "SumBackward0"]]


def test_dispatch_mode_sees_pytorchs_ops_around_the_formulas():
    # a Tensor literal (lift_fresh), detach, a comparison with a number (gt.Scalar), a leaf
    # gradient in another layout (new_empty_strided, copy_), an in-place accumulation
    def scenario(L):
        log = []
        a = L.ones(2, 3, requires_grad=True)
        with _logging_mode(L, log):
            b = L.tensor([1.0, 2.0, 3.0])
            (a.sum(0) * (a.detach() > 0)[0]).sum().backward()
            (a[:, :1] * b).sum().backward()
        return [list(e) for e in log], a.grad.tolist()
    log, _ = same_as_torch(scenario)
    assert ["aten.new_empty_strided.default", "AccumulateGrad"] in log
    assert ["aten.add_.Tensor", "AccumulateGrad"] in log


def test_a_complex_gradient_under_a_mode_is_pytorchs():
    # PyTorch's formula conjugates (grad * other.conj()): a complex node takes JAX's vjp
    def scenario(L):
        a = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        b = L.tensor([2 - 1j, 1j])
        with _logging_mode(L, []):
            (a * b).abs().sum().backward()
        return [[z.real, z.imag] for z in a.grad.tolist()]
    same_as_torch(scenario)


def _vjp_case(L, name):
    """``(output, inputs)`` of an op recording the row ``name`` (a formula's)."""
    x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    w = L.tensor(np.linspace(0.5, 2, 20, dtype=np.float32).reshape(4, 5), requires_grad=True)
    b = L.tensor(np.linspace(1, 2, 5, dtype=np.float32), requires_grad=True)
    cases = {
        "sum": lambda: (x.sum() * x, (x,)), "sum_dim": lambda: (x.sum(1, dtype=L.float64), (x,)),
        "mul": lambda: (x * x[0] * 2, (x,)), "div": lambda: (x / (x + 2) / 3, (x,)),
        "add": lambda: (x + b[:4] + 1, (x, b)), "add_alpha": lambda: (x.add(x, alpha=2), (x,)),
        "sub": lambda: (x - b[1:], (x, b)), "neg": lambda: (-x, (x,)),
        "unsqueeze": lambda: (x.unsqueeze(1), (x,)), "view": lambda: (x.view(12), (x,)),
        "reshape": lambda: (x.reshape(2, 6), (x,)),
        "_reshape_alias": lambda: (x[:, :1].reshape(3), (x,)),
        "_unsafe_view": lambda: (x.t().reshape(12), (x,)),
        "clone": lambda: (x.clone(), (x,)), "expand": lambda: (x[:1].expand(3, 4), (x,)),
        "t": lambda: (x.t(), (x,)), "transpose": lambda: (x.transpose(0, 1), (x,)),
        "permute": lambda: (x[None].permute(2, 0, 1), (x,)), "mm": lambda: (x.mm(w), (x, w)),
        "addmm": lambda: (L.addmm(b, x, w), (x, w, b)),
        "linear": lambda: (L.nn.functional.linear(x, w.t(), b), (x, w, b)),
        "bmm": lambda: (x[None].bmm(w[None]), (x, w)),
        "split": lambda: (L.cat(x.split(3, 1)[::-1], 1), (x,)),
        "mean": lambda: (x.mean() * x, (x,)), "mean_dim": lambda: (x.mean((0, 1)), (x,)),
        "pow": lambda: (x.pow(3), (x,)), "exp": lambda: (x.exp(), (x,)),
        "sqrt": lambda: ((x + 2).sqrt(), (x,)), "rsqrt": lambda: ((x + 2).rsqrt(), (x,)),
        "sin": lambda: (x.sin(), (x,)), "cos": lambda: (x.cos(), (x,)),
        "abs": lambda: (x.abs(), (x,)), "log": lambda: ((x + 2).log(), (x,)),
        "rsub": lambda: (1 - x, (x,)), "cat": lambda: (L.cat([x, w.t()], 0), (x, w)),
        "stack": lambda: (L.stack([x, x * 2], 1), (x,)),
        "squeeze_dim": lambda: (x[None].squeeze(0), (x,)),
        "squeeze_dims": lambda: (x[None, :, None].squeeze((0, 2)), (x,)),
        "squeeze": lambda: (x[None, :, None].squeeze(), (x,)),
        "where": lambda: (L.where(x > 0, x, b[:4]), (x, b)),
        "masked_fill": lambda: (x.masked_fill(x > 0, 1.0), (x,)),
        "var": lambda: (x.var(0), (x,)), "clamp": lambda: (x.clamp(-0.5, 0.5), (x,)),
        "cumsum": lambda: (x.cumsum(1), (x,)),
    }
    return cases[name]()


@pytest.mark.parametrize("name", sorted(FORMULAS) + ["linear"])
def test_each_derivative_formula_gives_jaxs_vjp(name, monkeypatch):
    # under a mode a node runs PyTorch's formula in hookgrad's ops; without one, JAX's vjp
    def grads(mode):
        out, inputs = _vjp_case(hookgrad, name)
        cot = hookgrad.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        with mode:
            got = hookgrad.autograd.grad(out, inputs, cot)
        return [g.numpy() for g in got]
    ran = []
    row = "addmm" if name == "linear" else name  # linear records t and addmm
    formula = FORMULAS[row]
    monkeypatch.setitem(FORMULAS, row, lambda *a: ran.append(row) or formula(*a))
    with_formula = grads(_logging_mode(hookgrad, []))
    assert ran
    for got, want in zip(with_formula, grads(_no_mode())):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class _no_mode:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_jaxs_vjp_reference_is_the_formulas():
    # the reference above is the rows' own vjp: JAX's, with no mode entered
    x = hookgrad.ones(2, 3, requires_grad=True)
    g, = hookgrad.autograd.grad((x * 3).sum(), (x,))
    np.testing.assert_allclose(g.numpy(), jax.grad(lambda a: (a * 3).sum())(np.ones((2, 3))))


def test_dispatch_mode_sees_ops_with_their_aten_overloads():
    def scenario(L):
        log = []
        a = L.ones(3, requires_grad=True)
        with _logging_mode(L, log):
            b = a.mul(2).div(3).sum()
            c = L.zeros(2)
            c.add_(1)
        return [f for f, _ in log if f != "aten.zeros.default"], b.item()
    log, _ = same_as_torch(scenario)
    assert log == ["aten.mul.Tensor", "aten.div.Tensor", "aten.sum.default", "aten.add_.Tensor"]


def test_modes_stack_and_the_inner_one_reaches_the_outer_one():
    def scenario(L):
        log = []
        base = _mod(L, "utils._python_dispatch").TorchDispatchMode

        class Named(base):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_dispatch__(self, func, types, args, kwargs=None):
                log.append(f"{self.name} {func}")
                return func(*args, **(kwargs or {}))
        x = L.ones(2)
        with Named("outer"), Named("inner"):
            x.neg()
        with Named("alone"):
            x.abs()
        return log
    assert same_as_torch(scenario) == ["inner aten.neg.default", "outer aten.neg.default",
                                       "alone aten.abs.default"]


@pytest.mark.parametrize("where,name", [("overrides", "BaseTorchFunctionMode"),
                                        ("utils._python_dispatch", "BaseTorchDispatchMode")])
def test_mode_push_warns_at_the_callers_line_and_enters_nothing(where, name):
    def scenario(L):
        cls = getattr(_mod(L, where), name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mode = cls.push()
        with mode:
            entered = L.ones(2).neg().tolist()
        return [type(mode).__name__, entered, [(w.category.__name__, str(w.message),
                                                w.filename == __file__) for w in caught]]
    assert same_as_torch(scenario)[2] == [
        ("UserWarning", "`Mode.push()` is no longer necessary and can be replaced with just "
         "`with Mode()`", True)]


@pytest.mark.parametrize("where,name,kind", [
    ("overrides", "BaseTorchFunctionMode", "function"),
    ("utils._python_dispatch", "BaseTorchDispatchMode", "dispatch")])
def test_the_current_mode_and_stack_name_the_innermost_mode(where, name, kind):
    def scenario(L):
        mod = _mod(L, where)
        current = getattr(mod, f"_get_current_{kind}_mode")
        stack = getattr(mod, f"_get_current_{kind}_mode_stack")
        outer, inner = getattr(mod, name)(), getattr(mod, name)()
        seen = [current(), stack()]
        with outer, inner:
            seen += [current() is inner, [m is o for m, o in zip(stack(), (outer, inner))],
                     len(stack()), L.ones(2).neg().tolist()]
        return seen + [current(), stack()]
    assert same_as_torch(scenario) == [None, [], True, [True, True], 2, [-1.0, -1.0], None, []]


def test_aten_overloads_are_named_and_callable_as_pytorchs():
    def scenario(L):
        mm = L.ops.aten.mm.default
        out = mm(L.ones(2, 3), L.ones(3, 2))
        mul = L.ops.aten.mul.Tensor
        return [mm.name(), mm.__name__, str(mm.overloadpacket), str(mm),
                mm == L.ops.aten.mm.default, out.tolist(), str(L.ops.aten.var_mean.correction),
                mul.name(), mul._schema.name, mul._schema.overload_name,
                str(L.ops.aten.detach.default), L.ops.aten.ones_like.default(out).tolist()]
    assert same_as_torch(scenario)[:4] == ["aten::mm", "mm.default", "aten.mm",
                                           "aten.mm.default"]


def test_a_mode_sees_a_compiled_functions_ops_once_per_trace():
    log = []
    f = hookgrad.compile(lambda x: (x * 2).sin())
    x = hookgrad.ones(3)
    with _logging_mode(hookgrad, log):
        f(x)
        f(x)
    assert [e[0] for e in log] == ["aten.mul.Tensor", "aten.sin.default"]


def _sac(L, allow_mutation):
    ckpt = _mod(L, "utils.checkpoint")

    def policy(ctx, op, *args, **kwargs):
        return ckpt.CheckpointPolicy.MUST_SAVE if op == L.ops.aten.sin.default \
            else ckpt.CheckpointPolicy.PREFER_RECOMPUTE
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, policy,
                                   allow_cache_entry_mutation=allow_mutation)
    x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
    out = ckpt.checkpoint(lambda x: x.sin().mul_(2).cos().exp(), x, use_reentrant=False,
                          context_fn=context_fn)
    return x, out


def test_selective_checkpoint_saves_what_the_policy_says_and_checks_its_version():
    def scenario(L):
        x, out = _sac(L, False)
        with pytest.raises(RuntimeError, match="Tensor cached during selective activation "
                                               "checkpoint has been mutated"):
            out.sum().backward()
        x, out = _sac(L, True)
        out.sum().backward()
        return x.grad.tolist()
    same_as_torch(scenario)


def test_selective_checkpoint_list_must_hold_overloads():
    def scenario(L):
        ckpt = _mod(L, "utils.checkpoint")
        with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload"):
            ckpt.create_selective_checkpoint_contexts([L.ops.aten.mm])
        return True
    same_as_torch(scenario)


def test_selective_checkpoint_keeps_a_custom_operators_outputs():
    # a custom operator reaches the modes below autograd, as torch.ops.<ns>.<name>.default
    def scenario(L):
        calls = [0]
        with L.library._scoped_library("hg_sac_test", "FRAGMENT"):
            @L.library.custom_op("hg_sac_test::sin_and_two", mutates_args=())
            def sin_and_two(x: L.Tensor) -> tuple[L.Tensor, int]:
                calls[0] += 1
                return x.sin(), 2

            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            def backward(ctx, grad, _unused):
                return grad * ctx.saved_tensors[0].cos()
            L.library.register_autograd("hg_sac_test::sin_and_two", backward,
                                        setup_context=setup_context)
            ckpt = _mod(L, "utils.checkpoint")
            context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts,
                                           [L.ops.hg_sac_test.sin_and_two.default])
            x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
            out = ckpt.checkpoint(lambda x: (L.ops.hg_sac_test.sin_and_two(x)[0] * x).sin(),
                                  x, use_reentrant=False, context_fn=context_fn)
            grad, = L.autograd.grad(out.sum(), (x,))
            return [calls[0], grad.tolist()]
    assert same_as_torch(scenario)[0] == 1  # not run again in backward
