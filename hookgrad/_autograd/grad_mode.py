"""Grad-mode switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, and the state is thread-local, as in PyTorch.
"""
import functools
import inspect
import threading


class _State(threading.local):
    enabled = True
    inference = False
    # flags PyTorch's engine reads; hookgrad's engine runs backward on the calling thread
    # and replays no views, so they only record the mode (for code that reads it back)
    multithreading = True
    view_replay = False
    grad_layout = True  # hookgrad's gradients are always C-ordered, as its parameters


_state = _State()


def is_grad_enabled():
    """Whether operations on Tensors are recorded for backward in this thread."""
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Context manager that also decorates functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                # NOTE: each step of the generator runs under the mode, but not the caller's
                # code between steps; its StopIteration value becomes this generator's return
                # value (re-raising StopIteration inside a generator is a RuntimeError).
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # forward throws into the generator
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class _ModeSwitch(_DecoratorContextManager):
    """A switch made from one argument, ``mode``: each decorated call runs under a clone
    made with it."""

    def clone(self):
        return type(self)(self.mode)


class _GradSwitch(_DecoratorContextManager):
    """Grad mode set to ``_enabled`` inside the block, the previous mode restored after
    (``no_grad``, ``enable_grad``)."""

    _enabled = None

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = self._enabled

    def __exit__(self, *exc):
        _state.enabled = self.prev


class no_grad(_GradSwitch):
    """Disable gradient recording.

    Example::

        >>> x = hookgrad.tensor([1.0], requires_grad=True)
        >>> with hookgrad.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # used bare, as @no_grad

    _enabled = False

    def __init__(self, orig_func=None):
        self.prev = False


class enable_grad(_GradSwitch):
    """Enable gradient recording inside a ``no_grad`` region."""

    _enabled = True


class set_grad_enabled(_ModeSwitch):
    """Set grad mode on or off. Takes effect at once, and as a context manager restores
    the previous mode on exit."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev


class inference_mode(_ModeSwitch):
    """Like ``no_grad``; Tensors made inside are ordinary Tensors (see docs/differences.md:
    JAX arrays are immutable, so there is no separate inference-tensor kind)."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled, _state.inference = False, True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev


# --------------------------------------------------------------------------- engine switches


def _is_multithreading_enabled():
    return _state.multithreading


def _set_multithreading_enabled(mode):
    _state.multithreading = bool(mode)


def _is_view_replay_enabled():
    return _state.view_replay


def _set_view_replay_enabled(mode):
    _state.view_replay = bool(mode)


class set_multithreading_enabled(_ModeSwitch):
    """Enable or disable multithreaded backward. Takes effect at once and, as a context
    manager, restores the previous mode on exit. Thread-local.

    hookgrad always runs backward on the calling thread, so ``mode`` is only recorded.

    Example::

        >>> with hookgrad.autograd.set_multithreading_enabled(False):
        ...     loss.backward()
    """

    def __init__(self, mode):
        self.prev = _state.multithreading
        self.mode = mode
        _set_multithreading_enabled(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_multithreading_enabled(self.prev)


def _is_grad_layout_enforcement_enabled():
    return _state.grad_layout


def _set_grad_layout_enforcement_enabled(enable):
    _state.grad_layout = bool(enable)


class enforce_grad_layout_policy(_ModeSwitch):
    """Set whether accumulated gradients must follow the gradient layout contract (strides
    matching their parameter's). Takes effect at once; usable as a context manager or
    decorator (restoring the previous setting). Thread-local.

    hookgrad's tensors have no strides to mismatch (every gradient is C-ordered, like its
    parameter), so the setting is only recorded.

    Example::

        >>> with hookgrad.autograd.enforce_grad_layout_policy(False):
        ...     loss.backward()
    """

    def __init__(self, enable=True):
        self.prev = _state.grad_layout
        self.mode = enable
        _set_grad_layout_enforcement_enabled(enable)

    def __call__(self, orig_func):
        _set_grad_layout_enforcement_enabled(self.prev)  # as a decorator: inside only
        return super().__call__(orig_func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_grad_layout_enforcement_enabled(self.prev)


class _force_original_view_tracking(_ModeSwitch):
    """Set whether autograd always replays the chain of views when it regenerates a view of
    a modified base (``mode=True``) or may use ``as_strided``. Takes effect at once; usable
    as a context manager or decorator (restoring the previous mode). Thread-local.

    hookgrad regenerates views from the recorded view functions in either case, so ``mode``
    is only recorded.
    """

    def __init__(self, mode):
        self.prev = _state.view_replay
        self.mode = mode
        _set_view_replay_enabled(mode)

    def __call__(self, orig_func):
        # as a decorator the mode applies inside the function only
        _set_view_replay_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _set_view_replay_enabled(self.mode)

    def __exit__(self, *exc):
        _set_view_replay_enabled(self.prev)


def _set_version_counters(tensors, versions):
    """Set each tensor's ``_version`` (``torch._C._autograd._unsafe_set_version_counter``)."""
    tensors, versions = tuple(tensors), tuple(versions)
    if len(tensors) != len(versions):
        raise RuntimeError(f"tensors_len={len(tensors)}, versions_len={len(versions)}")
    for v in versions:
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
    for t, v in zip(tensors, versions):
        t._version = v


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """On exit, set the ``_version`` of ``tensors`` (a Tensor or a tuple of them) back to
    what it was on entry, hiding in-place writes made inside from autograd's checks.

    Unsafe: a saved tensor modified inside is then used in backward with its new value.

    Example::

        >>> with hookgrad.autograd._unsafe_preserve_version_counter(x):
        ...     x.mul_(2)   # x._version is unchanged afterwards
    """

    def __init__(self, tensors):
        # NOTE: a Tensor is told by its version counter: grad mode sits below the Tensor
        one = not isinstance(tensors, (tuple, list)) and hasattr(tensors, "_version")
        self.tensors = (tensors,) if one else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_version_counters(self.tensors, self.prev_versions)

    def clone(self):
        return type(self)(self.tensors)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__, "torch.autograd.grad_mode")
