"""``view_as_real`` and ``view_as_complex`` are views of their input, as PyTorch's: a write
through either side is seen by the other (views of them, and host-held small tensors in a
loop, too), ``_base``/``_is_view()`` and the version counter are shared, and an in-place
write into one is differentiated through the base (``CopySlices``; the other views read
anew under their view op's node); against torch where it is installed, ``jax.grad``, and
the compiled mode."""
import jax
import jax.numpy as jnp
import numpy as np

import hookgrad
from tests.differential import py, same_as_torch


def _pairs(t):
    return [[v.real, v.imag] for v in t.detach().reshape(-1).tolist()]


def test_writes_through_either_side_are_seen_by_the_other():
    def run(L):
        out = []
        z = L.zeros(3, dtype=L.complex64)
        t = L.view_as_real(z)
        out.append([t._base is z, t._is_view(), list(t.stride()), t.storage_offset()])
        t[:, 1] = L.tensor([1.0, 2.0, 3.0])
        out.append([_pairs(z), z._version, t._version])
        z.add_(1)
        out.append([py(t), t._version])
        a = L.arange(12.0).reshape(3, 4)
        c = L.view_as_complex(a.view(3, 2, 2))
        c[1, 1] = 100 + 200j
        a[0, 0] = -1.0
        r = L.view_as_real(c)[:, 0]
        r.zero_()
        out.append([py(a), _pairs(c), list(r.stride()), r.storage_offset(), a._version,
                    c._version, r._version, r._base is a])
        zs = L.tensor([1 + 1j, 2 + 2j, 3 + 3j, 4 + 4j])
        q = L.view_as_real(zs[1::2])
        q.mul_(10)
        return out + [_pairs(zs), list(q.stride()), q.storage_offset()]
    got = same_as_torch(run)
    assert got[1][0] == [[0.0, 1.0], [0.0, 2.0], [0.0, 3.0]]


def test_a_loop_of_writes_into_small_tensors_and_their_views():
    # small tensors written in a loop are held on the host: the views share that memory
    def run(L):
        out = []
        z = L.zeros(6, dtype=L.complex64)
        r = L.view_as_real(z)
        for i in range(6):
            z[i] = complex(i, -i)
            r[i, 0] += 0.5
            out.append(py(r[i]))
        x = L.zeros(5)
        c = L.view_as_complex(x[:4].view(2, 2))
        for i in range(2):
            x[2 * i + 1] = i + 1.0
            c[i] = c[i] * 2 + 1j
        return out + [_pairs(z), py(x), _pairs(c)]
    same_as_torch(run)


def test_an_in_place_write_into_the_view_is_differentiated_through_the_base():
    def run(L):
        out = []
        z = L.tensor([1 + 2j, 3 + 4j], requires_grad=True)
        w = z * 1
        r = L.view_as_real(w)
        r[0, 1] = 10.0
        out.append([_pairs(w), w.grad_fn.name(), r.grad_fn.name(), w._version])
        r2 = L.view_as_real(w)
        w.mul_(2)
        out.append([r2.grad_fn.name(), [type(n).__name__ for n, _ in r2.grad_fn.next_functions],
                    py(r), py(r2)])
        (r2.sum() + r.pow(2).sum()).backward()
        out.append(_pairs(z.grad))
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        c = L.view_as_complex(y)
        c.mul_(1j)
        out.append([py(y), y.grad_fn.name(), c.grad_fn.name()])
        (y * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return out + [py(x.grad)]
    got = same_as_torch(run)
    assert got[0][1] == "torch::autograd::CopySlices" and got[2] == [[10.0, 0.0], [26.0, 34.0]]


def _written(re, im, v):
    # the loss of both tests below: a write of ``v`` into the imaginary part through the
    # view, then a real function of the complex values
    return (jnp.abs(jax.lax.complex(re, im).at[0].set(jax.lax.complex(re[0], v))) ** 2).sum()


def test_the_gradient_of_a_write_through_the_view_is_jaxs():
    re, im, v = np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32), 3.0

    def loss(re, im, v):
        z = hookgrad.complex(re, im)
        hookgrad.view_as_real(z)[0, 1] = v
        return (z.abs() ** 2).sum()

    a, b, c = (hookgrad.tensor(x, requires_grad=True) for x in (re, im, v))
    loss(a, b, c).backward()
    want = jax.grad(_written, (0, 1, 2))(re, im, np.float32(v))
    for got, w in zip((a.grad, b.grad, c.grad), want):
        np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray(w), rtol=1e-6)


def test_a_compiled_step_writes_through_the_view_as_eagerly():
    def step(x, v):
        c = hookgrad.view_as_complex(x)
        c[1] = c[1] * v
        return x.sum()

    def fresh():
        return hookgrad.arange(6.0).reshape(3, 2)
    x1, x2 = fresh(), fresh()
    eager = step(x1, 2.0)
    compiled = hookgrad.compile(step)(x2, 2.0)
    assert x2.tolist() == x1.tolist() == [[0.0, 1.0], [4.0, 6.0], [4.0, 5.0]]
    assert compiled.item() == eager.item()
