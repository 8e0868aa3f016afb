"""Lazy modules: ``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*``
and ``LazyInstanceNorm*`` infer their input size at the first forward, then become the
ordinary module (``cls_to_become``), as ``torch.nn.modules.lazy``."""
from ..._arguments import own_init
from ..._autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                   ConvTranspose3d)
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A module whose parameters are ``UninitializedParameter`` until its first call, when
    ``initialize_parameters(*args, **kwargs)`` (which a subclass defines) materialises them
    and the module becomes ``cls_to_become`` (if set)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        # an uninitialized parameter or buffer takes its shape from the loaded value
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and t is not None and is_lazy(t):
                with no_grad():
                    t.materialize(tuple(state_dict[key].shape))

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in list(self._parameters.values()) +
                   list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialise the uninitialized parameters for the first call's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")


class _LazyBuiltin(LazyModuleMixin):
    """The built-in lazy layers: ``_shapes(input)`` gives each parameter's shape."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self._lazy_size() != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Materialise the parameters for ``input`` (then draw their initial values)."""
        if not self.has_uninitialized_params():
            return
        with no_grad():
            for name, shape in self._shapes(input).items():
                t = getattr(self, name)
                if is_lazy(t):
                    t.materialize(shape)
            self.reset_parameters()

    def _uninitialized(self, bias, device, dtype):
        """The weight, and the bias if ``bias``, as parameters shaped at the first call."""
        kw = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter(**kw)
        if bias:
            self.bias = UninitializedParameter(**kw)


def _infer_parameters(module, args, kwargs):
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook, module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(_LazyBuiltin, Linear):
    """``Linear`` whose ``in_features`` is the last size of its first input.

    ::

        LazyLinear(out_features, bias=True, device=None, dtype=None)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self._uninitialized(bias, device, dtype)
        self.out_features = out_features

    def _lazy_size(self):
        return self.in_features

    def _shapes(self, input):
        self.in_features = input.shape[-1]
        return {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)}


class _LazyConv(_LazyBuiltin):
    def _start(self, args):
        """Build from the public constructor's ``args`` (its ``locals()``, by PyTorch's
        names): an empty weight, and a bias if asked for, made at the first call."""
        opts = {k: v for k, v in args.items() if k != "self"}
        out_channels, kernel_size = opts.pop("out_channels"), opts.pop("kernel_size")
        made = [opts.pop(k) for k in ("bias", "device", "dtype")]
        super().__init__(0, 0, kernel_size, bias=False, **opts)
        self._uninitialized(*made)
        self.out_channels = out_channels

    def _lazy_size(self):
        return self.in_channels

    def _shapes(self, input):
        nd = len(self.kernel_size)
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                               f"to {self.cls_to_become.__name__}, but got input of size: "
                               f"{list(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        g = self.groups
        w = ((self.in_channels, self.out_channels // g) if self.transposed else
             (self.out_channels, self.in_channels // g)) + tuple(self.kernel_size)
        return {"weight": w, "bias": (self.out_channels,)}


# PyTorch's two orders of a lazy convolution's arguments, each class a copy (own_init)
def _conv_init(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
               bias=True, padding_mode="zeros", device=None, dtype=None):
    _LazyConv._start(self, locals())


def _transposed_init(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
    _LazyConv._start(self, locals())


def _make(name, base, init):
    return own_init(type(name, (_LazyConv, base), {
        "cls_to_become": base, "__init__": init,
        "__doc__": f"``{base.__name__}`` whose ``in_channels`` is read from its first input.",
        "__module__": __name__}))


LazyConv1d = _make("LazyConv1d", Conv1d, _conv_init)
LazyConv2d = _make("LazyConv2d", Conv2d, _conv_init)
LazyConv3d = _make("LazyConv3d", Conv3d, _conv_init)
LazyConvTranspose1d = _make("LazyConvTranspose1d", ConvTranspose1d, _transposed_init)
LazyConvTranspose2d = _make("LazyConvTranspose2d", ConvTranspose2d, _transposed_init)
LazyConvTranspose3d = _make("LazyConvTranspose3d", ConvTranspose3d, _transposed_init)


class _LazyNormBase(_LazyBuiltin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, affine, track_running_stats)
        kw = {"device": device, "dtype": dtype}
        if self.affine:
            self.weight = UninitializedParameter(**kw)
            self.bias = UninitializedParameter(**kw)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)

    def _lazy_size(self):
        return self.num_features

    def _shapes(self, input):
        self.num_features = input.shape[1]   # PyTorch's, also for unbatched instance norm
        n = (self.num_features,)
        return {"weight": n, "bias": n, "running_mean": n, "running_var": n}


def _make_norm(name, base):
    # as PyTorch's, a lazy norm subclasses base's family (_BatchNorm, _InstanceNorm), not
    # base, which it becomes at its first call; it takes base's own input-rank check
    own = {k: v for k, v in vars(base).items() if not k.startswith("__")}
    return type(name, (_LazyNormBase, base.__base__), {
        **own, "cls_to_become": base,
        "__doc__": f"``{base.__name__}`` whose ``num_features`` is read from its first input.",
        "__module__": __name__})


LazyBatchNorm1d = _make_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _make_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _make_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _make_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _make_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _make_norm("LazyInstanceNorm3d", InstanceNorm3d)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
