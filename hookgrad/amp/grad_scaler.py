"""``torch.amp.GradScaler``: scale the loss so that float16 gradients do not underflow,
unscale before the step, skip steps whose gradients hold an inf or a NaN, and adapt the
scale (backed off on an overflow, grown after ``growth_interval`` clean steps)."""
from __future__ import annotations

import enum
from collections import defaultdict
from typing import Any

import jax

from .. import _device, _dtype
from .._autograd import grad_mode
from .._factory import full
from .._tensor import Tensor
from .. import _errors

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _traced(t):
    return isinstance(t._data, jax.core.Tracer)


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``

    Example::

        >>> scaler = torch.amp.GradScaler("cpu")
        >>> with torch.autocast("cpu"):
        ...     loss = loss_fn(model(x), y)
        >>> scaler.scale(loss).backward()
        >>> scaler.step(opt)          # skipped if a gradient is inf or NaN
        >>> scaler.update()

    Inside ``hookgrad.compile`` the skip is a select on the device (no host sync): a
    skipped step leaves parameters and optimizer state as they were.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            if not _device.platform_devices("gpu"):
                _errors.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                             "available.  Disabling.")
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._scale: Tensor | None = None
            self._growth_tracker: Tensor | None = None
            self._scaled = False
            self._per_optimizer_states = defaultdict(_fresh)
            # NOTE: PyTorch makes these at the first scale(); made here, they exist before a
            # compiled step that scales first is traced, so it carries them as state
            self._lazy_init(device)

    def _check(self, funcname):
        if not self._scaled:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                               "your script did not use scaler.scale(loss or outputs) "
                               "earlier in the iteration.")
        return self._scale, self._growth_tracker

    def _lazy_init(self, device):
        if self._scale is not None:
            return
        self._scale = full((), float(self._init_scale), dtype=_dtype.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtype.int32,
                                    device=device)

    def scale(self, outputs):
        """``outputs`` (a Tensor or an iterable of them) multiplied by the scale factor."""
        if not self._enabled:
            return outputs
        self._scaled = True
        if isinstance(outputs, Tensor):
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply(val):
            if isinstance(val, Tensor):
                return val * self._scale.to(device=val.device, non_blocking=True)
            if isinstance(val, (list, tuple)) or hasattr(val, "__iter__"):
                scaled = map(apply, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        found = {}
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = g.device
                    flag = found.setdefault(dev, found_inf.to(dev).clone())
                    # NOTE: as PyTorch's kernel, every gradient is multiplied even when a
                    # non-finite one was found (the step is then skipped anyway)
                    flag.copy_(flag.maximum((~g.isfinite().all()).to(flag.dtype)))
                    g.mul_(inv_scale.to(dev))
        return found

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting infs and NaNs;
        at most once per optimizer between ``update()`` calls."""
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.reciprocal()
        found_inf = full((), 0.0, dtype=_dtype.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        found = list(state["found_inf_per_device"].values())
        if any(map(_traced, found)):
            return _select_step(optimizer, sum(found[1:], found[0]), args, kwargs)
        if not sum(v.item() for v in found):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args: Any, **kwargs: Any):
        """``unscale_(optimizer)`` unless done already, then ``optimizer.step(*args,
        **kwargs)`` unless a gradient was inf or NaN; returns what the step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Set the scale for the next iteration: ``new_scale`` if given, else backed off by
        ``backoff_factor`` after an overflow, or grown by ``growth_factor`` after
        ``growth_interval`` steps without one."""
        if not self._enabled:
            return
        scale, tracker = self._check("update")
        with grad_mode.no_grad():
            if new_scale is not None:
                if isinstance(new_scale, float):
                    scale.fill_(new_scale)
                else:
                    if (not isinstance(new_scale, Tensor) or new_scale.numel() != 1
                            or new_scale.requires_grad):
                        raise AssertionError(
                            "new_scale should be a float or a 1-element torch.cuda."
                            "FloatTensor or torch.FloatTensor with requires_grad=False.")
                    scale.copy_(new_scale.reshape(()))
            else:
                found = [f.to(scale.device) for s in self._per_optimizer_states.values()
                         for f in s["found_inf_per_device"].values()]
                if not found:
                    raise AssertionError("No inf checks were recorded prior to update.")
                self._update_scale(scale, tracker, sum(found[1:], found[0]))
        # NOTE: emptied in place (PyTorch binds a new one): a compiled step calling update()
        # then leaves the scaler as it found it, and stays one program
        self._per_optimizer_states.clear()

    def _update_scale(self, scale, tracker, found_inf):
        # as torch._amp_update_scale_, as selects: it traces inside hookgrad.compile
        overflow = found_inf > 0
        clean = tracker + 1
        grow = clean >= self._growth_interval
        grown = scale * self._growth_factor
        grown = grown.where(grown.isfinite(), scale)
        scale.copy_(scale.where(~grow, grown).where(~overflow, scale * self._backoff_factor))
        tracker.copy_(clean.where(~(grow | overflow), clean.new_zeros(())))

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        return self._read("_scale", 1.0)

    def _read(self, tensor, disabled):
        """The one-element Tensor named ``tensor`` as a Python number; ``disabled`` when the
        scaler is off (and holds none)."""
        return getattr(self, tensor).item() if self._enabled else disabled

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        return self._read("_growth_tracker", 0)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker``; empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        with grad_mode.no_grad():
            self._scale.fill_(state_dict["scale"])
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                   "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._lazy_init(self._device)


def _select_step(optimizer, found_inf, args, kwargs):
    """The step of a traced (compiled) iteration: run it, then keep the old parameters and
    state where ``found_inf`` is set (a select on the device, no host sync)."""
    skip = getattr(optimizer, "_skip_if", None)
    if skip is None:
        raise RuntimeError(
            f"GradScaler.step inside hookgrad.compile cannot skip a step of "
            f"{type(optimizer).__name__}: it updates in Python. Use one of hookgrad.optim's "
            "optimizers, or run the step eagerly.")
    return skip(found_inf > 0, args, kwargs)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
