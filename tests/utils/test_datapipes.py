"""DataPipe bases, registration and determinism markers against torch.utils.data's."""
import itertools
import warnings

import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch

_fresh = itertools.count()  # registries are per process: each scenario takes new names


def _pipes(L):
    """DataPipe classes over ``L``'s bases, at module level: PyTorch's DataLoader pickles a
    DataPipe graph to walk it."""
    prefix = L.__name__.capitalize()
    if prefix + "Numbers" not in globals():
        D = L.utils.data

        class Numbers(D.IterDataPipe):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                yield from range(self.n)

        class Scaled(D.IterDataPipe):
            def __init__(self, source, k=2):
                self.source, self.k = source, k

            def __iter__(self):
                for x in self.source:
                    yield x * self.k

        class Table(D.MapDataPipe):
            def __getitem__(self, i):
                return L.tensor([i, 10 * i])

            def __len__(self):
                return 4

        class PlusOne(D.MapDataPipe):
            def __init__(self, source):
                self.source = source

            def __getitem__(self, i):
                return self.source[i] + 1

            def __len__(self):
                return len(self.source)

        for cls in (Numbers, Scaled, Table, PlusOne):
            cls.__qualname__ = prefix + cls.__name__  # where pickle finds it
            globals()[cls.__qualname__] = cls
    return [globals()[prefix + n] for n in ("Numbers", "Scaled", "Table", "PlusOne")]


def test_functional_datapipes_chain_as_methods():
    name = f"hg_scale_{next(_fresh)}"

    def run(L):
        D = L.utils.data
        Numbers, Scaled, *_ = _pipes(L)
        assert D.functional_datapipe(name)(Scaled) is Scaled
        pipe = getattr(getattr(Numbers(4), name)(k=3), name)()
        again = raises(D.IterDataPipe.register_datapipe_as_function, name, Scaled)
        own = L.__name__.capitalize()  # repr and str give the qualified name
        return [list(pipe), repr(pipe).removeprefix(own), str(Numbers(1)).removeprefix(own),
                name in dir(Numbers(1)), again,
                isinstance(pipe, D.IterableDataset), type(pipe).__name__]

    got = same_as_torch(run)
    assert got[0] == [0, 6, 12, 18] and got[4]["message"] == (
        f"Unable to add DataPipe function name {name} as it is already taken")


def test_map_datapipes_and_data_loader():
    name = f"hg_plus_{next(_fresh)}"

    def run(L):
        D = L.utils.data
        Numbers, _, Table, PlusOne = _pipes(L)
        D.functional_datapipe(name)(PlusOne)
        plus = getattr(Table(), name)()
        return [py(plus[2]), len(plus), [py(b) for b in D.DataLoader(plus, batch_size=3)],
                [py(b) for b in D.DataLoader(Numbers(5), batch_size=2)]]

    assert same_as_torch(run)[1] == 4


def test_data_chunk():
    def run(L):
        chunk = L.utils.data.DataChunk(x for x in (3, 1, 2))
        return [list(chunk), chunk.as_str("  "), list(chunk.raw_iterator()), chunk == [3, 1, 2],
                isinstance(chunk, list), chunk.items]

    assert same_as_torch(run)[1] == "  [3, 1, 2]"


def test_non_deterministic_and_guaranteed_determinism():
    def run(L):
        D = L.utils.data
        Numbers, Scaled, *_ = _pipes(L)
        shuffled = D.non_deterministic(Scaled)
        maybe = D.non_deterministic(lambda source, k=2: k < 0)(Scaled)
        out = [list(shuffled(Numbers(2))), list(maybe(Numbers(2), k=-1))]
        with D.guaranteed_datapipes_determinism():
            out += [raises(shuffled, Numbers(2)), raises(lambda: maybe(Numbers(2), k=-1)),
                    list(maybe(Numbers(2), k=5))]
        out += [list(shuffled(Numbers(1))), raises(D.non_deterministic, int),
                raises(D.non_deterministic, 3),
                raises(D.non_deterministic(lambda: 1)(Scaled)),
                raises(D.non_deterministic(lambda: True), int)]
        return out

    got = same_as_torch(run)
    assert [g["message"] for g in got[2:4]] == [
        "Scaled is non-deterministic, but you set 'guaranteed_datapipes_determinism'. You "
        "can turn off determinism for this DataPipe if that is acceptable for your "
        "application",
        "Scaled is non-deterministic with the inputs, but you set "
        "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
        "if that is acceptable for your application"]
    assert got[6]["message"] == ("Only `IterDataPipe` can be decorated with "
                                 "`non_deterministic`, but int is found")


def test_worker_init_fn_is_deprecated():
    def run(L):
        from importlib import import_module
        compat = import_module(L.__name__ + ".utils.data.backward_compatibility")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = compat.worker_init_fn(0)
        return [out, [(w.category.__name__, str(w.message)) for w in caught]]

    assert same_as_torch(run)[1][0][0] == "FutureWarning"


def test_runtime_validation_disabled_is_a_context_manager():
    def run(L):
        with L.utils.data.runtime_validation_disabled() as bound:
            return [bound]

    assert same_as_torch(run) == [None]


def test_graph_traversal_and_type_validation_are_not_implemented():
    from hookgrad.utils.data import graph, graph_settings
    Numbers, *_ = _pipes(hookgrad)
    for call in (lambda: graph.traverse_dps(Numbers(1)),
                 lambda: graph_settings.apply_sharding(Numbers(1), 2, 0),
                 lambda: hookgrad.utils.data.argument_validation(len),
                 lambda: hookgrad.utils.data.runtime_validation(len)):
        with pytest.raises(NotImplementedError, match="hookgrad does not implement torch"):
            call()
    with pytest.raises(AttributeError, match="does not implement "
                                             "torch.utils.data.IterDataPipe.shuffle"):
        Numbers(1).shuffle()
