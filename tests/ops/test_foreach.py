"""``torch._foreach_*`` beyond the op-table rows (tests/ops/_op_table.py): the ternary ops
``_foreach_addcmul``/``_foreach_addcdiv``/``_foreach_lerp`` and their in-place forms in
each of PyTorch's forms (a number, a list of numbers, a 1-d Tensor of numbers, a list of
Tensors), with PyTorch's values, nodes, gradients and errors. Compared with PyTorch where
it is installed."""
import numpy as np
import pytest

from tests.differential import py, raises_as_torch, same_as_torch

_RNG = np.random.default_rng(0)
_A, _B = _RNG.random(2).astype(np.float32), _RNG.random(3).astype(np.float32)
_C, _D = _RNG.random(2).astype(np.float32) + 1, _RNG.random(3).astype(np.float32) + 1


def _lists(L, grad=False):
    """self, tensor1, tensor2: two tensors each, of two shapes."""
    return ([L.tensor(_A, requires_grad=grad), L.tensor(_B, requires_grad=grad)],
            [L.tensor(_C), L.tensor(_D)], [L.tensor(_C[::-1].copy()), L.tensor(_D * 2)])


def _result(out):
    return [[py(t), t.grad_fn.name() if t.grad_fn is not None else None] for t in out]


FORMS = {  # (id: call(L, self, t1, t2)) -> a tuple of Tensors
    "addcmul": lambda L, a, b, c: L._foreach_addcmul(a, b, c),
    "addcmul by a number": lambda L, a, b, c: L._foreach_addcmul(a, b, c, 2.0),
    "addcmul value=": lambda L, a, b, c: L._foreach_addcmul(a, b, c, value=-1),
    "addcmul by a list": lambda L, a, b, c: L._foreach_addcmul(a, b, c, [2.0, 3.0]),
    "addcmul scalars=": lambda L, a, b, c: L._foreach_addcmul(a, b, c, scalars=[2.0, 3.0]),
    "addcdiv": lambda L, a, b, c: L._foreach_addcdiv(a, b, c),
    "addcdiv by a number": lambda L, a, b, c: L._foreach_addcdiv(a, b, c, 0.5),
    "addcdiv by a list": lambda L, a, b, c: L._foreach_addcdiv(a, b, c, [2.0, -1.0]),
    "lerp by a number": lambda L, a, b, c: L._foreach_lerp(a, b, 0.3),
    "lerp by a 0-d Tensor": lambda L, a, b, c: L._foreach_lerp(a, b, L.tensor(0.3)),
    "lerp weight=": lambda L, a, b, c: L._foreach_lerp(a, b, weight=0.7),
    "lerp by a list": lambda L, a, b, c: L._foreach_lerp(a, b, [0.3, 0.6]),
    "lerp by Tensors": lambda L, a, b, c: L._foreach_lerp(a, b, c),
    "lerp weights=": lambda L, a, b, c: L._foreach_lerp(a, b, weights=c),
}


@pytest.mark.parametrize("case", list(FORMS))
def test_each_form_gives_pytorchs_values_node_and_gradients(case):
    def run(L):
        a, b, c = _lists(L, grad=True)
        out = FORMS[case](L, a, b, c)
        (out[0].sum() + 2 * out[1].sum()).backward()
        return [_result(out), [py(t.grad) for t in a], type(out).__name__]
    got = same_as_torch(run)
    assert got[0][0][1].startswith("Foreach") and got[2] == "tuple"  # one node per list


def test_a_tensor_of_scalars_is_read_as_numbers():
    # (PyTorch records no differentiable node for this form: compared by value)
    def run(L):
        out = L._foreach_addcdiv(*_lists(L), L.tensor([2.0, 3.0]))
        a = _lists(L)[0]
        L._foreach_addcmul_(a, *_lists(L)[1:], L.tensor([0.5, 2.0]))
        return [py(t.detach()) for t in (*out, *a)]
    got = same_as_torch(run)
    assert len(got) == 4 and len(got[1]) == 3


INPLACE = {
    "addcmul_": lambda L, a, b, c: L._foreach_addcmul_(a, b, c, 0.5),
    "addcmul_ by a list": lambda L, a, b, c: L._foreach_addcmul_(a, b, c, [0.5, 2]),
    "addcdiv_": lambda L, a, b, c: L._foreach_addcdiv_(a, b, c, value=3),
    "lerp_": lambda L, a, b, c: L._foreach_lerp_(a, b, 0.5),
    "lerp_ by a list": lambda L, a, b, c: L._foreach_lerp_(a, b, [0.1, 0.2]),
    "lerp_ by Tensors": lambda L, a, b, c: L._foreach_lerp_(a, b, c),
}


@pytest.mark.parametrize("case", list(INPLACE))
def test_inplace_forms_write_each_tensor_with_its_own_node(case):
    def run(L):
        leaves, b, c = _lists(L, grad=True)
        a = [t * 1 for t in leaves]
        out = INPLACE[case](L, a, b, c)
        return [out is a, _result(a)]
    got = same_as_torch(run)
    assert got[0] and not got[1][0][1].startswith("Foreach")


def test_each_pair_promotes_as_its_op():
    got = same_as_torch(lambda L: [str(t.dtype).split(".")[1] for t in L._foreach_addcmul(
        [L.ones(2, dtype=L.float64), L.ones(3)], [L.ones(2), L.ones(3)],
        [L.ones(2), L.ones(3, dtype=L.float64)])])
    assert got == ["float64", "float64"]


def _a(L):
    return [L.ones(2), L.ones(3)]


_ADDC = r"^_foreach_addcmul\(\) received an invalid combination of arguments - got \({}\), " \
        r"but expected one of:\n \* \(tuple of Tensors self, tuple of Tensors tensor1, tuple " \
        r"of Tensors tensor2, tuple of Scalars scalars\)\n"
_LERP = r"^_foreach_lerp\(\) received an invalid combination of arguments - got \({}\), but " \
        r"expected one of:\n \* \(tuple of Tensors self, tuple of Tensors tensors1, Number " \
        r"weight\)\n"
ERRORS = {  # (call, error, message)
    "lists of two lengths": (lambda L: L._foreach_addcmul(_a(L), _a(L), _a(L)[:1]),
                             RuntimeError, r"^Tensor lists must have the same number of "
                                           r"tensors, got 2 and 1$"),
    "a short scalar list": (lambda L: L._foreach_addcdiv(_a(L), _a(L), _a(L), [1.0]),
                            RuntimeError, r"^Tensor list must have same number of elements as "
                                          r"scalar list\.$"),
    "a Tensor of three scalars": (lambda L: L._foreach_addcmul(_a(L), _a(L), _a(L),
                                                               L.tensor([1.0, 2, 3])),
                                  RuntimeError, r"^Expected length of scalars to match input "
                                                r"of length 2 but got 3 instead\.$"),
    "a 0-d Tensor of scalars": (lambda L: L._foreach_addcmul(_a(L), _a(L), _a(L),
                                                             L.tensor(2.0)),
                                RuntimeError, r"^Expected packed scalar Tensor to be of "
                                              r"dimension 1\. Got 0 instead\.$"),
    "a string value": (lambda L: L._foreach_addcmul(_a(L), _a(L), _a(L), "x"), TypeError,
                       _ADDC.format("list, list, list, str")),
    "tensor2 left out": (lambda L: L._foreach_addcmul(_a(L), _a(L)), TypeError,
                         _ADDC.format("list, list")),
    "value and scalars": (lambda L: L._foreach_addcmul(_a(L), _a(L), _a(L), value=2,
                                                       scalars=[1, 2]), TypeError,
                          _ADDC.format("list, list, list, scalars=list, value=int")),
    "an empty list": (lambda L: L._foreach_addcmul([], [], []), RuntimeError,
                      r"^Tensor list must have at least one tensor\.$"),
    "a Tensor for self": (lambda L: L._foreach_addcmul(L.ones(2), _a(L), _a(L)), TypeError,
                          r"^_foreach_addcmul\(\): argument 'self' \(position 1\) must be "
                          r"tuple of Tensors, not Tensor$"),
    "integer addcdiv": (lambda L: L._foreach_addcdiv([L.ones(2, dtype=L.long)],
                                                     [L.ones(2, dtype=L.long)],
                                                     [L.ones(2, dtype=L.long)]),
                        RuntimeError, r"^Integer division with addcdiv is no longer supported"),
    "lerp without a weight": (lambda L: L._foreach_lerp(_a(L), _a(L)), TypeError,
                              _LERP.format("list, list")),
    "lerp of a string": (lambda L: L._foreach_lerp(_a(L), _a(L), "x"), TypeError,
                         _LERP.format("list, list, str")),
    "lerp of a short list": (lambda L: L._foreach_lerp(_a(L), _a(L), [0.5]), RuntimeError,
                             r"^Tensor list must have same number of elements as scalar "
                             r"list\.$"),
    "lerp of a short Tensor list": (lambda L: L._foreach_lerp(_a(L), _a(L), [L.ones(2)]),
                                    RuntimeError, r"^Tensor lists must have the same number "
                                                  r"of tensors, got 2 and 1$"),
    "lerp to a float64 end": (lambda L: L._foreach_lerp(_a(L), [t.double() for t in _a(L)],
                                                        0.5),
                              RuntimeError, r"^expected dtype float for `end` but got dtype "
                                            r"double$"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_arguments_raise_pytorchs_error(case):
    raises_as_torch(*ERRORS[case])
