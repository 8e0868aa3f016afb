"""An out-of-range index inside ``hookgrad.compile`` raises PyTorch's error after the run,
with the state as it was: parameters, ``.grad``, optimizer state, buffers, versions and
the PRNG key (``hookgrad._compile.checks``). Eagerly the same ops raise the same errors
(checked against PyTorch here for indices with several bad entries: the first is named)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad._compile import checks as _checks
from tests.differential import same_as_torch

X = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
FEAT = np.array([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.25], [0.0, 1.0]], np.float32)


def _ones(L, *shape):
    return L.ones(*shape)


OPS = [  # (id, op(L, w, idx), a valid index, a bad one, error type, message)
    ("gather", lambda L, w, i: w.gather(0, i), [[0, 1], [2, 0]], [[0, 1], [3, 0]],
     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("scatter", lambda L, w, i: w.scatter(0, i, _ones(L, 2, 2)), [[0, 1], [2, 2]],
     [[0, 1], [3, 2]], RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("scatter-value", lambda L, w, i: w.scatter(1, i, 2.0), [[1], [0]], [[1], [-1]],
     RuntimeError, "index -1 is out of bounds for dimension 1 with size 2"),
    ("scatter_add", lambda L, w, i: w.scatter_add(0, i, _ones(L, 2, 2)), [[0, 1], [2, 2]],
     [[0, 1], [2, 5]], RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    ("scatter_reduce", lambda L, w, i: w.scatter_reduce(0, i, _ones(L, 2, 2) * 3, "amax"),
     [[0, 1], [2, 2]], [[-2, 1], [2, 2]], RuntimeError,
     "index -2 is out of bounds for dimension 0 with size 3"),
    ("index_select", lambda L, w, i: w.index_select(0, i), [2, 0], [2, 3], IndexError,
     "index out of range in self"),
    ("index_add", lambda L, w, i: w.index_add(0, i, _ones(L, 2, 2)), [2, 0], [0, 3],
     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_copy", lambda L, w, i: w.index_copy(0, i, _ones(L, 2, 2)), [2, 0], [3, 0],
     IndexError, "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
    ("index_fill", lambda L, w, i: w.index_fill(0, i, 0.5), [-1, 0], [0, -4], IndexError,
     "index -4 is out of bounds for dimension 0 with size 3"),
    ("take", lambda L, w, i: L.take(w, i), [5, -6, 0], [0, 6], IndexError,
     "out of range: tried to access index 6 on a tensor of 6 elements."),
    # (with ``dim`` given, PyTorch 2.13's CPU kernel reads out of range unchecked)
    ("take_along_dim", lambda L, w, i: L.take_along_dim(w, i), [5, 0, 3], [1, 6],
     RuntimeError, "index 6 is out of bounds for dimension 0 with size 6"),
    ("embedding", lambda L, w, i: L.nn.functional.embedding(i, w), [[0, 2], [1, 1]],
     [[0, 3], [1, 1]], IndexError, "index out of range in self"),
    ("getitem", lambda L, w, i: w[i], [2, -1, 0], [0, -4], IndexError,
     "index -4 is out of bounds for dimension 0 with size 3"),
    ("getitem-dim1", lambda L, w, i: w[:, i], [1, 0], [2], IndexError,
     "index 2 is out of bounds for dimension 1 with size 2"),
    ("setitem", lambda L, w, i: _setitem(w * 1, i), [0, 2], [3], IndexError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_put_", lambda L, w, i: (w * 1).index_put_((i,), L.zeros(2), accumulate=True),
     [0, 0], [0, 5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ("one_hot", lambda L, w, i: L.nn.functional.one_hot(i, 3).to(w.dtype) @ w, [0, 2, 1],
     [0, 3], RuntimeError, "Class values must be smaller than num_classes."),
    ("one_hot-negative", lambda L, w, i: L.nn.functional.one_hot(i, 3).to(w.dtype) @ w,
     [0, 2], [5, -1], RuntimeError, "Class values must be non-negative."),
    ("cross_entropy", lambda L, w, i: L.nn.functional.cross_entropy(
        L.tensor(FEAT) @ w.T, i), [0, 2, -100, 1], [0, 3, -100, 1], IndexError,
     "Target 3 is out of bounds."),
    ("nll_loss", lambda L, w, i: L.nn.functional.nll_loss(
        L.log_softmax(L.tensor(FEAT) @ w.T, 1), i, ignore_index=1), [0, 2, 1, 1],
     [0, 1, -3, 7], IndexError, "Target -3 is out of bounds."),
]
IDS = [o[0] for o in OPS]


def _setitem(y, i):
    y[i] = 0.5
    return y


def _model():
    w = hg.nn.Parameter(hg.tensor(X))
    count = hg.zeros((), dtype=hg.int64)
    opt = hg.optim.AdamW([w], lr=0.1)
    return w, count, opt


def _step(op, w, count, opt, made):
    def step(idx):
        if made == "computed":
            idx = idx * 1   # made by the program: its bounds are not known on the host
        opt.zero_grad()
        loss = op(hg, w, idx).square().sum()
        loss.backward()
        opt.step()
        count.add_(1)
        hg.rand(())   # the step draws from the global key
        return loss
    return step


def _index(values, made):
    idx = hg.tensor(values)
    return idx + 0 if made == "device" else idx   # device-made: its bounds read back


def _state(w, count, opt):
    st = opt.state.get(w, {})
    return {"w": w.detach().numpy().copy(), "version": w._version,
            "grad": None if w.grad is None else w.grad.numpy().copy(),
            "opt": {k: np.asarray(v).copy() for k, v in st.items()},
            "count": int(count), "key": np.asarray(hg.get_rng_state()).copy()}


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], dict):
            _assert_same(a[k], b[k])
        elif a[k] is None or isinstance(a[k], int):
            assert a[k] == b[k], k
        else:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("made", ["host", "device", "computed"])
@pytest.mark.parametrize("op,good,bad,kind,message", [o[1:] for o in OPS], ids=IDS)
def test_a_bad_index_raises_after_the_run_with_the_state_untouched(op, good, bad, kind,
                                                                   message, made):
    hg.manual_seed(0)
    w, count, opt = _model()
    step = hg.compile(_step(op, w, count, opt, made))
    step(_index(good, made))
    step(_index(good, made))    # the loop's program, run on state it wrote
    before = _state(w, count, opt)
    with pytest.raises(kind, match=f"^{_escape(message)}$"):
        step(_index(bad, made))
    _assert_same(_state(w, count, opt), before)
    loss = step(_index(good, made))  # then on as if the failed call had not happened

    hg.manual_seed(0)
    we, ce, oe = _model()
    eager = _step(op, we, ce, oe, made)
    eager(_index(good, made))
    eager(_index(good, made))
    with pytest.raises(kind, match=f"^{_escape(message)}$"):
        eager(_index(bad, made))
    hg.set_rng_state(hg.get_rng_state())
    want = eager(_index(good, made))
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)
    np.testing.assert_allclose(w.detach().numpy(), we.detach().numpy(), rtol=1e-5, atol=1e-6)


def _escape(s):
    import re
    return re.escape(s)


@pytest.mark.parametrize("op,good,bad,kind,message", [o[1:] for o in OPS], ids=IDS)
def test_eager_raises_pytorchs_error(op, good, bad, kind, message):
    def scenario(L):
        w = L.tensor(X, requires_grad=True)
        try:
            return {"value": op(L, w, L.tensor(good)).tolist()}
        except (RuntimeError, IndexError) as e:
            return {"raises": type(e).__name__, "message": str(e)}
    assert "value" in same_as_torch(scenario)

    def bad_scenario(L):
        try:
            op(L, L.tensor(X, requires_grad=True), L.tensor(bad))
        except (RuntimeError, IndexError) as e:
            return {"raises": type(e).__name__, "message": str(e)}
    assert same_as_torch(bad_scenario) == {"raises": kind.__name__, "message": message}


def test_a_first_call_that_fails_creates_no_state():
    hg.manual_seed(0)
    w, count, opt = _model()
    step = hg.compile(_step(OPS[0][1], w, count, opt, "host"))
    key = np.asarray(hg.get_rng_state()).copy()
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0"):
        step(hg.tensor([[0, 1], [3, 0]]))
    assert w.grad is None and not opt.state and int(count) == 0 and w._version == 0
    np.testing.assert_array_equal(w.detach().numpy(), X)
    np.testing.assert_array_equal(np.asarray(hg.get_rng_state()), key)
    step(hg.tensor([[0, 1], [2, 0]]))
    assert w.grad is not None and opt.state[w] and int(count) == 1


def test_the_flag_is_read_only_where_host_bounds_do_not_prove_the_index(monkeypatch):
    reads = []
    real = _checks._read
    monkeypatch.setattr(_checks, "_read", lambda a: reads.append(1) or real(a))
    hg.manual_seed(0)
    model = hg.nn.Sequential(hg.nn.Embedding(10, 4), hg.nn.Linear(4, 10))
    opt = hg.optim.SGD(model.parameters(), lr=0.1)

    @hg.compile
    def step(tokens, targets):
        loss = F.cross_entropy(model(tokens).reshape(-1, 10), targets.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    tokens = hg.randint(0, 10, (4, 3))
    for _ in range(3):   # made from host data: proved in range, nothing read back
        step(tokens, hg.tensor(np.arange(12).reshape(4, 3) % 10))
    assert reads == []
    # made on the device (a host op's result has host bounds: ``tokens * 1`` is proved)
    step(tokens.roll(1, 0), hg.randint(0, 10, (4, 3)))   # read
    assert len(reads) == 1
    with pytest.raises(IndexError, match="^Target 10 is out of bounds.$"):
        step(tokens, hg.tensor(np.arange(12).reshape(4, 3)))
    assert len(reads) == 2


def test_a_checked_program_still_donates_what_it_replaces():
    hg.manual_seed(0)
    w, count, opt = _model()
    step = hg.compile(_step(OPS[0][1], w, count, opt, "host"))
    idx = hg.tensor([[0, 1], [2, 0]])
    step(idx)
    (entry,) = step._cache.values()
    # proved in range by the index's host bounds: the program donating as without checks
    # (the parameter, the buffer, the optimizer's state)
    assert len(entry.donated) > 2 and entry.exe_checked is None
    assert step.lower(idx).as_text().count("tf.aliasing_output") == len(entry.donated)
    # not proved (made on the device): the checked program donates the parameter and the buffer
    step(idx.roll(1, 0))
    assert entry.exe_checked is not None
    assert [kind for _, _, (kind, _) in entry.guard] == ["d", "d"]
    txt = entry.exe_checked.lower(*_inputs(step, idx)).as_text()
    assert txt.count("tf.aliasing_output") == 2


def _inputs(step, *args):
    plan, entry = step._entry(args, {})
    return plan.flat + ([jax.random.key_data(plan.rng)] if entry.key_in else [])


def test_donate_false_and_held_aliases_keep_the_state_on_failure():
    hg.manual_seed(0)
    w, count, opt = _model()
    step = hg.compile(_step(OPS[0][1], w, count, opt, "host"), donate=False)
    step(hg.tensor([[0, 1], [2, 0]]))
    before = _state(w, count, opt)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds"):
        step(hg.tensor([[0, 1], [3, 0]]))
    _assert_same(_state(w, count, opt), before)
    step2 = hg.compile(_step(OPS[0][1], w, count, opt, "host"))
    step2(hg.tensor([[0, 1], [2, 0]]))
    alias = w.detach()   # a holder of the buffer: the call donates nothing
    before = _state(w, count, opt)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds"):
        step2(hg.tensor([[0, 1], [3, 0]]))
    _assert_same(_state(w, count, opt), before)
    np.testing.assert_array_equal(alias.numpy(), before["w"])


def test_the_first_failed_check_is_reported():
    w = hg.nn.Parameter(hg.tensor(X))

    @hg.compile
    def step(i, j):
        return w.index_select(0, i).sum() + w.gather(0, j).sum()

    with pytest.raises(IndexError, match="^index out of range in self$"):
        step(hg.tensor([3]) * 1, hg.tensor([[4]]) * 1)
    with pytest.raises(RuntimeError, match="^index 4 is out of bounds for dimension 0"):
        step(hg.tensor([2]) * 1, hg.tensor([[4]]) * 1)
    assert step(hg.tensor([2]) * 1, hg.tensor([[1]])).item() == pytest.approx(
        float(X[2].sum() + X[1, 0]))


def test_a_valid_index_under_vmap_inside_a_step_gives_the_eager_result():
    w = hg.tensor(X)
    idx = hg.tensor([[0, 2], [1, 1], [2, 0]])

    def rows(i):
        return hg.func.vmap(lambda k: w.index_select(0, hg.tensor(k)).sum())(i._data)

    got = hg.compile(rows)(idx)
    np.testing.assert_allclose(np.asarray(got), np.asarray(rows(idx)))


def test_functional_calls_under_jit_are_not_checked():
    # docs/differences.md: hookgrad.func's traced indices are JAX's (gathers clamp or fill,
    # writes drop)
    hg.manual_seed(0)
    model = hg.nn.Embedding(3, 2)
    params = hg.func.state(model)

    @jax.jit
    def f(p, i):
        return hg.func.functional_call(model, p, (i,))

    good = jnp.array([2, 0, 1])
    np.testing.assert_allclose(np.asarray(f(params, good)),
                               model(hg.tensor(np.asarray(good))).detach().numpy())
    f(params, jnp.array([5]))   # no error: not checked
    with pytest.raises(IndexError, match="index out of range in self"):
        hg.func.functional_call(model, params, (hg.tensor([5]),))   # concrete: checked


def test_an_accumulated_grad_is_put_back():
    w = hg.nn.Parameter(hg.tensor(X))

    @hg.compile
    def step(idx):
        w.gather(0, idx).square().sum().backward()   # .grad accumulates: donated, guarded

    good, bad = hg.tensor([[0, 1], [2, 0]]), hg.tensor([[0, 1], [2, 0]]) * 2
    step(good)
    step(good)
    (entry,) = [e for e in step._cache.values() if e.guard]
    assert [kind for _, _, (kind, _) in entry.guard] == ["g"]
    grad = w.grad.numpy().copy()
    with pytest.raises(RuntimeError, match="^index 4 is out of bounds for dimension 0"):
        step(bad)
    np.testing.assert_array_equal(w.grad.numpy(), grad)
    step(good)
    np.testing.assert_allclose(w.grad.numpy(), grad * 3 / 2)


class _EmbedNorm(hg.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = hg.nn.Embedding(5, 4)
        self.bn = hg.nn.BatchNorm1d(4)   # its forward writes the running statistics

    def forward(self, i):
        return self.bn(self.emb(i)) + hg.rand(4) * 0   # draws: advances the key


@pytest.mark.parametrize("grad", [True, False])
def test_a_compiled_modules_forward_raises_before_writing_its_buffers(grad):
    hg.manual_seed(0)
    model = _EmbedNorm()
    cmodel = hg.compile(model)
    good = hg.tensor([0, 4, 2, 2, 1, 3])
    with hg.set_grad_enabled(grad):
        cmodel(good)
        before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        key = np.asarray(hg.get_rng_state()).copy()
        for bad in (hg.tensor([0, 4, 5, 2, 1, 3]), good * 2):   # host-made, device-made
            with pytest.raises(IndexError, match="^index out of range in self$"):
                cmodel(bad)
            for k, v in model.state_dict().items():
                np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)
            np.testing.assert_array_equal(np.asarray(hg.get_rng_state()), key)
        got = cmodel(good)
    hg.manual_seed(0)
    eager = _EmbedNorm()
    with hg.set_grad_enabled(grad):
        eager(good)
        want = eager(good)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(model.bn.running_mean.numpy(), eager.bn.running_mean.numpy(),
                               rtol=1e-5)


def test_moving_an_index_to_a_device_keeps_its_host_bounds():
    from hookgrad._device import host_bounds, move
    labels = hg.tensor([4, 0, 7])
    for dev in jax.devices():
        assert host_bounds(move(labels._data, dev)) == (0, 7)
    assert host_bounds(labels.to("cpu")._data) == (0, 7)


def test_embedding_bag_names_the_bad_value_after_the_run():
    # eagerly PyTorch's message names the entry's place in the input; a traced check
    # returns only the value (docs/differences.md row)
    w = hg.randn(5, 3)
    bag = hg.compile(lambda i: hg.nn.functional.embedding_bag(i, w, mode="sum"))
    good = hg.tensor([[1, 2]])
    np.testing.assert_allclose(bag(good * 2).numpy(),
                               hg.nn.functional.embedding_bag(good * 2, w, mode="sum").numpy())
    with pytest.raises(RuntimeError, match=r"^An index of input takes value 8 which is not in "
                                           r"the valid range \[0, 5\)$"):
        bag(good * 4)


def test_a_value_check_of_an_op_raises_in_a_compiled_step_as_eagerly():
    # binary_cross_entropy checks its input and target lie in [0, 1]: checked after the
    # run, before anything is written back, as the index checks
    a = hg.tensor([[0.1, 0.2]], requires_grad=True)
    step = hg.compile(lambda t: hg.nn.functional.binary_cross_entropy(a.sigmoid(), t,
                                                                      reduction="sum"))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        step(hg.tensor([[-0.5, 0.5]]))
    assert step(hg.tensor([[0.5, 0.5]])).item() > 0
