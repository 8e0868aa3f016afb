"""Training mode, gradients and conversion of a Module's tensors (a mixin of ``Module``):
``train``/``eval``, ``requires_grad_``, ``zero_grad``, ``apply``, ``to`` and the casts."""

from ..._autograd import grad_mode
from ... import _errors
from ..._tensor import Tensor
from ..._watch import WRITES as _WRITES

_GRAD = Tensor.grad
_TENSOR_SETATTR = Tensor.__setattr__
_setattr = object.__setattr__


class _ConversionMixin:
    # ------------------------------------------------------------------ modes, grads
    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on the whole tree."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Evaluation mode: ``self.train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter in place; returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to None (default) or to zeros."""
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    if type(p).grad is _GRAD and type(p).__setattr__ is _TENSOR_SETATTR:
                        # the slot itself, as ``Tensor.__setattr__`` writes it, less its
                        # frame: the setter's checks are for a value
                        _WRITES[0] += 1
                        _setattr(p, "_grad", None)
                    else:
                        p.grad = None
                else:
                    g = p._grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                param_applied = fn(param)
            if param.is_meta != param_applied.is_meta:
                # as PyTorch: to or from the meta device, a new Parameter (its .grad with it)
                from ..parameter import Parameter
                grad, param = param._grad, Parameter(param_applied, param.requires_grad)
                self._parameters[key] = param
                if grad is not None:
                    with grad_mode.no_grad():
                        param.grad = fn(grad)
                continue
            # the Parameter object stays (optimizers hold it); its data changes
            param.data = param_applied
            grad = param._grad
            if grad is not None:
                with grad_mode.no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first), then on ``self``.

        Example::

            >>> @hookgrad.no_grad()
            ... def init_weights(m):
            ...     if type(m) is nn.Linear:
            ...         m.weight.fill_(1.0)
            >>> net.apply(init_weights)
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast the parameters and buffers, in place; returns ``self``.

        ::

            to(device=None, dtype=None, non_blocking=False)
            to(dtype, non_blocking=False)
            to(tensor, non_blocking=False)

        Only floating-point and complex parameters and buffers are cast to ``dtype``;
        others only move.
        """
        from ... import _device, _dtype, _meta
        from ..._ops.layout import _to_args
        dtype, device, _ = _to_args(args, kwargs)
        if device is not None and not _device.is_meta(device):
            _dtype.jax_device(device)  # a missing device raises before any tensor moves
        if dtype is not None:
            dtype = _dtype.as_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                _errors.warn(
                    "Complex modules are a new feature under active development whose design "
                    "may change, and some modules might not work as expected when using complex "
                    "tensors as parameters or buffers.")

        def convert(t):
            cast = dtype if (t.is_floating_point() or t.is_complex()) else None
            try:
                return t.to(device=device, dtype=cast)
            except NotImplementedError as e:
                if str(e) != _meta.NO_DATA:
                    raise
                raise NotImplementedError(
                    f"{e} Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() "
                    "when moving module from meta to a different device.") from None

        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Move the parameters and buffers to ``device`` without copying their values: each
        becomes ``empty_like`` on ``device`` (a meta module's way to real arrays, to be
        filled by ``load_state_dict`` or an initializer). Parameters leaving the meta device
        become new ``Parameter`` objects with their ``requires_grad``, as in PyTorch
        (build optimizers after this). Returns ``self``.

        Example::

            >>> with hookgrad.device("meta"):
            ...     m = nn.Linear(2, 3)
            >>> m.to_empty(device="cpu").weight.device
            device(type='cpu')
        """
        from ..._factory import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floating(self, dt):
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self):
        """Cast floating-point parameters and buffers to ``float32``."""
        from ... import _dtype
        return self._cast_floating(_dtype.float32)

    def double(self):
        """Cast floating-point parameters and buffers to ``float64``."""
        from ... import _dtype
        return self._cast_floating(_dtype.float64)

    def half(self):
        """Cast floating-point parameters and buffers to ``float16``."""
        from ... import _dtype
        return self._cast_floating(_dtype.float16)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to ``bfloat16``."""
        from ... import _dtype
        return self._cast_floating(_dtype.bfloat16)

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self):
        """Move all parameters and buffers to the CPU."""
        return self._apply(lambda t: t.to(device="cpu"))

    def cuda(self, device=None):
        """Move all parameters and buffers to the (first, or given) GPU."""
        from ... import _device
        device = _device.cuda_target(device)
        _device.jax_device(device)  # a missing GPU raises before any tensor moves
        return self._apply(lambda t: t.to(device=device))

    def share_memory(self):
        """No-op (JAX arrays are not shared between processes); returns ``self``."""
        return self
