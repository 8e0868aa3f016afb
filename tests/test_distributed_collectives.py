"""``hookgrad.distributed``'s collectives and process groups in a world of one process,
against PyTorch's gloo process group of one; between processes they are checked in
tests/test_distributed_processes.py."""
import socket

import pytest

import hookgrad
import hookgrad.distributed as dist
from tests.differential import py, raises, same_as_torch


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_a_world_of_one(body):
    def run(L):
        d = L.distributed
        d.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_port()}", world_size=1,
                             rank=0)
        try:
            return body(L, d)
        finally:
            d.destroy_process_group()
    return run


def test_collectives_of_one_process_leave_or_copy_the_tensor():
    def body(L, d):
        x = L.arange(4.0)
        out = {}
        for op in ("SUM", "MAX", "PRODUCT"):
            t = x.clone()
            d.all_reduce(t, op=getattr(d.ReduceOp, op))
            out[op] = t
        gathered = [L.zeros(4)]
        d.all_gather(gathered, x)
        into = L.zeros(4)
        d.all_gather_into_tensor(into, x)
        t = x.clone()
        d.broadcast(t, src=0)
        scattered = L.zeros(4)
        d.reduce_scatter_tensor(scattered, x)
        listed = L.zeros(4)
        d.reduce_scatter(listed, [x])
        work = d.all_reduce(x.clone(), async_op=True)
        g = d.new_group([0])
        return [py(out), py(gathered), py(into), py(t), py(scattered), py(listed),
                work.wait(), d.get_rank(g), d.get_world_size(g),
                d.get_process_group_ranks(g), d.get_backend(), d.get_world_size()]
    got = same_as_torch(_in_a_world_of_one(body))
    assert got[0]["SUM"] == [0.0, 1.0, 2.0, 3.0] and got[-1] == 1


def test_object_collectives_and_queries_of_one_process(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)

    def body(L, d):
        gathered = [None]
        d.all_gather_object(gathered, {"a": (1, 2.5)})
        sent = [[3, "x"], None]
        d.broadcast_object_list(sent, src=0)
        into, got = [None], [None]
        d.gather_object((5, "x"), into)
        d.scatter_object_list(got, [{"to": 0}])
        return [gathered, sent, into, got, raises(d.scatter_object_list, [], [1]),
                raises(d.scatter_object_list, [None]), raises(d.gather_object, 1),
                d.get_node_local_rank(fallback_rank=4),
                raises(d.get_node_local_rank), raises(d.all_gather_object, [], 1),
                d.is_gloo_available(), d.is_mpi_available()]
    got = same_as_torch(_in_a_world_of_one(body))
    assert got[:4] == [[{"a": (1, 2.5)}], [[3, "x"], None], [(5, "x")], [{"to": 0}]]
    assert [g["raises"] for g in got[4:7]] == ["ValueError"] * 3
    assert got[7] == 4
    assert got[8]["message"].startswith("LOCAL_RANK is not in the environment.")
    assert got[9] == {"raises": "IndexError", "message": "list assignment index out of range"}


def test_collectives_bad_input_is_refused():
    def body(L, d):
        x = L.arange(4.0)
        return [raises(d.all_gather, [L.zeros(4), L.zeros(4)], x),
                raises(d.broadcast, x),                  # neither src nor group_src
                raises(d.all_reduce, [1.0, 2.0]),
                raises(d.new_group, [3])]
    got = same_as_torch(_in_a_world_of_one(body))
    assert [g["raises"] for g in got] == ["RuntimeError", "ValueError", "TypeError",
                                          "ValueError"]
    assert got[2]["message"].startswith("Invalid function argument. Expected parameter "
                                        "`tensor` of type torch.Tensor")
    assert got[3]["message"] == "Rank 3 is out of range. Valid ranks are 0 to 0 (world_size=1)"


def test_rooted_and_all_to_all_exchanges_of_one_process():
    def body(L, d):
        x = L.arange(4.0)
        gathered = [L.zeros(4)]
        d.gather(x, gathered)
        scattered = L.zeros(2)
        d.scatter(scattered, [L.full((2,), 7.0)], src=0)
        single = L.zeros(4)
        d.all_to_all_single(single, x * 2)
        split = L.zeros(3)
        d.all_to_all_single(split, x[:3], [3], [3])
        listed = [L.zeros(2, 2)]
        d.all_to_all(listed, [L.ones(2, 2)])
        return [py(gathered), py(scattered), py(single), py(split), py(listed),
                raises(d.gather, x),                           # no list on the destination
                raises(d.scatter, scattered),
                raises(d.send, x, 0)]                           # to itself
    got = same_as_torch(_in_a_world_of_one(body))
    assert got[0] == [[0.0, 1.0, 2.0, 3.0]] and got[2] == [0.0, 2.0, 4.0, 6.0]
    assert got[5] == {"raises": "ValueError", "message":
                      "Argument ``gather_list`` must be specified on destination rank."}
    assert got[7] == {"raises": "ValueError", "message":
                      "Invalid destination rank: destination rank should not be the same "
                      "as the rank of the current process."}


def test_exchanges_hookgrad_refuses_say_why():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_port()}", world_size=1,
                            rank=0)
    try:
        x = hookgrad.arange(4.0)
        with pytest.raises(ValueError, match=r"input_split_sizes \[2, 1\] must hold 1 sizes "
                           r"\(one per rank of the group\) adding up to the 3 rows of input"):
            dist.all_to_all_single(hookgrad.zeros(3), x[:3], [3], [2, 1])
        with pytest.raises(ValueError, match=r"output_split_sizes \[2\] must hold 1 sizes "
                           r"\(one per rank of the group\) adding up to the 4 rows of output"):
            dist.all_to_all_single(hookgrad.zeros(4), x, [2])
        with pytest.raises(ValueError, match=r"gather\(\): gather_list must hold 1 tensors"):
            dist.gather(x, [x.clone(), x.clone()])
        with pytest.raises(ValueError, match=r"all_to_all\(\): input_tensor_list must hold 1"):
            dist.all_to_all([x.clone()], [])
        with pytest.raises(ValueError, match="Invalid source rank: source rank should not "
                           "be the same as the rank of the current process"):
            dist.irecv(x, 0)   # PyTorch's gloo fails there with "Pair is not connected"
        with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                           r"torch.distributed.recv from any source yet: pass src="):
            dist.recv(x)
    finally:
        dist.destroy_process_group()


def test_collectives_before_init_process_group_raise():
    def f(L):
        d = L.distributed
        return [raises(d.all_reduce, L.ones(2)), raises(d.get_rank), raises(d.new_group)]
    got = same_as_torch(f)
    assert got[0] == {"raises": "ValueError", "message":
                      "Default process group has not been initialized, please make sure "
                      "to call init_process_group."}


def test_hookgrad_messages_say_what_was_expected():
    with pytest.raises(ValueError, match=r"Invalid backend: 'ucc' \(expected one of"):
        dist.init_process_group("ucc", world_size=1)
    with pytest.raises(ValueError, match=r"rank 2 is out of range for a world of size 2"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=2, rank=2)
    assert not dist.is_initialized()
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        with pytest.raises(RuntimeError, match=r"all_gather\(\): invalid output tensor list "
                           r"\(expected length 1, one tensor per rank of the group, got 0\)"):
            dist.all_gather([], hookgrad.ones(2))
        with pytest.raises(ValueError, match=r"Global rank 1 is not part of group "
                           r"ProcessGroup\(ranks=\[0\]\) \(src= is a global rank\)"):
            dist.broadcast(hookgrad.ones(2), src=1)
        with pytest.raises(ValueError, match=r"Must specify global_rank or group_rank \(pass "
                           r"dst= or group_dst=\)"):
            dist.reduce(hookgrad.ones(2))
        with pytest.raises(ValueError, match=r"reduce_scatter_tensor\(\): input of shape "
                           r"\(3,\) must be 1 times output \(2,\)"):
            dist.reduce_scatter_tensor(hookgrad.zeros(2), hookgrad.ones(3))
    finally:
        dist.destroy_process_group()


def test_a_world_without_a_coordinator_address_says_how_to_give_one(monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    for v in ("SLURM_JOB_ID", "TPU_WORKER_HOSTNAMES", "OMPI_COMM_WORLD_SIZE"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(ValueError, match=r"no coordinator address for a world of size 2: "
                       r"pass init_method='tcp://HOST:PORT' or set MASTER_ADDR and "
                       "MASTER_PORT"):
        dist.init_process_group("gloo", world_size=2, rank=0)
    assert not dist.is_initialized()
