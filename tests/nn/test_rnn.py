"""Recurrent layers (``nn.RNN``/``LSTM``/``GRU``, the cells) and ``nn.utils.rnn``: parameters,
outputs, final states and gradients against PyTorch with the same weights, packed
sequences, errors, module hooks, and the LSTM inside ``hookgrad.compile``.

Sizes are tiny (input 3, hidden 4, sequence 5, batch 2): each shape is one compilation.
"""
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn as nn
from hookgrad.nn.utils import rnn as rnn_utils

try:
    import torch
except ImportError:  # the explicit assertions still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
# torch's own note that its CPU LSTM with projections leaves oneDNN
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
TOL = dict(rtol=1e-5, atol=1e-5)
I, H, T, B = 3, 4, 5, 2


def _arr(t):
    if torch is not None and isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data)


def _pair(cls, *args, **kwargs):
    """The hookgrad module with the weights of the torch one (or its own without torch)."""
    hm = getattr(nn, cls)(*args, **kwargs)
    if torch is None:
        return hm, None
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kwargs)
    mine = dict(hm.named_parameters())
    for name, p in tm.named_parameters():
        mine[name]._data = jnp.asarray(p.detach().numpy())
    return hm, tm


def _flat(res):
    """A module result (Tensors, tuples, PackedSequence) as a list of Tensors."""
    if isinstance(res, (rnn_utils.PackedSequence,)) or (
            torch is not None and isinstance(res, torch.nn.utils.rnn.PackedSequence)):
        return [res.data]
    if isinstance(res, (tuple, list)):
        return [t for r in res for t in _flat(r)]
    return [res]


def _run(L, m, arrays, call):
    """``call(L, m, *inputs)``, then backward of a weighted sum of every output: returns
    the outputs, the input gradients and the parameter gradients by name."""
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    outs = _flat(call(L, m, *xs))
    rng = np.random.default_rng(1)
    loss = sum((o * L.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32))).sum()
               for o in outs)
    loss.backward()
    return ([_arr(o) for o in outs], [_arr(x.grad) for x in xs],
            {n: _arr(p.grad) for n, p in m.named_parameters()})


def _check(hm, tm, arrays, call):
    got = _run(hg, hm, arrays, call)
    assert all(np.isfinite(o).all() for o in got[0])
    assert any(np.abs(g).sum() > 0 for g in got[2].values()), "no parameter gradient"
    if tm is None:
        return got
    want = _run(torch, tm, arrays, call)
    for k, (g, w) in enumerate(zip(got[0], want[0])):
        np.testing.assert_allclose(g, w, err_msg=f"output {k}", **TOL)
    for k, (g, w) in enumerate(zip(got[1], want[1])):
        np.testing.assert_allclose(g, w, err_msg=f"input grad {k}", **TOL)
    assert got[2].keys() == want[2].keys()
    for n in want[2]:
        np.testing.assert_allclose(got[2][n], want[2][n], err_msg=f"grad {n}", **TOL)
    return got


_rng = np.random.default_rng(0)


def r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _plain(L, m, x):
    return m(x)


def _with_h(L, m, x, h):
    return m(x, h)


def _with_hc(L, m, x, h, c):
    return m(x, (h, c))


# (id, class, args, kwargs, input arrays, call)
CASES = [
    ("rnn_tanh", "RNN", (I, H), {}, [r(T, B, I), r(1, B, H)], _with_h),
    ("rnn_relu", "RNN", (I, H), {"nonlinearity": "relu"}, [r(T, B, I)], _plain),
    ("rnn_2layer_bidir", "RNN", (I, H, 2), {"bidirectional": True}, [r(T, B, I)], _plain),
    ("lstm", "LSTM", (I, H), {}, [r(T, B, I), r(1, B, H), r(1, B, H)], _with_hc),
    ("lstm_proj", "LSTM", (I, H), {"proj_size": 2}, [r(T, B, I), r(1, B, 2), r(1, B, H)],
     _with_hc),
    ("lstm_2layer_bidir", "LSTM", (I, H, 2), {"bidirectional": True},
     [r(T, B, I), r(4, B, H), r(4, B, H)], _with_hc),
    ("lstm_batch_first", "LSTM", (I, H), {"batch_first": True}, [r(B, T, I)], _plain),
    ("lstm_unbatched", "LSTM", (I, H), {}, [r(T, I), r(1, H), r(1, H)], _with_hc),
    ("gru", "GRU", (I, H), {}, [r(T, B, I), r(1, B, H)], _with_h),
    ("gru_2layer_nobias", "GRU", (I, H, 2), {"bias": False}, [r(T, B, I)], _plain),
    ("gru_bidir_batch_first", "GRU", (I, H), {"bidirectional": True, "batch_first": True},
     [r(B, T, I)], _plain),
    ("rnn_unbatched", "RNN", (I, H), {}, [r(T, I), r(1, H)], _with_h),
]


def _params(cases, slow=()):
    """Cases as parameters; ``slow``: the ids that only run in the slow tier (covered by
    a cheaper case by default)."""
    return [pytest.param(*c, id=c[0], marks=[pytest.mark.slow] if c[0] in slow else [])
            for c in cases]


@pytest.mark.parametrize("id, cls, args, kwargs, arrays, call",
                         _params(CASES, slow={"rnn_2layer_bidir", "rnn_unbatched"}))
def test_layer_outputs_states_and_grads_match_torch(id, cls, args, kwargs, arrays, call):
    hm, tm = _pair(cls, *args, **kwargs)
    outs, _, _ = _check(hm, tm, arrays, call)
    x = arrays[0]
    batched = x.ndim == 3
    steps = x.shape[1] if kwargs.get("batch_first") else x.shape[0]
    dirs = 2 if kwargs.get("bidirectional") else 1
    out_size = kwargs.get("proj_size") or H
    assert outs[0].shape[-1] == dirs * out_size and steps in outs[0].shape
    assert outs[1].shape[0] == hm.num_layers * dirs and outs[1].ndim == (3 if batched else 2)


def _packed_call(lengths, enforce_sorted=False):
    def call(L, m, x, *hx):
        U = L.nn.utils.rnn
        p = U.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        out, hidden = m(p, (hx[0], hx[1]) if len(hx) == 2 else (hx[0] if hx else None))
        assert isinstance(out, U.PackedSequence)
        padded, lens = U.pad_packed_sequence(out, batch_first=True)
        assert lens.tolist() == list(lengths)
        return padded, hidden
    return call


PACKED = [
    ("lstm_bidir", "LSTM", (I, H), {"bidirectional": True},
     [r(T, 3, I), r(2, 3, H), r(2, 3, H)], [3, 5, 2]),
    ("gru", "GRU", (I, H), {}, [r(T, 3, I)], [2, 5, 4]),
    ("rnn_bidir", "RNN", (I, H), {"bidirectional": True}, [r(T, 3, I), r(2, 3, H)], [4, 1, 5]),
]


@pytest.mark.parametrize("id, cls, args, kwargs, arrays, lengths",
                         _params(PACKED, slow={"rnn_bidir"}))
def test_packed_sequences_with_unsorted_lengths_match_torch(id, cls, args, kwargs, arrays,
                                                            lengths):
    hm, tm = _pair(cls, *args, **kwargs)
    outs, _, _ = _check(hm, tm, arrays, _packed_call(lengths))
    padded = outs[0]
    for b, n in enumerate(lengths):  # past each sequence's end: padding
        assert (padded[b, n:] == 0).all() and (padded[b, n - 1] != 0).any()


def test_packed_final_state_is_the_last_valid_step():
    m = nn.GRU(I, H)
    x = hg.tensor(r(T, B, I))
    p = rnn_utils.pack_padded_sequence(x, [5, 3])
    _, h = m(p)
    _, h_short = m(x[:3, 1:2])  # the second sequence alone, cut at its length
    np.testing.assert_allclose(_arr(h[0, 1]), _arr(h_short[0, 0]), rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- cells

CELLS = [
    ("rnncell", "RNNCell", (I, H), {}, [r(B, I), r(B, H)], lambda L, m, x, h: m(x, h)),
    ("rnncell_relu_nobias", "RNNCell", (I, H), {"bias": False, "nonlinearity": "relu"},
     [r(B, I)], lambda L, m, x: m(x)),
    ("lstmcell", "LSTMCell", (I, H), {}, [r(B, I), r(B, H), r(B, H)],
     lambda L, m, x, h, c: m(x, (h, c))),
    ("lstmcell_unbatched", "LSTMCell", (I, H), {}, [r(I)], lambda L, m, x: m(x)),
    ("grucell", "GRUCell", (I, H), {}, [r(B, I), r(B, H)], lambda L, m, x, h: m(x, h)),
    ("grucell_unbatched", "GRUCell", (I, H), {}, [r(I), r(H)], lambda L, m, x, h: m(x, h)),
]


@pytest.mark.parametrize("id, cls, args, kwargs, arrays, call", CELLS, ids=[c[0] for c in CELLS])
def test_cells_match_torch(id, cls, args, kwargs, arrays, call):
    hm, tm = _pair(cls, *args, **kwargs)
    outs, _, _ = _check(hm, tm, arrays, call)
    assert outs[0].shape == ((B, H) if arrays[0].ndim == 2 else (H,))


@needs_torch
def test_cell_node_names_match_torch():
    def names(L):
        torch.manual_seed(0)
        hg.manual_seed(0)
        x = L.randn(B, I, requires_grad=True)
        h = L.nn.LSTMCell(I, H)(x)
        return [L.nn.RNNCell(I, H)(x).grad_fn.name(), h[0].grad_fn.name(),
                h[1].grad_fn.name(), L.nn.GRUCell(I, H)(x).grad_fn.name()]
    assert names(hg) == names(torch)


# --------------------------------------------------------------------------- parameters

CONFIGS = [("RNN", (I, H), {"num_layers": 2, "bidirectional": True}),
           ("LSTM", (I, H), {"proj_size": 2, "bidirectional": True}),
           ("LSTM", (I, H, 2), {"bias": False, "proj_size": 3}),
           ("GRU", (I, H, 3), {"batch_first": True, "dropout": 0.5}),
           ("RNN", (I, H, 1, "relu", False), {}),
           ("RNNCell", (I, H), {"nonlinearity": "relu"}), ("LSTMCell", (I, H), {"bias": False}),
           ("GRUCell", (I, H), {})]


@pytest.mark.parametrize("cls, args, kwargs", CONFIGS)
def test_parameters_state_dict_and_repr_match_torch(cls, args, kwargs):
    hm = getattr(nn, cls)(*args, **kwargs)
    got = ([(n, tuple(p.shape)) for n, p in hm.named_parameters()], list(hm.state_dict()),
           repr(hm))
    bound = 1 / np.sqrt(H)
    a = np.concatenate([_arr(p).ravel() for p in hm.parameters()])
    assert (np.abs(a) <= bound).all() and a.std() > bound / 3  # U(-bound, bound): bound/sqrt(3)
    if "Cell" not in cls:
        assert hm._flat_weights_names == [n for n, _ in got[0]]
        assert [[id(p) for p in ps] for ps in hm.all_weights] == \
            [[id(getattr(hm, n)) for n in names] for names in hm._all_weights]
        assert hm._flat_weights[0] is getattr(hm, hm._flat_weights_names[0])
        assert hm.flatten_parameters() is None
    if torch is not None:
        tm = getattr(torch.nn, cls)(*args, **kwargs)
        assert got == ([(n, tuple(p.shape)) for n, p in tm.named_parameters()],
                       list(tm.state_dict()), repr(tm))
        if "Cell" not in cls:
            assert hm._flat_weights_names == tm._flat_weights_names
            assert hm._all_weights == tm._all_weights


def test_reset_parameters_and_load_state_dict():
    m = nn.LSTM(I, H, bidirectional=True)
    before = {n: _arr(p).copy() for n, p in m.named_parameters()}
    m.reset_parameters()
    assert all(not np.array_equal(before[n], _arr(p)) for n, p in m.named_parameters())
    m.load_state_dict({n: hg.tensor(a) for n, a in before.items()})
    assert all(np.array_equal(before[n], _arr(p)) for n, p in m.named_parameters())


# --------------------------------------------------------------------------- dropout


@needs_torch
def test_dropout_between_layers_in_training_only():
    hm, tm = _pair("GRU", I, H, 2, dropout=1.0)  # p=1: deterministic, layer 2 sees zeros
    _check(hm, tm, [r(T, B, I)], _plain)
    hm.eval()
    tm.eval()
    x = r(T, B, I)
    np.testing.assert_allclose(_arr(hm(hg.tensor(x))[0]), _arr(tm(torch.tensor(x))[0]), **TOL)


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, "
                      r"but got dropout=0.5 and num_layers=1"):
        nn.LSTM(I, H, dropout=0.5)


# --------------------------------------------------------------------------- errors


def _raises(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn(hg)
    if torch is not None:
        with pytest.raises(exc, match=match):
            fn(torch)


def _m(L, cls, *args, **kw):
    return getattr(L.nn, cls)(*args, **kw)


ERRORS = [
    ("input_size", lambda L: _m(L, "LSTM", 4, H)(L.zeros(T, B, 3)), RuntimeError,
     r"input.size\(-1\) must be equal to input_size. Expected 4, got 3"),
    ("hidden", lambda L: _m(L, "GRU", I, 5)(L.zeros(T, B, I), L.zeros(1, 3, 5)), RuntimeError,
     r"Expected hidden size \(1, 2, 5\), got \[1, 3, 5\]"),
    ("hidden0", lambda L: _m(L, "LSTM", I, H)(L.zeros(T, B, I), (L.zeros(2, B, H),
                                                                  L.zeros(1, B, H))),
     RuntimeError, r"Expected hidden\[0\] size \(1, 2, 4\), got \[2, 2, 4\]"),
    ("hidden1", lambda L: _m(L, "LSTM", I, H, proj_size=2)(L.zeros(T, B, I), (
        L.zeros(1, B, 2), L.zeros(1, B, 2))), RuntimeError,
     r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 2\]"),
    ("input_dim_rnn", lambda L: _m(L, "RNN", I, H)(L.zeros(I)), ValueError,
     "RNN: Expected input to be 2D or 3D, got 1D tensor instead"),
    ("input_dim_lstm", lambda L: _m(L, "LSTM", I, H)(L.zeros(1, 1, T, I)), ValueError,
     "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    ("hx_dim_unbatched", lambda L: _m(L, "GRU", I, H)(L.zeros(T, I), L.zeros(1, 1, H)),
     RuntimeError, "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    ("hx_dim_batched", lambda L: _m(L, "LSTM", I, H)(L.zeros(T, B, I), (L.zeros(B, H),
                                                                         L.zeros(1, B, H))),
     RuntimeError, r"For batched 3-D input, hx and cx should also be 3-D but got \(2-D, 3-D\)"),
    ("dtype", lambda L: _m(L, "RNN", I, H)(L.zeros(T, B, I, dtype=L.float16)), ValueError,
     r"RNN input dtype \(.*float16\) does not match weight dtype \(.*float32\)"),
    ("proj_gru", lambda L: _m(L, "GRU", I, H, proj_size=2), ValueError,
     "proj_size argument is only supported for LSTM, not RNN or GRU"),
    ("proj_big", lambda L: _m(L, "LSTM", I, H, proj_size=4), ValueError,
     "proj_size has to be smaller than hidden_size"),
    ("nonlinearity", lambda L: _m(L, "RNN", I, H, nonlinearity="gelu"), ValueError,
     r"Unknown nonlinearity 'gelu'. Select from 'tanh' or 'relu'."),
    ("dropout", lambda L: _m(L, "LSTM", I, H, 2, dropout=1.5), ValueError,
     r"dropout should be a number in range \[0, 1\]"),
    ("hidden_size", lambda L: _m(L, "GRU", I, 0), ValueError,
     "hidden_size must be greater than zero"),
    ("bias_type", lambda L: _m(L, "GRU", I, H, bias=1), TypeError,
     "bias should be of type bool, got: int"),
    ("num_layers", lambda L: _m(L, "RNN", I, H, 0), ValueError,
     "num_layers must be greater than zero"),
    ("cell_input", lambda L: _m(L, "GRUCell", I, H)(L.zeros(1, B, I)), ValueError,
     "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
    ("cell_hidden", lambda L: _m(L, "RNNCell", I, H)(L.zeros(B, I), L.zeros(1, B, H)),
     ValueError, "RNNCell: Expected hidden to be 1D or 2D, got 3D instead"),
    ("cell_hx", lambda L: _m(L, "LSTMCell", I, H)(L.zeros(B, I), (L.zeros(B, H),
                                                                  L.zeros(1, B, H))),
     ValueError, r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"),
]


@pytest.mark.parametrize("id, fn, exc, match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(id, fn, exc, match):
    _raises(fn, exc, match)


# --------------------------------------------------------------------------- nn.utils.rnn


def _pack_roundtrip(L, x):
    U = L.nn.utils.rnn
    p = U.pack_padded_sequence(x, [2, 5, 3], batch_first=True, enforce_sorted=False)
    padded, lens = U.pad_packed_sequence(p, batch_first=True, padding_value=-1.0,
                                         total_length=6)
    return p, padded, lens


@needs_torch
def test_pack_and_pad_roundtrip_match_torch():
    x = r(3, T, 2)
    hx, tx = hg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (hp, hpad, hl), (tp, tpad, tl) = _pack_roundtrip(hg, hx), _pack_roundtrip(torch, tx)
    for a, b in [(hp.data, tp.data), (hp.batch_sizes, tp.batch_sizes), (hpad, tpad), (hl, tl),
                 (hp.sorted_indices, tp.sorted_indices),
                 (hp.unsorted_indices, tp.unsorted_indices)]:
        np.testing.assert_array_equal(_arr(a), _arr(b))
    assert hp.data.grad_fn.name() == tp.data.grad_fn.name() == "PackPaddedSequenceBackward0"
    w = r(3, 6, 2)
    (hpad * hg.tensor(w)).sum().backward()
    (tpad * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(_arr(hx.grad), _arr(tx.grad))


def _seqs(L):
    return [L.tensor([[1.0, 2.0]] * 3), L.tensor([[3.0, 4.0]]), L.tensor([[5.0, 6.0]] * 2)]


@pytest.mark.parametrize("kw", [{}, {"batch_first": True, "padding_value": -2.0},
                                {"padding_side": "left"}])
def test_pad_sequence_matches_torch(kw):
    got = rnn_utils.pad_sequence(_seqs(hg), **kw)
    assert tuple(got.shape) == ((3, 3, 2) if kw.get("batch_first") else (3, 3, 2))
    if kw.get("padding_side") == "left":
        assert _arr(got)[0, 1].tolist() == [0.0, 0.0] and _arr(got)[2, 1].tolist() == [3.0, 4.0]
    if torch is not None:
        np.testing.assert_array_equal(_arr(got),
                                      _arr(torch.nn.utils.rnn.pad_sequence(_seqs(torch), **kw)))


def test_pack_unpack_sequence_and_unpad():
    seqs = _seqs(hg)
    p = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.sorted_indices.tolist() == [0, 2, 1]
    assert [s.tolist() for s in rnn_utils.unpack_sequence(p)] == [s.tolist() for s in seqs]
    padded = rnn_utils.pad_sequence(seqs)
    back = rnn_utils.unpad_sequence(padded, hg.tensor([3, 1, 2]))
    assert [s.tolist() for s in back] == [s.tolist() for s in seqs]
    assert rnn_utils.invert_permutation(hg.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order "
                       "when `enforce_sorted` is True"):
        rnn_utils.pack_sequence(seqs)


def test_packed_sequence_is_a_named_tuple_with_to():
    p = rnn_utils.pack_sequence(_seqs(hg), enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert data is p.data and p._fields == ("data", "batch_sizes", "sorted_indices",
                                            "unsorted_indices")
    assert p.to(hg.float32) is p and not p.is_cuda
    q = p.half()
    assert q.data.dtype == hg.float16
    assert q.batch_sizes is p.batch_sizes and q.sorted_indices.tolist() == [0, 2, 1]
    assert rnn_utils.PackedSequence((data, batch_sizes)).unsorted_indices is None


PACK_ERRORS = [
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(T, 3, 2), [3, 5, 2]), RuntimeError,
     "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
     "can pass `enforce_sorted=False`"),
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(T, 3, 2), [5, 3]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(T, 3, 2), [5, 3, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_padded_sequence(L.zeros(T, 2), [5, 3]), total_length=3),
     ValueError, "Expected total_length to be at least the length of the longest sequence in "
     "input, but got total_length=3 and max sequence length being 5"),
    (lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2, 3), L.ones(3, 2)]), RuntimeError,
     r"The size of tensor a \(3\) must match the size of tensor b \(2\) at non-singleton "
     "dimension 1"),
    (lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2)], padding_side="top"), RuntimeError,
     "Expected padding_side to be one of left or right, but got top."),
    (lambda L: L.nn.utils.rnn.pad_sequence([]), RuntimeError,
     "received an empty list of sequences"),
    (lambda L: L.nn.utils.rnn.pad_sequence(3), RuntimeError,
     "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>"),
]


@pytest.mark.parametrize("fn, exc, match", PACK_ERRORS)
def test_packing_errors_match_torch(fn, exc, match):
    _raises(fn, exc, match)


def test_lengths_past_the_padded_length_are_an_error():
    with pytest.raises(RuntimeError, match="at most the padded length 5, but got a length of 6"):
        rnn_utils.pack_padded_sequence(hg.zeros(T, 2), [6, 3])


# --------------------------------------------------------------------------- hooks, graph


@needs_torch
def test_full_backward_hook_on_lstm_matches_torch():
    xa = r(T, B, I)

    def run(L):
        m = _pair("LSTM", I, H)[0 if L is hg else 1]
        log = []
        m.register_full_backward_hook(
            lambda mod, gin, gout: log.append(([None if g is None else tuple(g.shape)
                                                for g in gin],
                                               [None if g is None else tuple(g.shape)
                                                for g in gout],
                                               _arr(gin[0]).round(5).tolist())))
        x = L.tensor(xa, requires_grad=True)
        out, (h, c) = m(x)
        (out.sum() + h.sum() * 2).backward()
        return log
    got = run(hg)
    assert len(got) == 1 and got[0][0] == [(T, B, I)]
    assert got == run(torch)


@needs_torch
def test_lstm_graph_matches_torch_cpu_nodes():
    from tests.ops.test_torch_differential import _graph

    def graph(L):
        m = _pair("LSTM", I, H, 2, bidirectional=True)[0 if L is hg else 1]
        x = L.tensor(r(T, B, I), requires_grad=True)
        out, (h, c) = m(x, (L.zeros(4, B, H, requires_grad=True), L.zeros(4, B, H)))
        return [_graph(t) for t in (out, h, c)]
    want = graph(torch)
    if not any(name == "MkldnnRnnLayerBackward0" for name, _ in want[0]):
        pytest.skip("this torch build runs the CPU LSTM without mkldnn")
    assert graph(hg) == want


def test_layer_node_name_and_edges():
    m = nn.GRU(I, H, bias=False)
    x = hg.tensor(r(T, B, I), requires_grad=True)
    out, h = m(x)
    node = out.grad_fn
    assert node.name() == "MkldnnRnnLayerBackward0" and h.grad_fn.name() == "StackBackward0"
    # edges: input, w_ih, w_hh (no biases), h_0 (zeros: no gradient)
    assert [None if f is None else f.name() for f, _ in node.next_functions] == \
        ["torch::autograd::AccumulateGrad"] * 3 + [None]


# --------------------------------------------------------------------------- compile


def test_lstm_training_step_compiled_equals_eager():
    def make():
        hg.manual_seed(0)
        m = nn.LSTM(I, H, batch_first=True)
        head = nn.Linear(H, 1)
        opt = hg.optim.SGD(list(m.parameters()) + list(head.parameters()), lr=0.1)
        return m, head, opt

    x, y = hg.tensor(r(B, T, I)), hg.tensor(r(B, T, 1))

    def step(m, head, opt):
        out, (h, c) = m(x)
        loss = ((head(out) - y) ** 2).mean() + c.pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    eager, comp = make(), make()
    compiled = hg.compile(lambda: step(*comp))
    for _ in range(3):
        le, lc = step(*eager), compiled()
        np.testing.assert_allclose(_arr(lc), _arr(le), rtol=1e-5, atol=1e-6)
    for (n, pe), (_, pc) in zip(eager[0].named_parameters(), comp[0].named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-6, err_msg=n)


def test_packed_lstm_inside_compile_with_constant_lengths():
    m = nn.LSTM(I, H)
    x = hg.tensor(r(T, 3, I))

    def fwd():
        p = rnn_utils.pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False)
        out, (h, _) = m(p)
        return rnn_utils.pad_packed_sequence(out)[0].sum() + h.sum()

    np.testing.assert_allclose(_arr(hg.compile(fwd)()), _arr(fwd()), rtol=1e-5, atol=1e-6)


def test_packed_sequence_as_a_compiled_argument():
    m = nn.GRU(I, H)
    p = rnn_utils.pack_padded_sequence(hg.tensor(r(T, 3, I)), [5, 3, 2])
    step = hg.compile(lambda p: m(p)[1].sum())
    np.testing.assert_allclose(_arr(step(p)), _arr(m(p)[1].sum()), rtol=1e-5, atol=1e-6)


def test_traced_lengths_are_an_error():
    x = hg.tensor(r(T, 2, I))

    @hg.compile(fullgraph=True)   # by default: eagerly
    def fwd(lengths):
        return rnn_utils.pack_padded_sequence(x, lengths).data.sum()

    with pytest.raises(hg.compile.TracedValueError, match="concrete sequence lengths"):
        fwd(hg.tensor([5, 3]))


def test_jax_grad_through_functional_call_equals_eager():
    import jax
    m = nn.LSTM(I, H)
    x = hg.tensor(r(T, B, I))

    def f(params, x):
        out, (h, c) = hg.func.functional_call(m, params, (x,))
        return out.sum() + c.sum()
    got = jax.grad(f)(hg.func.state(m), x._data)
    out, (h, c) = m(x)
    (out.sum() + c.sum()).backward()
    for n, p in m.named_parameters():
        np.testing.assert_allclose(np.asarray(got[n]), _arr(p.grad), err_msg=n, **TOL)


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(I, H)(hg.zeros(T, B, I))
