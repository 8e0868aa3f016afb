"""PyTorch's exact words for errors that hookgrad raised with the right type but its own
(or JAX's) wording: a kernel's name, a parser's refusal, a size check made before the
computation. Each row is compared with PyTorch where it is installed, and pinned."""
import re

import pytest

from tests.differential import py, raises_as_torch, same_as_torch


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
    "masked_fill past float32's range": (
        lambda L: L.zeros(2).masked_fill(L.tensor([True, False]), 1e300), RuntimeError,
        r"^value cannot be converted to type float without overflow$"),
    "masked_fill_ past uint8's range": (
        lambda L: L.zeros(2, dtype=L.uint8).masked_fill_(L.tensor([True, False]), 256),
        RuntimeError, r"^value cannot be converted to type uint8_t without overflow$"),
    "masked_fill below int8's range": (
        lambda L: L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), -129),
        RuntimeError, r"^value cannot be converted to type int8_t without overflow$"),
    "masked_fill of a complex past its range": (
        lambda L: L.zeros(2, dtype=L.complex64).masked_fill(L.tensor([True, False]), 1e300),
        RuntimeError, r"^value cannot be converted to type c10::complex<float> without overflow$"),
    "masked_fill past int64's range": (
        lambda L: L.zeros(2, dtype=L.int64).masked_fill(L.tensor([True, False]), 2 ** 63),
        RuntimeError, r"^value cannot be converted to type int64_t without overflow$"),
    "masked_fill of an int past any dtype's": (
        lambda L: L.zeros(2).masked_fill(L.tensor([True, False]), 2 ** 70), OverflowError,
        r"^int too big to convert$"),
    "isin of bools": (lambda L: L.isin(L.tensor([True, False]), L.tensor([True])), RuntimeError,
                      r"^Unsupported input type encountered for isin\(\): Bool$"),
    "isin in a bool": (lambda L: L.isin(L.tensor([1, 2]), True), RuntimeError,
                       r"^Unsupported input type encountered for isin\(\): Bool$"),
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



def _F(L):
    return L.nn.functional


def _img(L):
    return L.ones(1, 2, 5, 5)


# nn.functional's argument checks: each of these ran, or let JAX's words (or Python's
# ZeroDivisionError) through, where PyTorch refuses
ROWS.update({
    "conv2d's bias of the wrong size": (
        lambda L: _F(L).conv2d(_img(L), L.ones(1, 2, 2, 2), L.ones(3)), RuntimeError,
        r"^Given weight of size \[1, 2, 2, 2\], expected bias to be 1-dimensional with 1 "
        r"elements, but got bias of size \[3\] instead$"),
    "conv1d's 2-d bias": (
        lambda L: _F(L).conv1d(L.ones(1, 2, 5), L.ones(1, 2, 2), L.ones(1, 1)), RuntimeError,
        r"^Given weight of size \[1, 2, 2\], expected bias to be 1-dimensional with 1 "
        r"elements, but got bias of size \[1, 1\] instead$"),
    "conv_transpose2d's bias": (
        lambda L: _F(L).conv_transpose2d(_img(L), L.ones(2, 1, 2, 2), L.ones(3)), RuntimeError,
        r"^Given transposed=1, weight of size \[2, 1, 2, 2\], expected bias to be "
        r"1-dimensional with 1 elements, but got bias of size \[3\] instead$"),
    "conv2d's weight fewer than groups": (
        lambda L: _F(L).conv2d(_img(L), L.ones(1, 2, 2, 2), groups=3), RuntimeError,
        r"^Given groups=3, expected weight to be at least 3 at dimension 0, but got weight of "
        r"size \[1, 2, 2, 2\] instead$"),
    "conv_transpose2d's weight not divisible by groups": (
        lambda L: _F(L).conv_transpose2d(_img(L), L.ones(3, 2, 2, 2), groups=2), RuntimeError,
        r"^Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight "
        r"of size \[\[3, 2, 2, 2\]\] instead$"),
    "conv2d of dilation 0": (
        lambda L: _F(L).conv2d(_img(L), L.ones(1, 2, 2, 2), dilation=(2, 0)), RuntimeError,
        r"^dilation should be greater than zero, but got \[2, 0\]$"),
    "conv3d of a negative dilation": (
        lambda L: _F(L).conv3d(_img(L)[None], L.ones(1, 1, 2, 2, 2), dilation=-1), RuntimeError,
        r"^dilation should be greater than zero$"),
    "conv1d of dilation 0": (
        lambda L: _F(L).conv1d(L.ones(1, 2, 5), L.ones(1, 2, 2), dilation=0), RuntimeError,
        r"^dilation should be greater than zero, but got \[1, 0\]$"),
    "conv2d of dilation 0 on a batch of 2": (
        lambda L: _F(L).conv2d(L.ones(2, 2, 5, 5), L.ones(1, 2, 2, 2), dilation=0),
        RuntimeError, r"^non-positive dilation is not supported$"),
    "multilabel_margin_loss of a float target": (
        lambda L: _F(L).multilabel_margin_loss(_x(L), _x(L)), RuntimeError,
        r"^expected scalar type Long but found Float$"),
    "igamma of complex": (lambda L: L.igamma(L.ones(2, dtype=L.complex64), L.ones(2)),
                          NotImplementedError,
                          r"^\"igamma_cpu\" not implemented for 'ComplexFloat'$"),
    "avg_pool1d of a 1-d input": (lambda L: _F(L).avg_pool1d(L.ones(3), 2), RuntimeError,
                                  r"^Expected 2 to 3 dimensions, but got 1-dimensional tensor "
                                  r"for argument #1 'self' \(while checking arguments for "
                                  r"avg_pool1d\)$"),
    "adaptive_avg_pool1d of a 4-d input": (
        lambda L: _F(L).adaptive_avg_pool1d(_img(L), 2), RuntimeError,
        r"^Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' "
        r"\(while checking arguments for adaptive_avg_pool1d\)$"),
    "max_pool1d of a window too large": (
        lambda L: _F(L).max_pool1d(L.ones(1, 2, 3), 2, padding=0, dilation=3), RuntimeError,
        r"^max_pool1d\(\) Invalid computed output size: 0$"),
    "instance_norm's running stats": (
        lambda L: _F(L).instance_norm(L.ones(2, 2, 5, 5), L.ones(3), L.ones(3)), RuntimeError,
        r"^running_mean should contain 4 elements not 6$"),
    "instance_norm's weight in eval": (
        lambda L: _F(L).instance_norm(_img(L), L.ones(2), L.ones(2), L.ones(3),
                                      use_input_stats=False), RuntimeError,
        r"^weight should contain 2 elements not 3$"),
    "layer_norm's bias": (lambda L: _F(L).layer_norm(_x(L), (3,), None, L.ones(4)),
                          RuntimeError, r"^Expected bias to be of same shape as normalized_shape, "
                                        r"but got bias of shape \[4\] and normalized_shape = "
                                        r"\[3\]$"),
    "rms_norm's weight": (lambda L: _F(L).rms_norm(_x(L), (3,), L.ones(4)), RuntimeError,
                          r"^Expected weight to be of same shape as normalized_shape, but got "
                          r"weight of shape \[4\] and normalized_shape = \[3\]$"),
    "rms_norm's shape": (lambda L: _F(L).rms_norm(L.ones(2, 3, 4), (2, 4)), RuntimeError,
                         r"^Given normalized_shape=\[2, 4\], expected input with shape "
                         r"\[\*2, 4\], but got input of size\[2, 3, 4\]$"),
    "group_norm's weight": (lambda L: _F(L).group_norm(_img(L), 2, L.ones(3)), RuntimeError,
                            r"^Expected weight to be a vector of size equal to the number of "
                            r"channels in input, but got weight of shape \[3\] and input of "
                            r"shape \[1, 2, 5, 5\]$"),
    "group_norm's bias": (lambda L: _F(L).group_norm(_img(L), 2, None, L.ones(3)), RuntimeError,
                          r"^Expected bias to be a vector of size equal to the number of channels "
                          r"in input, but got bias of shape \[0\] and input of shape "
                          r"\[1, 2, 5, 5\]$"),
    "softsign of a str": (lambda L: _F(L).softsign("a"), AttributeError,
                          r"^'str' object has no attribute 'abs'$"),
    "tanhshrink of None": (lambda L: _F(L).tanhshrink(None), AttributeError,
                           r"^'NoneType' object has no attribute 'tanh'$"),
    "avg_pool2d of kernel 0": (lambda L: _F(L).avg_pool2d(_img(L), 0), RuntimeError,
                               r"^stride should not be zero$"),
    "avg_pool2d of kernel 0, stride 1": (
        lambda L: _F(L).avg_pool2d(_img(L), (2, 0), 1), RuntimeError,
        r"^kernel size should be greater than zero, but got kH: 2 kW: 0$"),
    "avg_pool1d of kernel 0, stride 1": (
        lambda L: _F(L).avg_pool1d(L.ones(2, 5), 0, 1), RuntimeError,
        r"^kernel size should be greater than zero, but got kH: 1 kW: 0$"),
    "avg_pool3d of a negative stride": (
        lambda L: _F(L).avg_pool3d(_img(L), 1, (1, 1, -1)), RuntimeError,
        r"^stride should be greater than zero, but got dT: 1 dH: 1 dW: -1$"),
    "softmax of dtype 'a'": (lambda L: _F(L).softmax(_x(L), 1, dtype="a"), TypeError,
                             r"^softmax\(\): argument 'dtype' must be torch.dtype, not str$"),
    "log_softmax of dtype 1": (lambda L: L.log_softmax(_x(L), 1, dtype=1), TypeError,
                               r"^log_softmax\(\): argument 'dtype' must be torch.dtype, not "
                               r"int$"),
    "embedding of a 1-d weight": (lambda L: _F(L).embedding(L.tensor([0, 1]), L.ones(3)),
                                  RuntimeError, r"^'weight' must be 2-D$"),
    "nll_loss's weight of the wrong size": (
        lambda L: _F(L).nll_loss(_x(L), L.tensor([0, 5]), weight=L.ones(4)), RuntimeError,
        r"^weight tensor should be defined either for all 3 classes or no classes but got "
        r"weight tensor of shape: \[4\]$"),
    "nll_loss2d's weight of the wrong size": (
        lambda L: _F(L).nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 4, dtype=L.int64),
                                 weight=L.ones(4)), RuntimeError,
        r"^weight tensor should be defined either for all or no classes$"),
    "cross_entropy's weight with probabilities": (
        lambda L: _F(L).cross_entropy(_x(L), _x(L), weight=L.ones(4)), RuntimeError,
        r"^cross_entropy: weight tensor should be defined either for all 3 classes or no "
        r"classes but got weight tensor of shape: \[4\]$"),
    "cross_entropy's label_smoothing": (
        lambda L: _F(L).cross_entropy(_x(L), L.tensor([0, 1]), label_smoothing=2.0),
        RuntimeError, r"^label_smoothing must be between 0.0 and 1.0. Got: 2$"),
    "rrelu's bounds out of order": (lambda L: _F(L).rrelu(_x(L), 0.5, 0.1, training=True),
                                    RuntimeError, r"^Lower bound should be less than or equal "
                                                  r"to the upper bound$"),
    "torch.rrelu_'s bounds in eval": (lambda L: L.rrelu_(_x(L), 0.5, 0.1), RuntimeError,
                                      r"^Lower bound should be less than or equal to the upper "
                                      r"bound$"),
    "celu of alpha 0": (lambda L: _F(L).celu(_x(L), 0.0), RuntimeError,
                        r"^ZeroDivisionError: alpha cannot be 0 for CELU$"),
    "normalize of int": (lambda L: _F(L).normalize(L.ones(2, 3, dtype=L.int64)), RuntimeError,
                         r"^linalg.vector_norm: Expected a floating point or complex tensor as "
                         r"input. Got Long$"),
    "glu over dim 5": (lambda L: _F(L).glu(_x(L), 5), IndexError,
                       r"^Dimension out of range \(expected to be in range of \[-2, 1\], but "
                       r"got 5\)$"),
    "glu over a bool dim": (lambda L: _F(L).glu(L.ones(2, 4), True), TypeError,
                            r"^glu\(\): argument 'dim' \(position 2\) must be int, not bool$"),
    "unfold of a 2-d input": (lambda L: _F(L).unfold(_x(L), 2), IndexError,
                              r"^Dimension out of range \(expected to be in range of \[-2, 1\], "
                              r"but got 2\)$"),
    "unfold of a 5-d input": (lambda L: _F(L).unfold(L.ones(1, 1, 2, 2, 2), 2), RuntimeError,
                              r"^Expected 3D or 4D \(batch mode\) tensor with possibly 0 batch "
                              r"size and other non-zero dimensions for input, but got: "
                              r"\[1, 1, 2, 2, 2\]$"),
    "fold of a 1-d input": (lambda L: _F(L).fold(L.ones(4), (3, 3), 2), RuntimeError,
                            r"^Expected 2D or 3D \(batch mode\) tensor for input with possibly 0 "
                            r"batch size and non-zero dimensions for input, but got: \[4\]$"),
    "multi_head_attention_forward without in_proj_weight": (
        lambda L: _F(L).multi_head_attention_forward(
            _x(L), _x(L), _x(L), 3, 1, None, None, None, None, False, 0.0, L.ones(3, 3), None),
        AssertionError, r"^use_separate_proj_weight is False but in_proj_weight is None$"),
    "multi_head_attention_forward without k_proj_weight": (
        lambda L: _F(L).multi_head_attention_forward(
            _x(L), _x(L), _x(L), 3, 1, None, None, None, None, False, 0.0, L.ones(3, 3), None,
            use_separate_proj_weight=True, q_proj_weight=L.ones(3, 3)),
        AssertionError, r"^use_separate_proj_weight is True but k_proj_weight is None$"),
})

# torch.special: an alias's argument errors name it as PyTorch's parser does, and the kernels
# without a complex (or, with decimals, a non-float) form refuse it by their CPU names
for _name in ("erf", "psi", "gammaln", "expit", "entr", "i1", "ndtr", "round"):
    ROWS[f"special.{_name} of a str"] = (
        lambda L, n=_name: getattr(L.special, n)("a"), TypeError,
        rf"^special_{_name}\(\): argument 'input' \(position 1\) must be Tensor, not str$")
for _name in ("entr", "bessel_j0", "modified_bessel_k1", "airy_ai", "erfcx", "ndtri",
              "log_ndtr"):
    ROWS[f"special.{_name} of complex"] = (
        lambda L, n=_name: getattr(L.special, n)(L.ones(2, dtype=L.complex64)),
        NotImplementedError, rf"^\"{_name}_cpu\" not implemented for 'ComplexFloat'$")
ROWS.update({
    "special.polygamma of n=1.5": (
        lambda L: L.special.polygamma(1.5, _x(L)), TypeError,
        r"^special_polygamma\(\): argument 'n' \(position 1\) must be int, not float$"),
    "polygamma_ of n=True": (lambda L: _x(L).polygamma_(True), TypeError,
                             r"^polygamma_\(\): argument 'n' \(position 1\) must be int, not "
                             r"bool$"),
    "special.logit's eps": (lambda L: L.special.logit(_x(L), eps="a"), TypeError,
                            r"^special_logit\(\): argument 'eps' must be float, not str$"),
    "special.multigammaln of p=None": (
        lambda L: L.special.multigammaln(_x(L) + 3, None), TypeError,
        r"^special_multigammaln\(\): argument 'p' \(position [12]\) must be int, not "
        r"NoneType$"),
    "special.round of decimals 'a'": (
        lambda L: L.special.round(_x(L), decimals="a"), TypeError,
        r"^special_round\(\): argument 'decimals' must be int, not str$"),
    "round of decimals None": (lambda L: _x(L).round(decimals=None), TypeError,
                               r"^round\(\): argument 'decimals' must be int, not NoneType$"),
    "round of int with decimals": (
        lambda L: L.round(L.ones(2, dtype=L.int64), decimals=1), NotImplementedError,
        r"^\"round_cpu\" not implemented for 'Long'$"),
    "round of complex with decimals": (
        lambda L: L.round(L.ones(2, dtype=L.complex64), decimals=1), NotImplementedError,
        r"^\"round_cpu\" not implemented for 'ComplexFloat'$"),
    "special.xlog1py of None": (
        lambda L: L.special.xlog1py(_x(L), None), TypeError,
        r"^special_xlog1py\(\) received an invalid combination of arguments - got \(Tensor, "
        r"NoneType\), but expected one of:\n \* \(Tensor input, Tensor other, \*, Tensor out "
        r"= None\)\n \* \(Number self, Tensor other, \*, Tensor out = None\)\n \* \(Tensor "
        r"input, Number other, \*, Tensor out = None\)\n$"),
    "special.zeta of two numbers": (
        lambda L: L.special.zeta(1.0, 2.0), TypeError,
        r"^special_zeta\(\) received an invalid combination of arguments - got \(float, "
        r"float\)"),
    "special.softmax of dtype 'a'": (
        lambda L: L.special.softmax(_x(L), 1, dtype="a"), TypeError,
        r"^special_softmax\(\): argument 'dtype' must be torch.dtype, not str$"),
})

# a convolution's parameters: each one's length against the weight's spatial dims, then
# their signs, checked before the shapes (PyTorch's order), in the plain and the
# transposed convolution alike, and padding="same"'s own checks
_CONV_ROWS = {
    "conv2d of a negative padding": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), padding=-1),
        "negative padding is not supported"),
    "conv_transpose2d of a negative padding": (
        lambda L: _F(L).conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), padding=-1),
        "negative padding is not supported"),
    "conv_transpose1d of stride 0": (
        lambda L: _F(L).conv_transpose1d(L.ones(2, 4, 5), L.ones(4, 4, 3), stride=0),
        "non-positive stride is not supported"),
    "conv_transpose2d of a negative output_padding": (
        lambda L: _F(L).conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3),
                                         output_padding=-1),
        "negative output_padding is not supported"),
    "conv_transpose2d of a negative dilation": (
        lambda L: _F(L).conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), dilation=-1),
        "dilation should be greater than zero"),
    "conv_transpose2d of dilation 0": (
        lambda L: _F(L).conv_transpose2d(L.ones(1, 4, 5, 5), L.ones(4, 4, 3, 3), dilation=0),
        "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 0"),
    "conv_transpose1d of dilation 0, unbatched": (
        lambda L: _F(L).conv_transpose1d(L.ones(4, 5), L.ones(4, 4, 3), dilation=0),
        "dilation should be greater than zero, but got dilation_height: 1, dilation_width: 0"),
    "conv_transpose3d of dilation 0": (
        lambda L: _F(L).conv_transpose3d(L.ones(1, 4, 3, 3, 3), L.ones(4, 4, 2, 2, 2),
                                         dilation=(1, 0, 2)),
        "dilation should be greater than zero, but got dilation_depth: 1, dilation_height: 0, "
        "dilation_width: 2"),
    "conv_transpose2d of dilation 0 and a bad output_padding": (
        lambda L: _F(L).conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), dilation=0,
                                         output_padding=3),
        "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 0"),
    "conv2d of three strides": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), stride=(1, 1, 1)),
        "expected stride to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got stride=[1, 1, 1]"),
    "conv_transpose2d of three paddings": (
        lambda L: _F(L).conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3),
                                         padding=(1, 1, 1)),
        "expected padding to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got padding=[1, 1, 1]"),
    "conv1d of a 4-d weight": (
        lambda L: _F(L).conv1d(L.ones(2, 4, 5), L.ones(4, 4, 3, 3)),
        "Expected 4-dimensional input for 4-dimensional weight [4, 4, 3, 3], but got "
        "3-dimensional input of size [2, 4, 5] instead"),
    "conv2d of a 3-d weight": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3)),
        "expected stride to be a single integer value or a list of 1 values to match the "
        "convolution dimensions, but got stride=[1, 1]"),
    "conv2d of a 2-d weight": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4), groups=0),
        "weight should have at least three dimensions"),
    "conv2d of a negative padding and groups not dividing the weight": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 2, 3, 3), padding=-1, groups=3),
        "negative padding is not supported"),
    "conv2d of dilation 0 and groups not dividing the weight": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 2, 3, 3), dilation=0, groups=3),
        r"Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight "
        r"of size [[4, 2, 3, 3]] instead"),
    "conv2d of padding='same' and a 5-d weight": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3, 3), padding="same"),
        "Expected 5-dimensional input for 5-dimensional weight[4, 4, 3, 3, 3], but got "
        "4-dimensional input of size [2, 4, 5, 5] instead"),
    "conv2d of padding='same' and three strides": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), padding="same",
                               stride=(1, 1, 1)),
        "stride cannot broadcast to 2 dimensions"),
    "conv2d of padding='same' and a negative dilation": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), padding="same",
                               dilation=-1),
        "negative padding is not supported"),
    "conv2d of padding='same' and stride 0": (
        lambda L: _F(L).conv2d(L.ones(2, 4, 5, 5), L.ones(4, 4, 3, 3), padding="same",
                               stride=0),
        "padding='same' is not supported for strided convolutions"),
}
ROWS.update({name: (call, RuntimeError, "^" + re.escape(words) + "$")
             for name, (call, words) in _CONV_ROWS.items()})

# the parser's line under a signature the call could have meant: a keyword it lacks, or,
# with as many arguments as it has parameters (``out`` counted), each type marked
_MARKED_ROWS = {
    "remainder of None": (
        lambda L: L.remainder(_x(L), None),
        "remainder() received an invalid combination of arguments - got (Tensor, NoneType), "
        "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * "
        "(Number self, Tensor other)\n      didn't match because some of the arguments have "
        "invalid types: (!Tensor!, !NoneType!)\n * (Tensor input, Number other, *, Tensor "
        "out = None)\n"),
    "remainder of a tuple dividend": (
        lambda L: L.remainder((1,), _x(L)),
        "remainder() received an invalid combination of arguments - got (tuple, Tensor), "
        "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * "
        "(Number self, Tensor other)\n      didn't match because some of the arguments have "
        "invalid types: (!tuple of (int,)!, Tensor)\n * (Tensor input, Number other, *, "
        "Tensor out = None)\n"),
    "true_divide of a list": (
        lambda L: L.true_divide(_x(L), [1, 2]),
        "true_divide() received an invalid combination of arguments - got (Tensor, list), "
        "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * "
        "(Tensor input, Number other)\n      didn't match because some of the arguments have "
        "invalid types: (Tensor, !list of [int, int]!)\n"),
    "var of a str": (
        lambda L: _x(L).var("a"),
        "var() received an invalid combination of arguments - got (str), but expected one "
        "of:\n * (tuple of ints dim, bool unbiased = True, bool keepdim = False)\n * (tuple "
        "of ints dim = None, *, Number correction = None, bool keepdim = False)\n * (bool "
        "unbiased = True)\n      didn't match because some of the arguments have invalid "
        "types: (!str!)\n"),
    "all of a str dim": (
        lambda L: _x(L).all(dim="a"),
        "all() received an invalid combination of arguments - got (dim=str, ), but expected "
        "one of:\n * ()\n      didn't match because some of the keywords were incorrect: "
        "dim\n * (tuple of ints dim = None, bool keepdim = False)\n * (int dim, bool "
        "keepdim = False)\n"),
    "copysign of a number input": (
        lambda L: L.copysign(2.0, _x(L)),
        "copysign() received an invalid combination of arguments - got (float, Tensor), but "
        "expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor "
        "input, Number other, *, Tensor out = None)\n"),
}
ROWS.update({name: (call, TypeError, "^" + re.escape(words) + "$")
             for name, (call, words) in _MARKED_ROWS.items()})

# the normalizations' affine shapes, checked before anything runs (JAX would broadcast a
# weight or bias of size 1) and before the input's shape, as PyTorch's kernels order them
_NORM_ROWS = {
    "layer_norm of a weight of size 1": (
        lambda L: _F(L).layer_norm(L.ones(2, 4, 6), (6,), L.ones(1)), RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [1] "
        "and normalized_shape = [6]"),
    "layer_norm of a bias of size 1": (
        lambda L: _F(L).layer_norm(L.ones(2, 4, 6), (6,), None, L.ones(1)), RuntimeError,
        "Expected bias to be of same shape as normalized_shape, but got bias of shape [1] and "
        "normalized_shape = [6]"),
    "layer_norm of a 1-d weight for a 2-d normalized_shape": (
        lambda L: _F(L).layer_norm(L.ones(2, 4, 6), (4, 6), L.ones(6)), RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [6] "
        "and normalized_shape = [4, 6]"),
    "layer_norm of a weight and an input of another shape": (
        lambda L: _F(L).layer_norm(L.ones(2, 4, 6), (5,), L.ones(6)), RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [6] "
        "and normalized_shape = [5]"),
    "layer_norm of eps None": (
        lambda L: _F(L).layer_norm(L.ones(2, 4), (4,), eps=None), TypeError,
        "layer_norm(): argument 'eps' (position 5) must be float, not NoneType"),
    "rms_norm of a weight of size 1": (
        lambda L: _F(L).rms_norm(L.ones(2, 4, 6), (6,), L.ones(1)), RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [1] "
        "and normalized_shape = [6]"),
    "rms_norm of a weight and an input of another shape": (
        lambda L: _F(L).rms_norm(L.ones(2, 4, 6), (5,), L.ones(6)), RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [6] "
        "and normalized_shape = [5]"),
    "group_norm of a weight of size 1": (
        lambda L: _F(L).group_norm(L.ones(2, 4, 6), 2, L.ones(1)), RuntimeError,
        "Expected weight to be a vector of size equal to the number of channels in input, but "
        "got weight of shape [1] and input of shape [2, 4, 6]"),
    "group_norm of a bias of size 1": (
        lambda L: _F(L).group_norm(L.ones(2, 4, 6), 2, None, L.ones(1)), RuntimeError,
        "Expected bias to be a vector of size equal to the number of channels in input, but "
        "got bias of shape [0] and input of shape [2, 4, 6]"),
    "group_norm of one value per group's channel": (
        lambda L: _F(L).group_norm(L.ones(1, 4, 1, 1), 4), ValueError,
        "Expected more than 1 value per channel when training, got input size [1, 4, 1, 1]"),
    "group_norm of a float num_groups": (
        lambda L: _F(L).group_norm(L.ones(2, 4), 2.0), TypeError,
        "group_norm(): argument 'num_groups' (position 2) must be int, not float"),
    "group_norm of num_groups 0": (
        lambda L: _F(L).group_norm(L.ones(2, 4), 0), ZeroDivisionError,
        "integer division or modulo by zero"),
}
ROWS.update({name: (call, exc, "^" + re.escape(words) + "$")
             for name, (call, exc, words) in _NORM_ROWS.items()})


@pytest.mark.parametrize("call, exc, match", ROWS.values(), ids=ROWS.keys())
def test_the_error_is_worded_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_a_transposed_convolution_of_dilation_0_on_a_batch_names_the_dilations():
    """On a batch of several, PyTorch's CPU kernel is oneDNN's, whose error names no
    argument ("could not create a primitive descriptor ..."); hookgrad gives the words of
    PyTorch's own check, as for a batch of one (above), not XLA's."""
    import hookgrad as hg
    with pytest.raises(RuntimeError, match="^" + re.escape(
            "dilation should be greater than zero, but got dilation_height: 1, "
            "dilation_width: 0") + "$"):
        hg.nn.functional.conv_transpose1d(hg.ones(2, 4, 5), hg.ones(4, 4, 3), dilation=0)


def test_a_bool_is_a_number_where_a_form_takes_a_number_input():
    """``remainder``'s and ``pow``'s ``(Number self, Tensor ...)`` forms take a bool, as
    PyTorch's parser does (its Number is any Python number)."""
    same_as_torch(lambda L: [py(L.remainder(True, L.tensor([0.75, -2.0, 3.0]))),
                             py(L.remainder(True, L.tensor([2, -3]))),
                             py(L.pow(True, L.tensor([0.5, 2.0])))])


@pytest.mark.parametrize("args", [((5,), None, None), ((6,), "w", None), ((6,), None, "b"),
                                  ((6,), "w", "b"), ((4, 6), "ok", None)],
                         ids=["input", "weight", "bias", "weight and bias", "2-d shape"])
def test_layer_norm_packs_what_its_node_saves_before_its_shape_error(args):
    """PyTorch's layer_norm node is recorded, its saved values packed by saved-tensor
    hooks, before its kernel checks the shapes; nothing else runs."""
    shape, w, b = args

    def f(L):
        packed = []
        x = L.ones(2, 4, 6, requires_grad=True)
        weight = {"w": L.ones(5), "ok": L.ones(6)}.get(w)
        bias = L.ones(5) if b else None
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: packed.append(list(t.shape)) or t, lambda t: t):
            with pytest.raises(RuntimeError):
                L.nn.functional.layer_norm(x, shape, weight, bias)
        return packed
    same_as_torch(f)


@pytest.mark.parametrize("kw", [{"padding": -1}, {"stride": 0}, {"stride": (1, 1, 1)},
                                {"dilation": 0}, {"groups": 0}, {"output_padding": -1}],
                         ids=lambda kw: "-".join(map(str, kw.items())))
def test_a_convolutions_parameter_error_comes_after_its_node_packed(kw):
    """PyTorch's convolution node packs the input and the weight before its kernel checks
    the parameters, as before its shape checks: saved-tensor hooks see both, once."""
    def f(L):
        packed = []
        x = L.ones(1, 4, 5, 5, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: packed.append(list(t.shape)) or t, lambda t: t):
            with pytest.raises(RuntimeError):
                L.nn.functional.conv_transpose2d(x, L.ones(4, 4, 3, 3), **kw)
        return packed
    assert same_as_torch(f) == [[1, 4, 5, 5], [4, 4, 3, 3]]


def test_masked_fill_takes_what_pytorchs_checked_conversion_takes():
    """A value an unsigned dtype wraps (down to minus its largest), a float dtype's largest,
    inf and nan, an int into a bool: filled, as PyTorch fills them."""
    def run(L):
        mask = L.tensor([True, False])
        return [str(L.zeros(2, dtype=getattr(L, dt)).masked_fill(mask, v).tolist())  # inf
                for dt, v in (("uint8", -1), ("uint8", -255), ("uint8", 255), ("int8", -128),
                              ("float16", 65504), ("float32", float("inf")), ("bool", 5),
                              ("int32", 1.5), ("bfloat16", 3e38))]
    got = same_as_torch(run)
    assert got[0] == "[255, 0]" and got[1] == "[1, 0]"
