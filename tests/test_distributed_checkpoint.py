"""``torch.distributed.checkpoint``'s state-dict functions on a model of one process,
against PyTorch's; across processes (FSDP shards) they are checked in
tests/test_distributed_processes.py."""
import pytest

from tests.differential import py, raises, same_as_torch


def _model(L):
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
    with L.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(L.arange(p.numel(), dtype=L.float32).reshape(p.shape) * 0.1 + i)
    return m


def test_model_state_dict_gets_and_sets_as_pytorchs():
    def f(L):
        from importlib import import_module
        sd = import_module(L.__name__ + ".distributed.checkpoint.state_dict")
        m = _model(L)
        m[2].bias.requires_grad_(False)
        full = sd.get_model_state_dict(m, options=sd.StateDictOptions(full_state_dict=True))
        unfrozen = sd.get_model_state_dict(
            m, options=sd.StateDictOptions(ignore_frozen_params=True))
        other = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
        keys = sd.set_model_state_dict(other, dict(full))
        partial = sd.set_model_state_dict(
            other, {"0.weight": full["0.weight"] * 2},
            options=sd.StateDictOptions(strict=False))
        return [{k: py(v) for k, v in full.items()}, sorted(unfrozen),
                [list(keys.missing_keys), list(keys.unexpected_keys)],
                sorted(partial.missing_keys), py(other[0].weight), py(other[2].bias),
                raises(sd.set_model_state_dict, other, {"0.weight": full["0.weight"]})]
    got = same_as_torch(f)
    assert got[1] == ["0.bias", "0.weight", "2.weight"] and got[2] == [[], []]
    assert got[6]["raises"] == "RuntimeError"


def test_what_the_state_dict_functions_do_not_do_says_so():
    import hookgrad
    from hookgrad.distributed.checkpoint import state_dict as sd
    m = hookgrad.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match=r"broadcast_from_rank0=True\) yet: give "
                       "every process the full state dict"):
        sd.get_model_state_dict(m, options=sd.StateDictOptions(full_state_dict=True,
                                                               broadcast_from_rank0=True))
    with pytest.raises(NotImplementedError, match=r"torch\.distributed\.checkpoint\."
                       r"state_dict\.get_state_dict yet"):
        sd.get_state_dict(m, [])


def test_a_checkpoint_of_one_process_saves_and_loads_as_pytorchs(tmp_path):
    def f(L):
        from importlib import import_module
        dcp = import_module(L.__name__ + ".distributed.checkpoint")
        path = tmp_path / L.__name__
        state = {"w": L.arange(6.0).reshape(2, 3), "b": L.ones(2, dtype=L.float64),
                 "n": L.tensor([3, 4])}
        meta = dcp.save(state, checkpoint_id=path, no_dist=True)
        back = {"w": L.zeros(2, 3), "b": L.zeros(2, dtype=L.float64),
                "n": L.zeros(2, dtype=L.int64)}
        dcp.load(back, checkpoint_id=str(path), no_dist=True)
        missing = {"zz": L.zeros(1)}
        try:
            dcp.load(missing, checkpoint_id=path, no_dist=True)
            failed = None
        except dcp.CheckpointException as e:
            failed = str(e).splitlines()[0]
        return [{k: py(v) for k, v in back.items()}, sorted(meta.state_dict_metadata),
                failed, raises(dcp.save, state)]
    got = same_as_torch(f)
    assert got[0]["w"] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert got[2] == "CheckpointException ranks:dict_keys([0])"
    assert got[3] == {"raises": "RuntimeError", "message": "`checkpoint_id` must be specified "
                      "if storage_reader/storage_writer is None."}


def test_checkpoints_cross_between_the_libraries(tmp_path):
    torch = pytest.importorskip("torch")
    import torch.distributed.checkpoint as torch_dcp
    import hookgrad
    import hookgrad.distributed.checkpoint as dcp
    dcp.save({"w": hookgrad.arange(4.0) * 2}, checkpoint_id=tmp_path / "h")
    torch_dcp.save({"w": torch.arange(4.0) * 3}, checkpoint_id=tmp_path / "t", no_dist=True)
    into_torch, into_hookgrad = {"w": torch.zeros(4)}, {"w": hookgrad.zeros(4)}
    torch_dcp.load(into_torch, checkpoint_id=tmp_path / "h", no_dist=True)
    dcp.load(into_hookgrad, checkpoint_id=tmp_path / "t")
    assert into_torch["w"].tolist() == [0.0, 2.0, 4.0, 6.0]
    assert into_hookgrad["w"].tolist() == [0.0, 3.0, 6.0, 9.0]


def test_what_distributed_checkpoints_do_not_do_says_so(tmp_path):
    import hookgrad.distributed.checkpoint as dcp
    with pytest.raises(NotImplementedError, match=r"torch\.distributed\.checkpoint\.save with "
                       "a storage_writer or planner yet: pass checkpoint_id="):
        dcp.save({}, checkpoint_id=tmp_path, storage_writer=object())
    with pytest.raises(NotImplementedError, match=r"checkpoint\.save of int values yet "
                       r"\('step'\): save a flat dict of Tensors"):
        dcp.save({"step": 3}, checkpoint_id=tmp_path)
    with pytest.raises(NotImplementedError, match=r"torch\.distributed\.checkpoint\."
                       "FileSystemWriter yet"):
        dcp.FileSystemWriter(tmp_path)
    assert not any(tmp_path.iterdir())
