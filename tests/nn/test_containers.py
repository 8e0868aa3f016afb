"""Containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict) and the
linear layers (Identity, Linear, Bilinear), differential against PyTorch where installed."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F
from hookgrad import nn
from tests.nn._common import both, needs_torch, torch  # noqa: F401 - torch for skips


def errors(*fns):
    out = []
    for f in fns:
        try:
            f()
            out.append("ok")
        except Exception as e:  # noqa: BLE001
            out.append([type(e).__name__, str(e).replace("hookgrad", "torch")])
    return out


class Tag:
    """Builds tagged Identity-like modules so that containers' contents can be named."""

    @staticmethod
    def make(L, tag):
        class T(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.tag = tag

            def forward(self, x):
                return x * 2 + tag

            def extra_repr(self):
                return str(tag)
        return T()


def tags(mods):
    return [m.tag for m in mods]


# --------------------------------------------------------------------------- Sequential


def _sequential(L):
    t = [Tag.make(L, i) for i in range(6)]
    s = L.nn.Sequential(t[0], t[1], t[2])
    out = [len(s), tags(s), s[-1].tag, tags(s[1:]), type(s[1:]).__name__,
           [k for k, _ in s[1:].named_children()], s(L.ones(1)).tolist()]
    s.append(t[3])
    s.insert(1, t[4])
    s.insert(-1, t[5])
    out.append([list(s._modules), tags(s)])
    del s[0]
    out.append([list(s._modules), tags(s)])
    del s[1:3]
    out.append([list(s._modules), tags(s)])
    out.append(s.pop(0).tag)
    s[0] = t[0]
    out.append(tags(s))
    s.extend(L.nn.Sequential(t[1], t[2]))
    out.append(tags(s))
    s2 = s + L.nn.Sequential(t[3])
    out.append([tags(s2), len(s)])
    s += L.nn.Sequential(t[4])
    out.append(tags(s))
    out.append(tags(L.nn.Sequential(t[0], t[1]) * 2))
    out.append(tags(2 * L.nn.Sequential(t[0])))
    s3 = L.nn.Sequential(t[0], t[1])
    s3 *= 2
    out.append([tags(s3), list(s3._modules)])
    od = L.nn.Sequential(collections.OrderedDict([("a", t[0]), ("b", t[1])]))
    out.append([list(od._modules), od.b.tag, od[1].tag, tags(od[::-1])])
    out += errors(lambda: s[10], lambda: s.insert(99, t[0]), lambda: s + [t[0]],
                  lambda: s * 0, lambda: s * 1.5, lambda: s.insert(0, 3), lambda: s["0"])
    out.append([k for k in dir(s) if k.isdigit()])
    return out


def test_sequential():
    out = _sequential(hookgrad)
    assert out[:7] == [3, [0, 1, 2], 2, [1, 2], "Sequential", ["1", "2"], [12.0]]
    assert out[7] == [["0", "1", "2", "3", "4", "5"], [0, 4, 1, 2, 5, 3]]
    assert out[8] == [["0", "1", "2", "3", "4"], [4, 1, 2, 5, 3]]
    assert out[9] == [["0", "1", "2"], [4, 5, 3]]


@needs_torch
def test_sequential_matches_torch():
    ours, theirs = both(_sequential)
    assert ours == theirs


def test_sequential_forward_and_state_dict_keys():
    s = nn.Sequential(nn.Linear(2, 2), nn.Identity(), nn.Sequential(nn.Linear(2, 1)))
    assert list(s.state_dict()) == ["0.weight", "0.bias", "2.0.weight", "2.0.bias"]
    assert [n for n, _ in s.named_modules()] == ["", "0", "1", "2", "2.0"]
    x = hookgrad.ones(3, 2)
    expect = s[2][0](s[0](x))
    np.testing.assert_allclose(s(x).numpy(force=True), expect.numpy(force=True))


# --------------------------------------------------------------------------- ModuleList


def _module_list(L):
    t = [Tag.make(L, i) for i in range(6)]
    ml = L.nn.ModuleList([t[0], t[1]])
    out = [len(ml), tags(ml), ml[-1].tag, type(ml[:1]).__name__, tags(ml[::-1])]
    ml.append(t[2])
    ml.extend([t[3], t[4]])
    ml.insert(1, t[5])
    out.append([list(ml._modules), tags(ml)])
    ml += [t[0]]
    del ml[-1]
    del ml[0:2]
    out.append([list(ml._modules), tags(ml)])
    out.append(ml.pop(1).tag)
    ml[0] = t[0]
    out.append(tags(ml))
    out.append(tags(ml + L.nn.ModuleList([t[5]])))
    out += errors(lambda: ml[10], lambda: ml.extend(3), lambda: ml["a"],
                  lambda: ml.__setitem__(7, t[0]))
    out.append([k for k, _ in L.nn.ModuleList([t[0], t[1]]).named_modules()])
    return out


def test_module_list():
    out = _module_list(hookgrad)
    assert out[:2] == [2, [0, 1]]
    assert out[5] == [["0", "1", "2", "3", "4", "5"], [0, 5, 1, 2, 3, 4]]
    assert out[-1] == ["", "0", "1"]


@needs_torch
def test_module_list_matches_torch():
    ours, theirs = both(_module_list)
    assert ours == theirs


# --------------------------------------------------------------------------- ModuleDict


def _module_dict(L):
    t = [Tag.make(L, i) for i in range(4)]
    md = L.nn.ModuleDict({"b": t[1], "a": t[0]})
    out = [list(md), list(md.keys()), tags(md.values()), [k for k, _ in md.items()],
           "a" in md, len(md), md["b"].tag]
    md["c"] = t[2]
    md.update([("d", t[3])])
    md.update(L.nn.ModuleDict({"e": t[0]}))
    out.append(list(md))
    out.append(md.pop("b").tag)
    del md["a"]
    out.append([list(md), list(md.state_dict())])
    out += errors(lambda: md.update(3), lambda: md.update([("x",)]), lambda: md.update([3]),
                  lambda: md["zz"])
    md.clear()
    out.append(len(md))
    return out


def test_module_dict():
    out = _module_dict(hookgrad)
    assert out[:7] == [["b", "a"], ["b", "a"], [1, 0], ["b", "a"], True, 2, 1]
    assert out[7] == ["b", "a", "c", "d", "e"]


@needs_torch
def test_module_dict_matches_torch():
    ours, theirs = both(_module_dict)
    assert ours == theirs


# --------------------------------------------------------------------------- ParameterList


def _parameter_list(L):
    pl = L.nn.ParameterList([L.nn.Parameter(L.ones(2)), L.zeros(3)])
    out = [len(pl), [type(p).__name__ for p in pl], [k for k, _ in pl.named_parameters()],
           [p.requires_grad for p in pl]]
    pl.append(L.ones(1))
    pl.extend([L.nn.Parameter(L.ones(4)), "not a tensor"])
    out.append([len(pl), list(pl.state_dict()), pl[4]])
    out.append([len(pl[1:3]), type(pl[1:3]).__name__])
    pl[0] = L.full((2,), 5.0)
    out.append([type(pl[0]).__name__, pl[0].tolist()])
    out.append(repr(pl))
    out += errors(lambda: pl[10], lambda: pl.extend(L.ones(2)), lambda: pl(1))
    out.append([k for k in dir(pl) if k.isdigit()])
    return out


def test_parameter_list():
    out = _parameter_list(hookgrad)
    assert out[:4] == [2, ["Parameter", "Parameter"], ["0", "1"], [True, True]]
    assert out[4] == [5, ["0", "1", "2", "3"], "not a tensor"]


@needs_torch
def test_parameter_list_matches_torch():
    ours, theirs = both(_parameter_list)
    ours[7] = ours[7].replace("hookgrad.", "torch.")
    assert ours == theirs


# --------------------------------------------------------------------------- ParameterDict


def _parameter_dict(L):
    pd = L.nn.ParameterDict({"b": L.ones(1), "a": L.nn.Parameter(L.zeros(2))})
    out = [list(pd), [type(v).__name__ for v in pd.values()], list(pd.state_dict()),
           "a" in pd, len(pd), list(reversed(pd))]
    pd["c"] = L.ones(3)
    pd.update([("d", L.ones(1))])
    pd.update(collections.OrderedDict([("z", L.ones(1)), ("y", L.ones(1))]))
    out.append(list(pd.keys()))
    out.append([pd.pop("b").tolist(), pd.get("nope", "dflt"),
                pd.setdefault("e", L.ones(1)).tolist()])
    k, v = pd.popitem()
    out.append([k, list(pd)])
    c = pd.copy()
    out.append([list(c), c["a"] is pd["a"]])
    merged = pd | L.nn.ParameterDict({"q": L.ones(1)})
    out.append(list(merged))
    pd |= {"r": L.ones(1)}
    out.append(list(pd))
    out.append(list(pd.fromkeys(["x", "y"])))
    out.append(repr(L.nn.ParameterDict({"w": L.nn.Parameter(L.ones(2, 3))})))
    out += errors(lambda: pd[3], lambda: pd.update(3), lambda: pd.update([("x",)]),
                  lambda: pd(1), lambda: pd["missing"])
    pd.clear()
    out.append(len(pd))
    return out


def test_parameter_dict():
    out = _parameter_dict(hookgrad)
    assert out[:6] == [["a", "b"], ["Parameter", "Parameter"], ["a", "b"], True, 2, ["b", "a"]]
    assert out[6] == ["a", "b", "c", "d", "z", "y"]


@needs_torch
def test_parameter_dict_matches_torch():
    ours, theirs = both(_parameter_dict)
    ours[13] = ours[13].replace("hookgrad.", "torch.")
    assert ours == theirs


# --------------------------------------------------------------------------- linear layers


def test_linear_init_bounds_and_seed():
    hookgrad.manual_seed(3)
    a = nn.Linear(16, 8)
    hookgrad.manual_seed(3)
    b = nn.Linear(16, 8)
    assert a.weight.tolist() == b.weight.tolist() and a.bias.tolist() == b.bias.tolist()
    w = a.weight.numpy(force=True)
    assert w.shape == (8, 16) and a.bias.shape == (8,)
    assert np.abs(w).max() <= 0.25 and np.abs(a.bias.numpy(force=True)).max() <= 0.25
    assert np.abs(w).max() > 0.2  # spread over the whole interval, not a constant
    assert abs(float(w.mean())) < 0.05 and abs(float(w.std()) - 0.25 / np.sqrt(3)) < 0.03
    c = nn.Linear(16, 8)  # the global key moved on: new numbers
    assert c.weight.tolist() != a.weight.tolist()
    before = a.weight
    a.reset_parameters()
    assert a.weight is before and a.weight.tolist() != b.weight.tolist()
    assert np.abs(a.weight.numpy(force=True)).max() <= 0.25


def test_linear_options():
    m = nn.Linear(3, 2, bias=False, dtype=hookgrad.float16)
    assert m.bias is None and m.weight.dtype is hookgrad.float16
    assert list(m.state_dict()) == ["weight"]
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=False)"
    assert m.in_features == 3 and m.out_features == 2


def test_linear_forward_and_grads_match_jax():
    m = nn.Linear(3, 2)
    x = hookgrad.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]], requires_grad=True)
    (m(x) ** 2).sum().backward()
    w, b = m.weight._data, m.bias._data
    f = lambda xx, ww, bb: jnp.sum((xx @ ww.T + bb) ** 2)  # noqa: E731
    gx, gw, gb = jax.grad(f, argnums=(0, 1, 2))(x._data, w, b)
    for got, want in ((x.grad, gx), (m.weight.grad, gw), (m.bias.grad, gb)):
        np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5)
    # batched (3-d) input
    y = m(hookgrad.ones(4, 5, 3))
    assert y.shape == (4, 5, 2)


@needs_torch
def test_linear_and_bilinear_match_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x1 = rng.standard_normal((5, 2)).astype(np.float32)
    x2 = rng.standard_normal((5, 3)).astype(np.float32)

    def run(L):
        m = L.nn.Bilinear(2, 3, 4)
        m.weight = L.nn.Parameter(L.tensor(w))
        m.bias = L.nn.Parameter(L.tensor(b))
        a, c = L.tensor(x1, requires_grad=True), L.tensor(x2, requires_grad=True)
        y = m(a, c)
        (y ** 2).sum().backward()
        lin = L.nn.Linear(2, 4)
        lin.weight = L.nn.Parameter(L.tensor(w[:, :, 0]))
        lin.bias = L.nn.Parameter(L.tensor(b))
        z = lin(a)
        return y, a.grad, c.grad, m.weight.grad, m.bias.grad, z, repr(m), repr(lin)

    ours, theirs = run(hookgrad), run(torch)
    for o, t in zip(ours[:6], theirs[:6]):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    assert ours[6:] == theirs[6:]


def test_bilinear_shapes_and_errors():
    m = nn.Bilinear(2, 3, 4, bias=False)
    assert m.bias is None and m.weight.shape == (4, 2, 3)
    assert np.abs(m.weight.numpy(force=True)).max() <= 1 / np.sqrt(2)
    assert m(hookgrad.ones(6, 2), hookgrad.ones(6, 3)).shape == (6, 4)
    with pytest.raises(RuntimeError, match="bilinear"):
        m(hookgrad.ones(6, 2), hookgrad.ones(5, 3))
    with pytest.raises(RuntimeError, match="bilinear"):
        m(hookgrad.ones(6, 2), hookgrad.ones(6, 4))


@pytest.mark.parametrize("shapes, match", [
    (((3, 4), (2, 5), (6, 4, 5), (6,)), "input batch dimensions do not match at dim 0: got 3 "
                                        "and 2"),
    (((3, 4), (3, 1, 5), (6, 4, 5), (6,)), "input dimensions do not match: got 2 and 3"),
    (((3, 3), (3, 5), (6, 4, 5), (6,)), "input1 size does not match weight size: got 3 but "
                                        "expected 4"),
    (((3, 4), (3, 5), (6, 4, 7), (6,)), "input2 size does not match weight size: got 5 but "
                                        "expected 7"),
    (((3, 4), (3, 5), (6, 4, 5), (5,)), "bias size does not match weight size: got 5 but "
                                        "expected 6"),
])
def test_functional_bilinear_checks_shapes_as_torch(shapes, match):
    args = [hookgrad.ones(*s) for s in shapes]
    with pytest.raises(RuntimeError, match=f"bilinear\\(\\): {match}"):
        F.bilinear(*args)
    if torch is not None:
        with pytest.raises(RuntimeError, match=f"bilinear\\(\\): {match}"):
            torch.nn.functional.bilinear(*[torch.ones(*s) for s in shapes])


def test_identity():
    x = hookgrad.ones(2)
    m = nn.Identity(54, unused_argument1=0.1)
    assert m(x) is x and list(m.parameters()) == [] and repr(m) == "Identity()"
