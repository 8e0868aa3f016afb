"""PyTorch's exact words for errors that hookgrad raised with the right type but its own
(or JAX's) wording: a kernel's name, a parser's refusal, a size check made before the
computation. Each row is compared with PyTorch where it is installed, and pinned."""
import pytest

from tests.differential import raises_as_torch


def _x(L):
    return L.ones(2, 3)


ROWS = {
    "bitwise_and of floats": (lambda L: L.bitwise_and(_x(L), _x(L)), NotImplementedError,
                              r"^\"bitwise_and_cpu\" not implemented for 'Float'$"),
    "| of floats": (lambda L: _x(L) | _x(L), NotImplementedError,
                    r"^\"bitwise_or_cpu\" not implemented for 'Float'$"),
    "bitwise_not of complex": (lambda L: L.bitwise_not(L.ones(2, dtype=L.complex64)),
                               NotImplementedError,
                               r"^\"bitwise_not_cpu\" not implemented for 'ComplexFloat'$"),
    "left shift of floats": (lambda L: L.bitwise_left_shift(_x(L), _x(L)), NotImplementedError,
                             r"^\"lshift_cpu\" not implemented for 'Float'$"),
    "~ of floats": (lambda L: ~_x(L), TypeError,
                    r"^~ \(operator\.invert\) is only implemented on integer and Boolean-type "
                    r"tensors$"),
    "true_divide of None": (lambda L: L.true_divide(_x(L), None), TypeError,
                            r"^true_divide\(\) received an invalid combination of arguments - "
                            r"got \(Tensor, NoneType\), but expected one of:\n \* \(Tensor input, "
                            r"Tensor other, \*, Tensor out = None\)\n \* \(Tensor input, Number "
                            r"other\)"),
    "true_divide of a list": (lambda L: L.true_divide([1.0], _x(L)), TypeError,
                              r"^true_divide\(\) received an invalid combination of arguments "
                              r"- got \(list, Tensor\)"),
    "max over a list": (lambda L: L.max(_x(L), [0, 1]), TypeError,
                        r"^max\(\) received an invalid combination of arguments - got \((Tensor, "
                        r")?list\)"),
    "cumsum over None": (lambda L: L.cumsum(_x(L), None), TypeError,
                         r"^cumsum\(\): argument 'dim' \(position [12]\) must be int, not "
                         r"NoneType$"),
    "median over a float": (lambda L: L.median(_x(L), dim=1.5), TypeError,
                            r"^median\(\): argument 'dim' (\(position 1\) )?must be int, not "
                            r"float$"),
    "cat of None": (lambda L: L.cat([_x(L), None]), TypeError,
                    r"^expected Tensor as element 1 in argument 0, but got NoneType$"),
    "batch_norm's running_mean": (lambda L: L.nn.functional.batch_norm(
        _x(L), L.ones(4), L.ones(4)), RuntimeError,
        r"^running_mean should contain 3 elements not 4$"),
    "batch_norm's weight in training": (lambda L: L.nn.functional.batch_norm(
        _x(L), None, None, L.ones(2), training=True), RuntimeError,
        r"^weight should contain 3 elements not 2$"),
    "einsum's unknown output": (lambda L: L.einsum("ij->k", _x(L)), RuntimeError,
                                r"^einsum\(\): output subscript k does not appear in the "
                                r"equation for any input operand$"),
    "einsum of too few operands": (lambda L: L.einsum("ij,jk->ik", _x(L)), RuntimeError,
                                   r"^einsum\(\): fewer operands were provided than specified "
                                   r"in the equation$"),
    "einsum of too many operands": (lambda L: L.einsum("ij->i", _x(L), _x(L)), RuntimeError,
                                    r"^einsum\(\): more operands were provided than specified "
                                    r"in the equation$"),
    "einsum's subscripts of an operand": (lambda L: L.einsum("ijk->i", _x(L)), RuntimeError,
                                          r"^einsum\(\): the number of subscripts in the "
                                          r"equation \(3\) does not match the number of "
                                          r"dimensions \(2\) for operand 0 and no ellipsis was "
                                          r"given$"),
    "reshape to a negative size": (lambda L: _x(L).reshape(-1, -3), RuntimeError,
                                   r"^invalid shape dimension -3 at index 1 of shape \[-1, -3\]$"),
    "view to a negative size": (lambda L: _x(L).view(-2, 3), RuntimeError,
                                r"^invalid shape dimension -2 at index 0 of shape \[-2, 3\]$"),
}


# the activations' kernels refuse integer and bool input (complex too, but for silu's)
KERNELS = {"gelu": "GeluKernelImpl", "silu": "silu_cpu", "mish": "mish_cpu",
           "logsigmoid": "log_sigmoid_cpu", "hardswish": "hardswish_cpu", "elu": "elu_cpu",
           "selu": "elu_cpu", "softplus": "softplus_cpu", "hardshrink": "hardshrink_cpu",
           "softshrink": "softshrink_check", "leaky_relu": "leaky_relu_cpu", "glu": "glu_cpu"}
for _name, _kernel in KERNELS.items():
    for _dt, _kind in (("int64", "Long"), ("bool", "Bool"), ("complex64", "ComplexFloat")):
        if _name == "silu" and _dt == "complex64":
            continue
        ROWS[f"{_name} of {_dt}"] = (
            lambda L, n=_name, d=_dt: getattr(L.nn.functional, n)(
                L.ones(2, 2, dtype=getattr(L, d))),
            NotImplementedError, rf"^\"{_kernel}\" not implemented for '{_kind}'$")
# a scalar argument that is no number: the parser's words, not float()'s
for _call, _fn, _arg, _wanted in (
        (lambda L: L.nn.functional.elu(_x(L), "a"), "elu", "alpha", "Number"),
        (lambda L: L.nn.functional.hardshrink(_x(L), "a"), "hardshrink", "lambd", "Number"),
        (lambda L: L.nn.functional.threshold(_x(L), "a", 0.0), "threshold", "threshold", "Number"),
        (lambda L: L.nn.functional.softplus(_x(L), "a"), "softplus", "beta", "Number"),
        (lambda L: L.logit(_x(L), eps="a"), "logit", "eps", "float"),
        (lambda L: L.fft.fftfreq(3, d=None), "fft_fftfreq", "d", "float"),
        (lambda L: L.fft.rfftfreq(2.5), "fft_rfftfreq", "n", "int")):
    ROWS[f"{_fn}'s {_arg}"] = (_call, TypeError,
                               rf"^{_fn}\(\): argument '{_arg}' (\(position \d\) )?"
                               rf"must be {_wanted}, not (str|NoneType|float)$")
ROWS.update({
    "fft of a list": (lambda L: L.fft.fft([1.0]), TypeError,
                      r"^fft_fft\(\): argument 'input' \(position 1\) must be Tensor, not list$"),
    "ihfftn of None": (lambda L: L.fft.ihfftn(None), TypeError,
                       r"^fft_ihfftn\(\): argument 'input' \(position 1\) must be Tensor, not "
                       r"NoneType$"),
    "fft of n=-1": (lambda L: L.fft.fft(L.ones(3), n=-1), RuntimeError,
                    r"^Invalid number of data points \(-1\) specified$"),
    "rfft of n=0": (lambda L: L.fft.rfft(L.ones(3), n=0), RuntimeError,
                    r"^Invalid number of data points \(0\) specified$"),
    "fftfreq of -1": (lambda L: L.fft.fftfreq(-1), RuntimeError,
                      r"^Trying to create tensor with negative dimension -1: \[-1\]$"),
})


@pytest.mark.parametrize("call, exc, match", ROWS.values(), ids=ROWS.keys())
def test_the_error_is_worded_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)
