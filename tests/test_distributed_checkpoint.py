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
