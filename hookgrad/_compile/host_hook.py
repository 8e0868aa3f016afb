"""Host hooks: hooks that run on the host with concrete Tensors inside traced programs.

``hookgrad.compile.host_hook`` marks them (this module is re-exported by
``hookgrad.compile``). In a ``hookgrad.compile`` trace their Tensor arguments become
outputs of the program and the hook runs after each run; under other JAX transformations
the call is a ``jax.debug.callback``. Reading a traced value without one raises
:class:`TracedValueError`.
"""
import copy
import functools
import operator
import threading

import jax

from .. import _jax_trace, _mode
from .._autograd import grad_mode
from .._autograd.graph import _Node
from .._errors import TracedValueError  # noqa: F401 - re-exported (hookgrad.compile)
from .._ops.jax_errors import without_jax_note
from .._tensor import Tensor, _set_rg

__all__ = ["host_hook", "is_host_hook", "TracedValueError"]

_Tracer = jax.core.Tracer


def _user_frames(e):
    """``e`` with only the frames outside hookgrad and JAX in its traceback and without
    JAX's note about hidden frames: what is left is the user's step and hook."""
    import os
    import types
    skip = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
            os.path.dirname(os.path.abspath(jax.__file__)) + os.sep)
    frames = []
    tb = e.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(skip):
            frames.append(tb)
        tb = tb.tb_next
    new = None
    for tb in reversed(frames):
        new = types.TracebackType(new, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return without_jax_note(e).with_traceback(new)


def host_hook(fn=None, *, ordered=True):
    """Mark a hook as one that runs on the host with concrete Tensors.

    ::

        @hookgrad.compile.host_hook
        def log_norm(grad):
            norms.append(grad.norm().item())

        h = x.register_hook(log_norm)

    Eagerly it is called as usual. When its Tensor arguments are traced (inside
    ``hookgrad.compile`` or a JAX transformation of ``hookgrad.func.functional_call``), the
    call becomes a ``jax.debug.callback`` (``ordered=True`` keeps the host calls in program
    order): each time the compiled program runs, the hook is called with Tensors holding
    that run's values (non-Tensor arguments such as the module are passed as they were at
    trace time). A host hook must return ``None``: it observes, it cannot replace a
    gradient or an output.
    """
    if fn is None:
        return functools.partial(host_hook, ordered=ordered)
    if getattr(fn, "__hookgrad_host_hook__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        leaves, rebuild = _flatten_containers((args, kwargs))
        pos = [i for i, v in enumerate(leaves)
               if isinstance(v, Tensor) or isinstance(v, (jax.Array, _Tracer))]
        traced = any(isinstance(leaves[i]._data if isinstance(leaves[i], Tensor) else leaves[i],
                                _Tracer) for i in pos)
        if not traced and not _mode.state.compiling and not _in_jax_trace():
            return _call_host(fn, args, kwargs)
        ctx = _ctx.stack[-1] if _ctx.stack else None
        ours = ctx is not None and _current_trace() is ctx.trace
        call, arrays = _HostCall.make(fn, leaves, rebuild, ctx.state_ids if ours else ())
        if ours:
            # in hookgrad.compile's own trace: the values become outputs of the program
            # and the hook runs right after it (no host callback inside the program)
            ctx.host_calls.append((call, arrays))
            return None
        jax.debug.callback(call, *arrays, ordered=ordered)
        return None

    wrapper.__hookgrad_host_hook__ = True
    return wrapper


class _HostCall:
    """One host-hook call: the hook, its non-array arguments, where the arrays go; per
    parameter passed (a state Tensor of the step), its value and ``.grad`` at that point
    of the step, put in for the call."""

    __slots__ = ("fn", "leaves", "rebuild", "pos", "metas", "state")
    auto = False

    @classmethod
    def make(cls, fn, leaves, rebuild, state_ids=()):
        """The call of ``fn`` on ``leaves`` and the arrays it takes, in order."""
        call = cls()
        call.fn, call.rebuild = fn, rebuild
        call.pos, call.metas, call.state = [], [], []
        arrays, tail = [], []
        for i, v in enumerate(leaves):
            if isinstance(v, Tensor) and id(v) in state_ids:
                g = v._grad
                call.state.append((i, v, g is not None))
                tail += (v._data,) if g is None else (v._data, g._data)
            elif isinstance(v, (Tensor, jax.Array, _Tracer)):
                call.pos.append(i)
                # a Tensor: what its ``requires_grad`` and ``grad_fn`` show
                call.metas.append(None if not isinstance(v, Tensor) else
                                  (v._requires_grad, v.grad_fn and v.grad_fn.name()))
                arrays.append(v._data if isinstance(v, Tensor) else v)
        taken = set(call.pos).union(s[0] for s in call.state)
        call.leaves = [None if i in taken else v for i, v in enumerate(leaves)]   # no tracer
        return call, arrays + tail

    def _bind(self, values):
        """The leaves with ``values`` in place, and the parameters given theirs (a list for
        :meth:`_unbind`)."""
        new = list(self.leaves)
        for i, v, meta in zip(self.pos, values, self.metas):
            v = v if isinstance(v, jax.Array) else jax.numpy.asarray(v)
            new[i] = v if meta is None else _host_tensor(v, *meta)
        held, k = [], len(self.pos)
        for i, t, with_grad in self.state:
            held.append((t, t._compile_snapshot()))
            t._data, k = values[k], k + 1
            if with_grad:
                t._grad, k = Tensor._wrap(values[k]), k + 1
            new[i] = t
        return new, held

    @staticmethod
    def _unbind(held):
        for t, snap in reversed(held):
            t._compile_restore(snap)

    def __call__(self, *values):
        new, held = self._bind(values)
        try:
            a, k = self.rebuild(new)
            _call_host(self.fn, a, k)
        finally:
            self._unbind(held)


def _host_tensor(arr, requires_grad, node_name):
    """A hook's Tensor argument on the host: its value, showing the ``requires_grad`` and
    ``grad_fn`` name it had in the step."""
    if node_name is not None:
        return Tensor._wrap(arr, _HostNode(node_name))
    t = Tensor._wrap(arr)
    if requires_grad:
        _set_rg(t, True)
    return t


class _HostNode(_Node):
    """The ``grad_fn`` of a host call's Tensor: named as in the step, its graph left in
    the program."""

    __slots__ = ("_name",)

    def __init__(self, name):
        super().__init__()
        self._name = name

    def name(self):
        return self._name

    def _apply(self, *grads):
        raise RuntimeError(
            f"hookgrad.compile ran this hook on the host after the step's program: the graph "
            f"behind its Tensor ({self._name}) stayed in the program, so backward cannot run "
            "through it here. Call backward in the step, or run the step eagerly.")


class _CompileCtx(threading.local):
    def __init__(self):
        self.stack = []   # the traces of the hookgrad.compile steps being traced


_ctx = _CompileCtx()


class _Tracing:
    __slots__ = ("trace", "host_calls", "state_ids", "hooks", "before", "host_reached",
                 "host_done")

    def __init__(self, trace, state_ids=(), hooks=frozenset(), before=frozenset()):
        self.trace = trace
        self.hooks = hooks              # the hooks registered before the trace (ids)
        self.before = before            # the places the step could reach then (ids)
        self.host_calls = []
        self.state_ids = state_ids      # the step's state Tensors (ids)
        self.host_reached = set()       # what the hooks made host calls reach (ids)
        self.host_done = []             # their watches, and their places after each call


_current_trace = _jax_trace.current
_in_jax_trace = _jax_trace.active


def is_host_hook(fn):
    """Whether ``fn`` was marked with :func:`host_hook`."""
    return bool(getattr(fn, "__hookgrad_host_hook__", False))


def _call_host(fn, args, kwargs):
    with grad_mode.no_grad():
        res = fn(*args, **kwargs)
    if res is not None:
        raise RuntimeError(f"host hook {getattr(fn, '__name__', fn)!r} returned a value: a "
                           "hook marked with hookgrad.compile.host_hook runs on the host after "
                           "the fact and must return None")
    return None


class _DictCopy:
    """Rebuilds a dict subclass: a shallow copy of the original with each key set anew
    (its own ``__setitem__`` runs, so ModelOutput-like classes keep attributes in step)."""

    __slots__ = ("template",)

    def __init__(self, template):
        self.template = template

    def build(self, items):
        out = copy.copy(self.template)
        for k, v in items.items():
            out[k] = v
        return out


LEAF = operator.itemgetter(0)   # ``_flatten_containers``' rebuild of a tree that is a leaf


def _flatten_containers(tree):
    """Leaves of nested tuples/lists/dicts (anything else is a leaf, Modules included)
    and a function rebuilding the tree from new leaves."""
    leaves = []

    def walk(x):
        if type(x) in (tuple, list):
            return (type(x), [walk(v) for v in x])
        if type(x) is dict:
            return (dict, [(k, walk(v)) for k, v in x.items()])
        if isinstance(x, dict):  # a dict subclass (transformers' ModelOutput): a copy
            return (_DictCopy(x), [(k, walk(v)) for k, v in x.items()])  # with new values
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
            return (type(x), [walk(v) for v in x], "nt")
        leaves.append(x)
        return len(leaves) - 1

    spec = walk(tree)
    if type(spec) is int:   # a bare leaf: ``LEAF`` rebuilds it (a compiled step knows it)
        return leaves, LEAF

    def build(s, new):
        if isinstance(s, int):
            return new[s]
        kind = s[0]
        if kind is dict:
            return {k: build(v, new) for k, v in s[1]}
        if isinstance(kind, _DictCopy):
            return kind.build({k: build(v, new) for k, v in s[1]})
        vals = [build(v, new) for v in s[1]]
        if len(s) == 3:
            return kind(*vals)
        return kind(vals)

    return leaves, lambda new: build(spec, new)


# --------------------------------------------------------------------------- discovery
