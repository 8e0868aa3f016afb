"""Grad-mode switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, and the state is thread-local, as in PyTorch.
"""
import functools
import inspect
import threading


class _State(threading.local):
    enabled = True
    inference = False


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
                gen = func(*args, **kwargs)
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
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
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

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside a ``no_grad`` region."""

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
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

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``; Tensors made inside are ordinary Tensors (see README: JAX arrays
    are immutable, so there is no separate inference-tensor kind)."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled, _state.inference = False, True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
