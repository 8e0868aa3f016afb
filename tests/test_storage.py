"""Storages and addresses: ``data_ptr()`` is the real address of a Tensor's bytes on the
host (safetensors reads them through ctypes), ``untyped_storage()``/``storage()`` describe
the bytes a Tensor shares with its base and views; ``frombuffer``."""
import array
import ctypes
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import hookgrad

from ._torch_hidden import ROOT, run_with_torch_hidden
from .differential import py, raises, same_as_torch

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool")


def _read(ptr, nbytes):
    return ctypes.string_at(ptr, nbytes)


@pytest.mark.parametrize("name", DTYPES)
def test_data_ptr_is_the_address_of_the_bytes_in_c_order(name):
    dt = getattr(hookgrad, name)
    t = hookgrad.arange(12).reshape(3, 4).to(dt) if name != "bool" else \
        hookgrad.arange(12).reshape(3, 4) % 3 == 0
    want = np.asarray(t).tobytes()
    assert _read(t.data_ptr(), t.nbytes) == want
    assert t.untyped_storage().data_ptr() == t.data_ptr()
    assert t.untyped_storage().nbytes() == len(want)


def test_views_point_into_their_base():
    x = hookgrad.arange(12.0).reshape(3, 4)
    row, col, last = x[1], x[:, 2], x.view(-1)[-1]
    assert row.data_ptr() == x.data_ptr() + row.storage_offset() * 4
    assert _read(row.data_ptr(), 16) == np.asarray(row).tobytes()
    assert last.data_ptr() == x.data_ptr() + 11 * 4
    assert col.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    row.add_(100)  # a write through the view is in the base's bytes
    assert _read(row.data_ptr(), 16) == np.asarray(x[1]).tobytes()
    assert x.detach().data_ptr() == x.data_ptr() == x.data.data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()


def test_a_deferred_value_is_computed_before_its_address_is_given():
    a = hookgrad.ones(64, 64)
    outs = [(a * i).sum(0) for i in range(6)]  # later calls of one signature are deferred
    assert all(_read(o.data_ptr(), o.nbytes) == np.asarray(o).tobytes() for o in outs)


def test_no_address_where_no_bytes_are():
    assert hookgrad.empty(0).data_ptr() == 0
    assert hookgrad.empty(3, device="meta").data_ptr() == 0
    assert hookgrad.empty(3, device="meta").untyped_storage().data_ptr() == 0
    with pytest.raises(hookgrad.compile.TracedValueError, match="data_ptr"):
        hookgrad.compile(lambda t: t.data_ptr(), fullgraph=True)(hookgrad.ones(2))


def test_a_donated_array_has_no_address():
    arr = jax.numpy.ones(8)
    t = hookgrad.Tensor._wrap(arr)
    jax.jit(lambda x: x + 1, donate_argnums=0)(arr)
    with pytest.raises(RuntimeError, match="array was deleted"):
        t.data_ptr()


def test_storage_sizes_and_the_typed_storage():
    def run(L):
        x = L.arange(6, dtype=L.int32).reshape(2, 3)
        with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
            typed = x[1].storage()
        return [x.untyped_storage().nbytes(), len(x[1].untyped_storage()),
                typed.size(), typed.element_size(), str(typed.dtype).split(".")[1],
                typed.data_ptr() == x.data_ptr(), str(x.untyped_storage().device),
                x.element_size(), x.nbytes, x[1].storage_offset(), x.t().is_contiguous()]
    assert same_as_torch(run) == [24, 24, 6, 4, "int32", True, "cpu", 4, 24, 3, False]


@pytest.mark.parametrize("cls", ["UntypedStorage", "TypedStorage"])
def test_a_storage_is_made_from_a_tensor_not_constructed(cls):
    """``torch.UntypedStorage(n)`` allocates bytes; hookgrad's storages only describe a
    Tensor's, so constructing one says so, naming the class."""
    with pytest.raises(NotImplementedError, match=rf"hookgrad does not implement "
                       rf"torch\.{cls}\(\.\.\.\) yet: a storage comes from a Tensor"):
        getattr(hookgrad, cls)(4)
    assert type(getattr(hookgrad, cls)._of(hookgrad.ones(2))) is getattr(hookgrad, cls)


def test_frombuffer():
    def run(L):
        b = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
        bad = [dict(dtype=L.int32, offset=9), dict(dtype=L.int32, count=3),
               dict(dtype=L.float32, offset=1), dict(dtype=L.int32, count=0)]
        made = [L.frombuffer(b, dtype=L.int32), L.frombuffer(b, dtype=L.int8, count=3, offset=2),
                L.frombuffer(array.array("f", [1, 2]), dtype=L.float32, requires_grad=True)]
        b[0] = 9  # PyTorch's first Tensor shares the buffer: not compared
        return [py(t) for t in made[1:]] + [made[2].requires_grad,
                *[raises(lambda kw=kw: L.frombuffer(b, **kw)) for kw in bad],
                raises(lambda: L.frombuffer([1, 2], dtype=L.int8))]
    got = same_as_torch(run)
    assert got[:3] == [[0, 0, 2], [1.0, 2.0], True]
    assert hookgrad.frombuffer(bytearray(b"\x01\x00"), dtype=hookgrad.int16).tolist() == [1]
    assert got[3]["message"] == ("offset (9 bytes) must be non-negative and no greater than "
                                 "buffer length (8 bytes) minus 1")


def test_safetensors_round_trip_with_torch_bound_to_hookgrad():
    if importlib.util.find_spec("safetensors") is None:
        pytest.skip("safetensors is not installed")
    proc = run_with_torch_hidden(f"""
        import json, os, tempfile
        import numpy as np
        import hookgrad.as_torch
        torch = hookgrad.as_torch.install()
        from safetensors.torch import load_file, save_file, save_model, load_model

        base = torch.arange(24).reshape(4, 6)
        tensors = {{name: base.to(getattr(torch, name)) for name in {DTYPES!r}}}
        tensors["bool"] = base % 3 == 0
        tensors["row"] = torch.arange(100.0).reshape(10, 10)[3]          # a view: offset 30
        tensors["t"] = torch.arange(6.0).reshape(2, 3).t().contiguous()  # a copy of a view
        tensors["scalar"] = torch.tensor(3.5)
        tensors["empty"] = torch.zeros(0, 3)
        out = {{}}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.safetensors")
            save_file(tensors, path)
            back = load_file(path)
            out["same"] = {{k: (str(back[k].dtype) == str(v.dtype) and
                               list(back[k].shape) == list(v.shape) and
                               np.array_equal(np.asarray(back[k]), np.asarray(v)))
                           for k, v in tensors.items()}}
            try:
                save_file({{"nc": torch.arange(6.0).reshape(2, 3).t()}}, path)
            except ValueError as e:
                out["non_contiguous"] = str(e).split(":")[0]
            x = torch.ones(4)
            try:
                save_file({{"a": x, "b": x.detach()}}, path)
            except RuntimeError as e:
                out["shared"] = "share memory" in str(e)
            lin = torch.nn.Linear(3, 3)
            model = torch.nn.Sequential(lin, torch.nn.Linear(3, 3))
            model[1].weight = lin.weight  # tied weights: save_model keeps one copy
            save_model(model, path)
            fresh = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
            fresh[1].weight = fresh[0].weight
            load_model(fresh, path)
            out["model"] = all(np.array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
                               for a, b in zip(model.parameters(), fresh.parameters()))
        print(json.dumps(out))
    """)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["same"] == {k: True for k in got["same"]} and len(got["same"]) == 14
    assert got["non_contiguous"] == "You are trying to save a non contiguous tensor"
    assert got["shared"] and got["model"]


def test_an_array_split_over_devices_has_no_address():
    code = """
        import jax, numpy as np, pytest
        from jax.sharding import Mesh, NamedSharding, PartitionSpec
        import hookgrad
        mesh = Mesh(np.array(jax.devices()), ("x",))
        t = hookgrad.Tensor._wrap(jax.device_put(np.arange(4.0), NamedSharding(mesh, PartitionSpec("x"))))
        with pytest.raises(NotImplementedError, match="sharded over 2 devices"):
            t.data_ptr()
        with pytest.raises(NotImplementedError, match="t.cpu\\\\(\\\\).data_ptr\\\\(\\\\)"):
            t.untyped_storage().data_ptr()
        print("ok")
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=ROOT,
                                   XLA_FLAGS="--xla_force_host_platform_device_count=2"))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-4000:]
