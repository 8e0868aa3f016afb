"""``torch.autocast`` on the CPU: which ops run in bfloat16, which in float32, the casts the
graph records, the cache of cast weights, nesting, the decorator, and autocast inside
``hookgrad.compile`` — each against PyTorch's CPU autocast where it is installed."""
import threading
import warnings

import numpy as np
import pytest

import hookgrad
from hookgrad._ops import autocast as autocast_table
from tests.differential import graph, py, same_as_torch

try:
    import torch
except ImportError:
    torch = None


def _dt(dtype):
    return str(dtype).split(".")[-1]


def _data(L, *shape, seed=0):
    rng = np.random.default_rng(seed)
    return L.tensor(rng.standard_normal(shape).astype(np.float32))


# (name, fn(L, F, x)): x is a (4, 4) float32 or bfloat16 Tensor
OPS = [
    ("mm", lambda L, F, x: L.mm(x, x)),
    ("matmul", lambda L, F, x: x @ x),
    ("bmm", lambda L, F, x: L.bmm(x[None], x[None])),
    ("addmm", lambda L, F, x: L.addmm(x, x, x)),
    ("linear", lambda L, F, x: F.linear(x, x)),
    ("conv2d", lambda L, F, x: F.conv2d(x[None, None], x[None, None])),
    ("conv_transpose2d", lambda L, F, x: F.conv_transpose2d(x[None, None], x[None, None])),
    ("prelu", lambda L, F, x: F.prelu(x, L.ones(1, dtype=x.dtype))),
    ("sdpa", lambda L, F, x: F.scaled_dot_product_attention(x[None], x[None], x[None])),
    ("mv (not on the CPU list)", lambda L, F, x: L.mv(x, x[0])),
    ("softmax (not on the CPU list)", lambda L, F, x: x.softmax(-1)),
    ("relu", lambda L, F, x: x.relu()),
    ("sum", lambda L, F, x: x.sum()),
    ("prod", lambda L, F, x: x.prod()),
    ("mse_loss", lambda L, F, x: F.mse_loss(x, x)),
    ("l1_loss", lambda L, F, x: F.l1_loss(x, x)),
    ("smooth_l1_loss", lambda L, F, x: F.smooth_l1_loss(x, x)),
    ("huber_loss", lambda L, F, x: F.huber_loss(x, x)),
    ("nll_loss", lambda L, F, x: F.nll_loss(x, L.tensor([0, 1, 2, 3]))),
    ("cross_entropy", lambda L, F, x: F.cross_entropy(x, L.tensor([0, 1, 2, 3]))),
    ("binary_cross_entropy", lambda L, F, x: F.binary_cross_entropy(x.sigmoid(), x.sigmoid())),
    ("bce_with_logits", lambda L, F, x: F.binary_cross_entropy_with_logits(x, x.sigmoid())),
    ("kl_div", lambda L, F, x: F.kl_div(x, x, reduction="batchmean")),
    ("avg_pool3d", lambda L, F, x: F.avg_pool3d(x[None, None, None].expand(1, 1, 2, 4, 4), 2)),
    ("avg_pool2d (not listed)", lambda L, F, x: F.avg_pool2d(x[None, None], 2)),
    ("reflect pad 2d", lambda L, F, x: F.pad(x[None, None], (1, 1, 1, 1), mode="reflect")),
    ("constant pad (not listed)", lambda L, F, x: F.pad(x, (1, 1))),
    ("trace", lambda L, F, x: L.trace(x)),
    ("layer_norm (not on the CPU list)", lambda L, F, x: F.layer_norm(x, (4,))),
]


@pytest.mark.parametrize("name,fn", OPS, ids=[n for n, _ in OPS])
def test_cpu_autocast_runs_each_op_in_its_listed_dtype(name, fn):
    def program(L):
        F = L.nn.functional
        x = _data(L, 4, 4)
        with L.autocast("cpu"):
            return [_dt(fn(L, F, x).dtype), _dt(fn(L, F, x.bfloat16()).dtype)]

    got = same_as_torch(program)
    lower = name in {"mm", "matmul", "bmm", "addmm", "linear", "conv2d", "conv_transpose2d",
                     "prelu", "sdpa"}
    assert got[0] == ("bfloat16" if lower else "float32")


def test_cat_and_stack_promote_to_the_widest_input():
    def program(L):
        x = _data(L, 2, 2)
        with L.autocast("cpu"):
            return [_dt(L.cat([x, x.bfloat16()]).dtype), _dt(L.stack([x.bfloat16(), x]).dtype),
                    _dt(L.cat([x.bfloat16(), x.bfloat16()]).dtype)]

    assert same_as_torch(program) == ["float32", "float32", "bfloat16"]


def test_the_graph_records_the_casts_as_pytorch_does():
    def program(L):
        F = L.nn.functional
        x = _data(L, 3, 4).requires_grad_()
        w = _data(L, 5, 4, seed=1).requires_grad_()
        b = _data(L, 5, seed=2).requires_grad_()
        with L.autocast("cpu"):
            y = F.linear(x, w, b)
            loss = F.mse_loss(y, L.zeros(3, 5))
        loss.backward()
        return {"graph": graph(loss),
                "dtypes": [_dt(t.dtype) for t in (y, loss, x.grad, w.grad, b.grad)]}

    got = same_as_torch(program)
    assert got["dtypes"] == ["bfloat16", "float32", "float32", "float32", "float32"]
    assert got["graph"][:3] == ["MseLossBackward0", "  ToCopyBackward0", "    AddmmBackward0"]


def test_a_weight_used_twice_is_cast_once_and_the_cache_ends_with_the_region():
    def program(L):
        F = L.nn.functional
        w = _data(L, 5, 4).requires_grad_()
        x = _data(L, 3, 4, seed=1)
        with L.autocast("cpu"):
            a, b = F.linear(x, w), F.linear(x, w)
            first = a.grad_fn.next_functions[1][0].next_functions[0][0]
            shared = first is b.grad_fn.next_functions[1][0].next_functions[0][0]
            with L.autocast("cpu", cache_enabled=False):
                c = F.linear(x, w)
            uncached = c.grad_fn.next_functions[1][0].next_functions[0][0] is first
        with L.autocast("cpu"):
            d = F.linear(x, w)
        fresh = d.grad_fn.next_functions[1][0].next_functions[0][0] is first
        return [first.name(), shared, uncached, fresh]

    assert same_as_torch(program) == ["ToCopyBackward0", True, False, False]


def test_values_and_gradients_of_a_small_model_follow_pytorch_within_bfloat16():
    def program(L):
        nn = L.nn
        L.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
        rng = np.random.default_rng(0)
        with L.no_grad():
            for p in model.parameters():
                p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        x = _data(L, 2, 2, 6, 6)
        with L.autocast("cpu"):
            out = model(x)
            loss = L.nn.functional.cross_entropy(out, L.tensor([0, 2]))
        loss.backward()
        return {"out": py(out.float()), "loss": py(loss), "grad": py(model[0].weight.grad),
                "dtypes": [_dt(out.dtype), _dt(model[0].weight.grad.dtype)]}

    got = same_as_torch(program, tol=3e-2)
    assert got["dtypes"] == ["bfloat16", "float32"]


def test_nesting_disabling_and_the_decorator():
    def program(L):
        x = _data(L, 2, 2)
        seen = []
        with L.autocast("cpu"):
            seen.append(str((x @ x).dtype))
            with L.autocast("cpu", enabled=False):
                seen.append(str((x @ x).dtype))
                seen.append(L.is_autocast_enabled("cpu"))
            with L.autocast("cpu", dtype=L.float16):
                seen.append(str((x @ x).dtype))
            seen.append(str(L.get_autocast_dtype("cpu")))
        seen.append(L.is_autocast_enabled("cpu"))

        @L.autocast("cpu")
        def product(a):
            return a @ a
        seen.append(str(product(x).dtype))
        seen.append(str((x @ x).dtype))
        return [s.split(".")[-1] if isinstance(s, str) else s for s in seen]

    assert same_as_torch(program) == ["bfloat16", "float32", False, "float16", "bfloat16",
                                      False, "bfloat16", "float32"]


def test_explicit_dtype_and_integers_are_not_cast():
    def program(L):
        x = _data(L, 3, 3)
        ints = L.ones(2, 2, dtype=L.int32)
        with L.autocast("cpu"):
            return [_dt(L.mm(ints, ints).dtype), _dt(x.bfloat16().prod(dtype=L.bfloat16).dtype),
                    _dt(L.cat([ints, ints]).dtype)]

    assert same_as_torch(program) == ["int32", "bfloat16", "int32"]


def test_autocast_state_is_per_thread():
    seen = []
    with hookgrad.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(hookgrad.is_autocast_enabled("cpu")))
        t.start()
        t.join()
        seen.append(hookgrad.is_autocast_enabled("cpu"))
    assert seen == [False, True]


def test_bad_device_types_and_dtypes_fail_or_warn_as_in_pytorch():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        hookgrad.autocast("tpu")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        hookgrad.autocast(0)
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of") as rec:
        ctx = hookgrad.autocast("cpu", dtype=hookgrad.float32)
    assert rec[0].filename == __file__
    with ctx:
        assert not hookgrad.is_autocast_enabled("cpu")
    if not hookgrad.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available") as rec:
            hookgrad.autocast("cuda")
        assert rec[0].filename == __file__


def test_deprecated_spellings_warn_at_the_users_line():
    with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated") \
            as rec:
        assert hookgrad.is_autocast_cpu_enabled() is False
    assert rec[0].filename == __file__
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated") \
            as rec:
        ctx = hookgrad.cpu.amp.autocast()
    assert rec[0].filename == __file__
    with ctx:
        assert hookgrad.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # no GPU: it disables itself
            hookgrad.cuda.amp.autocast()


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_the_state():
    def program(L):
        seen = []

        class Square(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, a):
                seen.append([str(a.dtype), L.is_autocast_enabled("cpu")])
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                seen.append(L.is_autocast_enabled("cpu"))
                a, = ctx.saved_tensors
                return 2 * a * g

        x = _data(L, 3).bfloat16().requires_grad_()
        with L.autocast("cpu"):
            y = Square.apply(x)
        y.sum().backward()
        return [[s if isinstance(s, bool) else [s[0].split(".")[-1], s[1]] for s in seen],
                str(x.grad.dtype).split(".")[-1]]

    assert same_as_torch(program) == [[["float32", False], False], "bfloat16"]


def test_autocast_inside_a_compiled_step_equals_eager():
    def run(compiled):
        hookgrad.manual_seed(0)
        model = hookgrad.nn.Sequential(hookgrad.nn.Linear(4, 8), hookgrad.nn.ReLU(),
                                       hookgrad.nn.Linear(8, 2))
        opt = hookgrad.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            with hookgrad.autocast("cpu"):
                out = model(x)
                loss = hookgrad.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            return loss.detach(), out.dtype

        if compiled:
            step = hookgrad.compile(step)
        x, y = _data(hookgrad, 6, 4), hookgrad.tensor([0, 1, 1, 0, 1, 0])
        losses = [step(x, y) for _ in range(3)]
        return ([float(l) for l, _ in losses], [str(d) for _, d in losses],
                model[0].weight.detach().numpy())

    eager, compiled = run(False), run(True)
    assert eager[1] == compiled[1] == ["hookgrad.bfloat16"] * 3
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-2)
    np.testing.assert_allclose(compiled[2], eager[2], rtol=1e-2, atol=1e-3)


def test_every_listed_name_is_a_pytorch_op():
    # a row naming no PyTorch function would be a typo that casts nothing
    if torch is None:
        pytest.skip("PyTorch not installed")
    spaces = (torch, torch.nn.functional, torch.linalg, torch.Tensor)
    missing = sorted(n for n in autocast_table.LISTED
                     if n != "pad" and not any(hasattr(s, n) for s in spaces))
    assert missing == []
    assert all(n in autocast_table.POLICY["cpu"] or n in autocast_table.POLICY["cuda"]
               or n in autocast_table.BANNED["cuda"] for n in autocast_table.LISTED)


def test_warnings_inside_listed_functions_point_at_the_callers_line():
    # autocast's wrapper stands between the caller and a listed function: warnings look
    # through it, with autocast on and off
    F = hookgrad.nn.functional
    x = hookgrad.ones(3, 4)
    calls = [lambda: F.mse_loss(x, hookgrad.ones(4)), lambda: F.kl_div(x, x),
             lambda: F.softmax(x), lambda: F.grid_sample(hookgrad.ones(1, 1, 3, 3),
                                                         hookgrad.zeros(1, 2, 2, 2))]
    for enabled in (False, True):
        with hookgrad.autocast("cpu", enabled=enabled):
            for call in calls:
                with pytest.warns(UserWarning) as rec:
                    call()
                assert [(r.filename, r.lineno) for r in rec] == [
                    (__file__, call.__code__.co_firstlineno)] * len(rec)
