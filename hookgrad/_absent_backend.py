"""The pieces of an accelerator module (``torch.xpu``, ``torch.mps``, ``torch.mtia``) whose
backend JAX does not have: they answer as a PyTorch build without that backend does.

PyTorch's CPU-only build still ships these modules: the queries answer "none" (no device,
no memory in use), seeding is accepted and dropped, and whatever needs the device raises
the build's own error. hookgrad has no such backend at all, so each module is the same
table of answers over one :class:`AbsentBackend`, which holds the errors and the device
index rules; ``hookgrad.cuda`` answers a missing GPU in the same spirit.
"""
import contextlib
import ctypes

from . import _device

__all__ = ["AbsentBackend", "dummy_type", "no_binding"]


def no_binding(name):
    """PyTorch's error for a ``torch._C`` function its build lacks (some of these modules
    call one without checking first)."""
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def dummy_type(name, doc=None):
    """A class that exists, as PyTorch's placeholder for a backend's binding does, and
    raises ``RuntimeError`` when made: the class (or a subclass) was never built."""
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {type(self).__name__}")
    return type(name, (), {"__init__": __init__, "__doc__": doc or
                           "Needs a backend hookgrad does not have: making one raises."})


# the docstrings of AbsentBackend.queued_rng's functions, in its order
_RNG_DOCS = ("The RNG state of a {} device (raises: there is none).",
             "The RNG states of all {} devices: none.",
             "Set a {} device's RNG state (dropped: there is no device).",
             "Set each {} device's RNG state (dropped: there is no device).",
             "Seed the current {} device (checked, then dropped: there is no device).",
             "Seed all {} devices (checked, then dropped: there is none).",
             "Seed the current {} device randomly (nothing to seed).",
             "Seed all {} devices randomly (nothing to seed).",
             "The current {} device's initial seed (raises: there is no device).")


class AbsentBackend:
    """The answers of a PyTorch build without the backend ``name`` (``"XPU"``).

    ``not_compiled`` is the message of the ``AssertionError`` raised where the module
    initializes the backend; ``index_rules`` is ``"xpu"`` (a ``None`` index stays
    ``None``) or ``"mtia"`` (a ``None`` index asks the missing backend's current device).
    """

    def __init__(self, name, not_compiled=None, index_rules=None):
        self.name = name
        self.type = name.lower()
        self.not_compiled_message = not_compiled or f"Torch not compiled with {name} enabled"
        self.index_rules = index_rules or self.type

    def not_compiled(self):
        """The error of initializing the backend."""
        return AssertionError(self.not_compiled_message)

    def without(self, call):
        """The error of a C++ entry point the build has only as a stub."""
        return RuntimeError(f"Cannot execute {call}() without {self.name} backend.")

    def device_index(self, device, optional=False):
        """The device index ``device`` names (int, str, ``hookgrad.device``), with the
        module's own checks and errors (``torch.xpu._utils._get_device_index``)."""
        if isinstance(device, int) and not isinstance(device, bool):
            return device
        if isinstance(device, str):
            device = _device.device(device)
        index = None
        if isinstance(device, _device.device):
            mtia = self.index_rules == "mtia"  # cpu is named, then refused
            kinds = [self.type, "cpu"] if mtia else [self.type]
            if mtia and device.type == "cpu":
                raise ValueError(f"Expected a non cpu device, but got: {device}")
            if device.type not in kinds:
                raise ValueError(f"Expected a {' or '.join(kinds)} device, but got: {device}")
            index = -1 if device.type == "cpu" else device.index
        elif hasattr(device, "idx"):  # the module's own ``device`` context manager
            return device.idx
        if index is None:
            if optional:
                if self.index_rules == "mtia":
                    raise self.without("getCurrentDevice")
                return None
            sep = " " if self.index_rules == "mtia" else ""
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             f"but got:{sep}{device}")
        return index

    def device_class(self, enter_error, module):
        """The module's ``device`` context manager: it takes an index (``None`` or a
        negative one make it a no-op where the backend allows) and switching raises
        ``enter_error()``."""
        backend = self

        class device:
            """Context-manager that changes the selected device (it needs the backend)."""

            def __init__(self, device):
                self.idx = backend.device_index(device, optional=True)
                self.prev_idx = -1

            def __enter__(self):
                if self.idx is not None and self.idx < 0 and backend.index_rules == "mtia":
                    return  # maybeExchangeDevice(-1) does nothing
                raise enter_error()

            def __exit__(self, *exc):
                return False
        return _named(device, module)

    def stream_context_class(self, module):
        """The module's ``StreamContext``: without a current device it is a no-op (as
        PyTorch's is) where finding that out does not itself need the backend."""
        backend = self

        class StreamContext(contextlib.AbstractContextManager):
            """Context-manager that selects a given stream (a no-op without the backend)."""

            def __init__(self, stream):
                self.stream = stream
                index = backend.device_index(None, optional=True)
                self.idx = -1 if index is None else index

            def __exit__(self, *exc):
                return None
        return _named(StreamContext, module)

    def seed_check(self, seed):
        """Seeding without the backend: the seed is checked, then dropped (PyTorch queues
        it for a device that never initializes)."""
        int(seed)

    def rng_state_check(self, new_state, device):
        """``set_rng_state`` without the backend: the state is copied and the device
        resolved, as PyTorch does before queueing the call."""
        new_state.clone()
        if self.index_rules == "mtia":
            self.device_index(device, optional=True)

    def queued_rng(self, module):
        """``torch.<backend>``'s RNG functions where PyTorch queues seeding for a device that
        never initializes (XPU, MTIA): reading a state raises, a state or seed set is
        checked and dropped. In ``torch.xpu.random.__all__``'s order, ``module``'s."""
        backend, default = self.name, self.name.lower()

        def get_rng_state(device=default):
            raise self.not_compiled()

        def get_rng_state_all():
            return []

        def set_rng_state(new_state, device=default):
            self.rng_state_check(new_state, device)

        def set_rng_state_all(new_states):
            for i, state in enumerate(new_states):
                set_rng_state(state, i)

        def manual_seed(seed):
            self.seed_check(seed)

        def manual_seed_all(seed):
            self.seed_check(seed)

        def seed():
            pass

        def seed_all():
            pass

        def initial_seed():
            raise self.not_compiled()

        fns = (get_rng_state, get_rng_state_all, set_rng_state, set_rng_state_all,
               manual_seed, manual_seed_all, seed, seed_all, initial_seed)
        for fn, doc in zip(fns, _RNG_DOCS):
            fn.__qualname__ = fn.__name__
            fn.__module__, fn.__doc__ = module, doc.format(backend)
        return fns


def _named(cls, module):
    """``cls``, made in a factory, named as a class of ``module`` (its methods too, so that
    Python's own errors name them as PyTorch's)."""
    cls.__module__, cls.__qualname__ = module, cls.__name__
    for attr in vars(cls).values():
        if callable(attr) and hasattr(attr, "__qualname__"):
            attr.__qualname__ = f"{cls.__name__}.{attr.__name__}"
    return cls


def pluggable_allocator(binding, path_to_lib_file, alloc_fn_name, free_fn_name):
    """Load an allocator's symbols from a shared library, then fail at ``binding``, the
    backend's allocator hook that the build lacks (PyTorch's order of errors)."""
    lib = ctypes.CDLL(path_to_lib_file)
    getattr(lib, alloc_fn_name), getattr(lib, free_fn_name)
    raise no_binding(binding)
