"""Making tensors compiles no XLA program: factories, random draws, parameter init and an
optimizer's first state go through NumPy and ``device_put`` (a compilation per new shape
dominated a fresh process's first training steps; benchmarks/first_steps.py measures it).
Random draws stay reproducible under ``manual_seed``."""
import collections
import threading
import traceback

import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _random
from tests.differential import raises_as_torch, same_as_torch


@pytest.fixture
def compilations():
    seen = collections.Counter()
    me = threading.get_ident()

    def listen(event, duration_secs=0.0, **kw):
        # this thread's: the background compiler may still be finishing an earlier
        # test's program (tiered execution)
        if event.endswith("backend_compile_duration") and threading.get_ident() == me:
            seen["n"] += 1
            # where it came from (hookgrad's frames), for the failure's message
            seen[" < ".join(f"{f.name}:{f.lineno}" for f in traceback.extract_stack()[::-1]
                            if "hookgrad" in f.filename)] += 1
    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    jax.monitoring.unregister_event_duration_listener(listen)


# shapes no other test uses, so no program could come from an earlier test's cache
@pytest.mark.parametrize("make", [
    lambda: hg.tensor([[1.0, 2.0, 3.0]] * 7),
    lambda: hg.tensor(np.arange(13)),
    lambda: hg.from_numpy(np.ones((3, 11), np.float32)),
    lambda: hg.zeros(5, 17), lambda: hg.ones(17, 5, dtype=hg.int64),
    lambda: hg.full((2, 19), 3.5),
    lambda: hg.rand(3, 23), lambda: hg.randn(23, 3, dtype=hg.float64),
    lambda: hg.randint(0, 9, (29,)), lambda: hg.randperm(31),
    lambda: hg.nn.init.trunc_normal_(hg.empty(37, 2)),
    lambda: hg.nn.Linear(41, 3), lambda: hg.nn.Conv2d(2, 43, 3),
    lambda: hg.arange(3, 50), lambda: hg.arange(53, device="cpu"),
], ids=lambda f: "")
def test_creating_tensors_compiles_nothing(make, compilations):
    hg.manual_seed(0)
    # the generator's own key program, once per process: its first HOST_SPLITS splits run
    # on the host, then a compiled split takes over (without this, the case that crossed
    # that count, wherever a long run had left it, compiled it)
    for _ in range(_random.HOST_SPLITS + 1):
        hg.random.next_key()
    compilations.clear()
    make()
    assert compilations["n"] == 0, [k for k in compilations if k != "n"]


def test_host_draws_are_reproducible_and_distributed_as_asked():
    hg.manual_seed(7)
    a = [hg.rand(4000), hg.randn(4000), hg.randint(3, 6, (4000,))]
    hg.manual_seed(7)
    b = [hg.rand(4000), hg.randn(4000), hg.randint(3, 6, (4000,))]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    u, n, i = (t.numpy() for t in a)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.03
    assert abs(n.mean()) < 0.06 and abs(n.std() - 1) < 0.05
    assert set(np.unique(i)) == {3, 4, 5} and i.dtype == np.int64
    t = hg.nn.init.trunc_normal_(hg.empty(4000), a=-1.0, b=0.5).numpy()
    assert -1.0 <= t.min() and t.max() <= 0.5
    assert sorted(hg.randperm(50).tolist()) == list(range(50))


def test_an_optimizers_first_step_initializes_its_state_in_one_program(compilations):
    m = hg.nn.Sequential(hg.nn.Linear(3, 47), hg.nn.Linear(47, 2))
    opt = hg.optim.AdamW(m.parameters())
    for p in m.parameters():
        p.grad = hg.ones_like(p)
    compilations.clear()
    opt.step()
    assert compilations["n"] <= 2  # the states' init, then the update
    assert set(opt.state[m[0].weight]) == {"step", "exp_avg", "exp_avg_sq"}


@pytest.mark.parametrize("args, kw", [((7,), {}), ((2, 11, 3), {}), ((10, 0, -3), {}),
                                      ((0,), {}), ((1, 6), {"dtype": "int32"}),
                                      ((1, 6), {"dtype": "int8", "device": "cpu"}),
                                      ((2.5,), {}), ((0, 2, 0.5), {"dtype": "float64"})])
def test_arange_is_torchs(args, kw):
    # integer positions are made on the host (no JAX dispatch), the others by JAX: the
    # same values and dtypes either way, and nothing pinned to a device
    made = {}

    def make(L):
        kws = {k: getattr(L, v) if k == "dtype" else v for k, v in kw.items()}
        t = made[L] = L.arange(*args, **kws)
        return t.tolist(), str(t.dtype).split(".")[-1]
    same_as_torch(make)
    assert not made[hg]._data._committed


@pytest.mark.parametrize("args, match", [
    ((0, 5, 0), r"^step must be nonzero$"),
    ((0.0, 1.0, 0.0), r"^step must be nonzero$"),
    ((0, 5, -1), r"^upper bound and lower bound inconsistent with step sign$"),
    ((5, 0, 1), r"^upper bound and lower bound inconsistent with step sign$"),
    ((0, float("inf"), 1), r"^unsupported range: 0 -> inf$"),
    ((0, float("nan")), r"^unsupported range: 0 -> nan$"),
])
def test_arange_refuses_a_range_as_pytorch(args, match):
    raises_as_torch(lambda L: L.arange(*args), RuntimeError, match)


def test_a_factory_on_the_cpu_named_keeps_its_array_where_it_is(monkeypatch):
    # ``full(..., device=x.device)`` per generate step: on the CPU, where uncommitted arrays
    # live, nothing is moved and the device is not looked up again (no ``devices()`` set)
    import torch
    from jax._src.array import ArrayImpl
    x = hg.ones(2)
    x._data  # noqa: B018 - an XLA-held model tensor (a small ``ones`` is held on the host)
    d = x.device
    asked = []
    real = ArrayImpl.devices
    monkeypatch.setattr(ArrayImpl, "devices", lambda a: asked.append(1) or real(a))
    made = {"full": lambda L, d: L.full((2,), False, device=d),
            "ones": lambda L, d: L.ones(2, 3, device=d),
            "zeros": lambda L, d: L.zeros((3,), dtype=L.int64, device=d),
            "cpu:0": lambda L, d: L.full((2,), 1.5, device=L.device("cpu", 0)),
            "arange": lambda L, d: L.arange(2, 7, device=d),  # made in NumPy, then put
            "arange uint8": lambda L, d: L.arange(4, dtype=L.uint8, device=d)}
    for name, make in made.items():
        t = make(hg, d)
        want = make(torch, torch.device("cpu"))
        assert t.tolist() == want.tolist() and str(t.dtype) == str(want.dtype).replace(
            "torch", "hookgrad"), name
        assert t._data._committed is False and str(t.device) == "cpu"
    assert asked == []
    # a configured default device takes the general way, which names it
    with jax.default_device(jax.devices("cpu")[0]):
        t = hg.full((2,), 3, device=d)
        assert t.tolist() == [3, 3] and t.device == d


def test_small_factories_are_held_on_the_host_each_with_its_own_memory():
    """generate's stopping criteria make ``full((B,), False, device=d)`` and
    ``full((B,), is_done, ...)`` each step and combine them with ``|``: small factories
    are held on the host, as ``tensor()``'s copies are, so those ops transfer nothing. Each
    is its own memory (a write into one shows in no other, as PyTorch's), and XLA ops and
    autograd read their values."""
    from hookgrad._host_value import Host

    def run(L):
        d = L.ones(1).device
        made = [L.full((2,), False, device=d), L.full((2,), True, dtype=L.bool, device=d),
                L.zeros(2, 3), L.ones(3, dtype=L.int64), L.empty(2).zero_(),
                L.arange(5), L.arange(2, 9, 2, device=d), L.full((2,), 7)]
        assert L is not hg or all(type(t._arr) is Host for t in made[:4] + made[5:])
        done = made[0] | made[1]
        a, b = L.zeros(3), L.zeros(3)
        a[1] = 4.0  # a write: the other zeros stay zeros
        a += 1.0
        w = L.ones(3, requires_grad=True)
        (w * b + w * made[3]).sum().backward()  # an XLA op and autograd read them
        return [t.tolist() for t in made] + [done.tolist(), a.tolist(), b.tolist(),
                                             w.grad.tolist(), (L.arange(4) * 2.5).tolist()]
    same_as_torch(run)


_NEGATIVE = r"^Trying to create tensor with negative dimension -1: \[-1\]$"
_NOT_A_DTYPE = r"\(\): argument 'dtype' must be torch.dtype, not str$"


# bad arguments get PyTorch's exception and words, not NumPy's or JAX's (or a result)
@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.zeros(-1), RuntimeError, r"^zeros: Dimension size must be non-negative\.$"),
    (lambda L: L.zeros((2, -1), dtype=L.int64), RuntimeError,
     r"^zeros: Dimension size must be non-negative\.$"),
    (lambda L: L.zeros(-1, device="meta"), RuntimeError, _NEGATIVE),
    (lambda L: L.ones(-1), RuntimeError, _NEGATIVE),
    (lambda L: L.ones(2, -3), RuntimeError,
     r"^Trying to create tensor with negative dimension -3: \[2, -3\]$"),
    (lambda L: L.empty(-1), RuntimeError, _NEGATIVE),
    (lambda L: L.full((-1,), 1.0), RuntimeError, _NEGATIVE),
    (lambda L: L.rand(-1), RuntimeError, _NEGATIVE),
    (lambda L: L.randn(-1), RuntimeError, _NEGATIVE),
    (lambda L: L.randint(0, 5, (-1,)), RuntimeError, _NEGATIVE),
    (lambda L: L.rand(-1, device="meta"), RuntimeError, _NEGATIVE),
    (lambda L: L.randn(2, -1, device="meta"), RuntimeError,
     r"^Expected cond to be True, but got False\. \(Could this error message be improved\?"),
    (lambda L: L.tensor([1.0, None], dtype=L.float32), TypeError,
     r"^must be real number, not NoneType$"),
    (lambda L: L.tensor(None, dtype=L.complex64), TypeError, r"^must be real number, not NoneType$"),
    (lambda L: L.tensor([[2], [None]], dtype=L.int64), TypeError,
     r"^'NoneType' object cannot be interpreted as an integer$"),
    (lambda L: L.tensor([None], dtype=L.bool), TypeError,
     r"^'NoneType' object cannot be interpreted as an integer$"),
    (lambda L: L.arange(5, dtype="float"), TypeError,
     r"^arange\(\) received an invalid combination of arguments - got \(int, dtype=str\), but "
     r"expected one of:\n \* \(Number end, \*, Tensor out = None, torch\.dtype dtype = None"),
    (lambda L: L.arange(0, 5.0, dtype="float"), TypeError,
     r"^arange\(\) received an invalid combination of arguments - got \(int, float, dtype=str\)"),
    (lambda L: L.ones(2).new_zeros(-1), RuntimeError, _NEGATIVE),
    (lambda L: L.eye(-1), RuntimeError, r"^n must be greater or equal to 0, got -1$"),
    (lambda L: L.eye(2, -1), RuntimeError, r"^m must be greater or equal to 0, got -1$"),
    (lambda L: L.linspace(0, 1, -1), RuntimeError, r"^number of steps must be non-negative$"),
    (lambda L: L.logspace(0, 1, -1), RuntimeError, r"^number of steps must be non-negative$"),
    (lambda L: L.randint(5, 2), TypeError,
     r"^randint\(\): argument 'size' \(position 2\) must be tuple of ints, not int$"),
    (lambda L: L.randint(5, 2, (3,)), RuntimeError,
     r"^random_ expects 'from' to be less than 'to', but got from=5 >= to=2$"),
    (lambda L: L.randint(0, (3,)), RuntimeError,
     r"^random_ expects 'from' to be less than 'to', but got from=0 >= to=0$"),
    (lambda L: L.full((2,), None), TypeError,
     r"^full\(\): argument 'fill_value' \(position 2\) must be Number, not NoneType$"),
    (lambda L: L.full((2,), "a"), TypeError,
     r"^full\(\): argument 'fill_value' \(position 2\) must be Number, not str$"),
    (lambda L: L.full((2,), [1]), TypeError,
     r"^full\(\): argument 'fill_value' \(position 2\) must be Number, not list$"),
    (lambda L: L.full_like(L.ones(2), None), TypeError,
     r"^full_like\(\): argument 'fill_value' \(position 2\) must be Number, not NoneType$"),
    (lambda L: L.ones(2).new_full((2,), None), TypeError,
     r"^new_full\(\): argument 'fill_value' \(position 2\) must be Number, not NoneType$"),
    (lambda L: L.ones(2).new_full((-1,), 1.0), RuntimeError, _NEGATIVE),
    (lambda L: L.tensor("a"), TypeError, r"^new\(\): invalid data type 'str'$"),
    (lambda L: L.tensor([1, "a"]), TypeError, r"^new\(\): invalid data type 'str'$"),
    (lambda L: L.tensor(["a"]), ValueError, r"^too many dimensions 'str'$"),
    (lambda L: L.tensor(None), RuntimeError, r"^Could not infer dtype of NoneType$"),
    (lambda L: L.tensor([1, None]), RuntimeError, r"^Could not infer dtype of NoneType$"),
    (lambda L: L.tensor([[1, 2], [3]]), ValueError,
     r"^expected sequence of length 2 at dim 1 \(got 1\)$"),
    (lambda L: L.tensor([[1, 2], [3]], dtype=L.float32), ValueError,
     r"^expected sequence of length 2 at dim 1 \(got 1\)$"),
    (lambda L: L.tensor([[1, 2], 3]), TypeError, r"^not a sequence$"),
    (lambda L: L.tensor([1, [2, 3]]), TypeError,
     r"^'list' object cannot be interpreted as an integer$"),
    (lambda L: L.tensor([1.0, [2, 3]]), TypeError, r"^must be real number, not list$"),
    (lambda L: L.tensor([1.0], dtype="float"), TypeError, "^tensor" + _NOT_A_DTYPE),
    (lambda L: L.zeros(2, dtype="float"), TypeError, "^zeros" + _NOT_A_DTYPE),
    (lambda L: L.empty(2, dtype="float"), TypeError, "^empty" + _NOT_A_DTYPE),
    (lambda L: L.full((2,), 1.0, dtype="float"), TypeError, "^full" + _NOT_A_DTYPE),
    (lambda L: L.zeros_like(L.ones(2), dtype="float"), TypeError, "^zeros_like" + _NOT_A_DTYPE),
    (lambda L: L.ones(2).new_zeros(2, dtype="float"), TypeError, "^new_zeros" + _NOT_A_DTYPE),
    # PyTorch's words differ where the factory has several signatures ("invalid combination")
    (lambda L: L.eye(2, dtype="float"), TypeError, r"^eye\(\)"),
    (lambda L: L.linspace(0, 1, 2, dtype="float"), TypeError, r"^linspace\(\)"),
    (lambda L: L.rand(2, dtype="float"), TypeError, r"^rand\(\)"),
    (lambda L: L.zeros_like([1, 2]), TypeError,
     r"^zeros_like\(\): argument 'input' \(position 1\) must be Tensor, not list$"),
    (lambda L: L.ones_like(np.ones(2)), TypeError,
     r"^ones_like\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray$"),
    (lambda L: L.full_like([1, 2], 1), TypeError,
     r"^full_like\(\): argument 'input' \(position 1\) must be Tensor, not list$"),
    (lambda L: L.randn_like([1, 2]), TypeError,
     r"^randn_like\(\): argument 'input' \(position 1\) must be Tensor, not list$"),
])
def test_bad_arguments_raise_pytorchs_errors(call, exc, match):
    raises_as_torch(call, exc, match)
    with pytest.raises(exc) as raised:  # PyTorch's own class, not a subclass of hookgrad's
        call(hg)
    assert type(raised.value) is exc


def test_what_the_factories_take_still_runs():
    same_as_torch(lambda L: [
        L.full((2,), np.float64(1.5)).tolist(), L.full((2,), L.tensor(2.0)).tolist(),
        L.full((2,), 1j).tolist(), L.tensor([[1, 2], [3, 4]]).tolist(),
        L.tensor([1, 2.5, True]).tolist(), L.zeros(0, 3).shape == (0, 3),
        L.randint(3, (2,)).shape == (2,), L.eye(0).shape == (0, 0),
        L.linspace(0, 1, 0).shape == (0,), L.ones(2).new_full((2,), 3).tolist(),
        L.ones(2).new_full(size=(1,), fill_value=2.0).tolist()])
