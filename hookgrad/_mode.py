"""Which of the three modes is running in this thread.

- eager: the tape records nodes, ``backward()`` runs hookgrad's engine (the default);
  ``state.backend`` is None;
- functional: inside ``hookgrad.func.functional_call``: no tape; JAX's AD differentiates,
  and hooks are ``jax.custom_vjp`` boundaries. ``state.backend`` is the backend that
  ``hookgrad._functional`` registered: core code asks it, and never tests for the mode;
- compiled: inside ``hookgrad.compile`` tracing: eager semantics on traced arrays.

A backend (``register``) answers, where the tape would record or hook a node:
``apply(op, key, args, out)`` (an op call), ``register_tensor_hook(t, hook)``,
``register_multi_grad_hook(tensors, fn, mode)``, ``function_apply(cls, args, kwargs,
has_setup)`` (``autograd.Function.apply``), ``hook_identity(tensors) -> (node, tensors)``
(the identity op of module backward hooks) and ``stop_gradient(array)`` (a detached
value). Code that only needs to know whether JAX's AD, not the tape, differentiates (and
so must not keep a tape, or must inline into the outer trace) tests ``state.backend``.
"""
import contextlib
import threading


class _Mode(threading.local):
    backend = None   # None: the tape; else the backend whose AD differentiates
    compiling = False
    # while ``hookgrad.compile`` traces: ``run(hook, args)`` calls a user hook
    # (``hookgrad._compile.host_run``); None: a plain call
    hook_runner = None


state = _Mode()
# how many blocks that set ``state.backend`` or ``state.compiling`` are open, in any thread
# (``use``, ``compiling_mode``, the functional hooks' scope): while none is, neither is set
# in any thread, and a compiled call skips its two thread-local reads (each costs several
# plain attribute reads)
OPEN = [0]
_count_lock = threading.Lock()


def count_open(delta):
    """A block of those above opens (+1) or closes (-1), in some thread."""
    with _count_lock:
        OPEN[0] += delta

_backends = {}
# ``torch._dynamo.config`` once imported: ``hookgrad.compile`` reads its
# ``recompile_limit`` (the module sits above the compiled mode's layer)
dynamo_config = None


def register(name, backend):
    """Make ``backend`` available to ``use(name)`` (a backend package does this on import)."""
    _backends[name] = backend


def get(name):
    """The backend registered as ``name``."""
    return _backends[name]


@contextlib.contextmanager
def use(name):
    """Run the block with the backend registered as ``name``."""
    prev = state.backend
    state.backend = _backends[name]
    count_open(1)
    try:
        yield
    finally:
        state.backend = prev
        count_open(-1)


def functional_mode():
    return use("functional")


@contextlib.contextmanager
def compiling_mode():
    prev = state.compiling
    state.compiling = True
    count_open(1)
    try:
        yield
    finally:
        state.compiling = prev
        count_open(-1)
