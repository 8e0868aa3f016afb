"""Interception as PyTorch has it: dispatch modes (``TorchDispatchMode``) see each op as
its ATen overload, ``torch.ops.aten`` names the op table's rows, ``FlopCounterMode``
counts as PyTorch's, and selective activation checkpointing keeps the ops a policy
chooses. Where hookgrad's ops are coarser than ATen's (docs/differences.md), the
comparisons keep what exists in both: FLOP totals, the ops both libraries run."""
import functools
import importlib

import numpy as np
import pytest

import hookgrad
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
            self.c2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
            self.fc = nn.Linear(8 * 2 * 2, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
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


@pytest.mark.parametrize("make", [_cnn, _block], ids=["cnn", "transformer_block"])
def test_flop_counts_equal_pytorchs_forward_and_backward(make):
    def scenario(L):
        L.manual_seed(0)
        model, shape = make(L)
        x = _input(L, shape)
        counter = _mod(L, "utils.flop_counter").FlopCounterMode
        with counter(display=False) as forward:
            model(x)
        with counter(display=False) as both:
            model(x).sum().backward()
        return [forward.get_total_flops(), both.get_total_flops()]
    fwd, total = same_as_torch(scenario)
    assert fwd > 0 and total > 2 * fwd  # backward products: one per operand needing grad


def _nodes(log):
    """The nodes whose backward ran ops, in order (each once per run of ops)."""
    out = []
    for _, node in log:
        if node not in (None, "AccumulateGrad") and (not out or out[-1] != node):
            out.append(node)
    return out


@pytest.mark.parametrize("make", [_cnn, _block], ids=["cnn", "transformer_block"])
def test_dispatch_mode_log_has_pytorchs_ops_in_pytorchs_order(make):
    # hookgrad's rows are coarser in places (a node's backward is one op): the forward's
    # ops that both libraries run come in the same order, and backward runs the
    # derivatives that compute (products, norms, activations) under the same nodes in the
    # same order (hookgrad's reshape records ReshapeAliasBackward0, PyTorch's a view)
    logs = {}
    for L in (hookgrad, torch) if torch is not None else (hookgrad,):
        L.manual_seed(0)
        model, shape = make(L)
        x = _input(L, shape)
        forward, backward = [], []
        with _logging_mode(L, forward):
            y = model(x).sum()
        with _logging_mode(L, backward):
            y.backward()
        logs[L.__name__] = [f for f, _ in forward], _nodes(backward)
    hg_ops, hg_nodes = logs["hookgrad"]
    assert hg_ops[-1] == "aten.sum.default" and hg_nodes[0] == "SumBackward0"
    if torch is None:
        return
    torch_ops, torch_nodes = logs["torch"]
    ops = set(hg_ops) & set(torch_ops)
    nodes = {"AddmmBackward0", "BmmBackward0", "ConvolutionBackward0", "SoftmaxBackward0",
             "NativeLayerNormBackward0", "GeluBackward0", "ReluBackward0", "DivBackward0",
             "MaxPool2DWithIndicesBackward0"}
    assert {"aten.addmm.default", "aten.t.default"} <= ops
    assert [f for f in hg_ops if f in ops] == [f for f in torch_ops if f in ops]
    assert [n for n in hg_nodes if n in nodes] == [n for n in torch_nodes if n in nodes]


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


def test_aten_overloads_are_named_and_callable_as_pytorchs():
    def scenario(L):
        mm = L.ops.aten.mm.default
        out = mm(L.ones(2, 3), L.ones(3, 2))
        mul = L.ops.aten.mul.Tensor
        return [mm.name(), mm.__name__, str(mm.overloadpacket), str(mm),
                mm == L.ops.aten.mm.default, out.tolist(), str(L.ops.aten.var_mean.correction),
                mul.name(), mul._schema.name, mul._schema.overload_name]
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
