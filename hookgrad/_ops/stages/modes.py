"""Stage 1, modes: what intercepts an op call before it runs.

``INTERCEPT[0]``, when set, receives every op call ``(op, args, statics, out)`` and
returns its result. Interceptors stack, each keeping the one it replaced and running the
op with that one in the slot: compile's lineage (``_compile/host_run.py``), DTensor's
stage (``distributed/tensor``), and the dispatch modes (``TorchDispatchMode``) below.

While dispatch modes are entered (``MODES``, innermost last), the innermost one receives
each op call as ``mode.__torch_dispatch__(func, types, args, kwargs)``: ``func`` is the
row's ATen overload (``overloads.py``), ``kwargs`` the row's static arguments. As in
PyTorch, the mode is popped while its ``__torch_dispatch__`` runs, so the ops it runs
(``func(*args, **kwargs)`` included) reach the modes under it. As in PyTorch, where the
modes sit under autograd, an op that records runs the mode under ``no_grad`` and records
its node on what the mode returned. ``call`` passes functions that are no row (factories,
``detach``) to the modes; a node's backward runs PyTorch's ops while a mode is entered
(``derivatives.py``), so modes see them.
"""
from weakref import ref as _weakref

from ... import _errors, _factory, _tensor
from ..._autograd import grad_mode
from ..._tensor import Tensor
from ..op_node import DISPATCH_MODES as MODES
from .record import _record

INTERCEPT = [None]
# DTensor's stage once a DTensor exists (``distributed/tensor/_dispatch.py`` fills it): it
# acts only on an op with a DTensor argument and runs any other as an empty slot would
SUBCLASS_STAGE = [None]
OVERLOAD = [None]  # overloads.overload (it sits above: its overloads run rows); it fills
FUNCTION = [None]  # overloads.function_overload: the overload of a function that is no row
_under = [None]  # the interceptor the dispatch modes sit on


def intercepts(*tensors):
    """Whether the interceptor in the slot (not empty: the caller tests it first) acts on
    an op on ``tensors``: any does, but DTensor's stage on plain Tensors, which it passes
    through unchanged (so that the fast paths of plain Tensors stay open once a DTensor
    exists, as the ops of ``apply`` do)."""
    return INTERCEPT[0] is not SUBCLASS_STAGE[0] or any(
        t.__class__ is not Tensor and isinstance(t, Tensor) for t in tensors)


def push(mode):
    """Enter the dispatch mode ``mode`` (innermost)."""
    if not MODES:
        _under[0], INTERCEPT[0] = INTERCEPT[0], _dispatch_to_mode
    MODES.append(mode)


def pop(mode):
    """Exit ``mode``, the innermost dispatch mode."""
    pop_innermost(MODES, mode, "dispatch mode")
    if not MODES and INTERCEPT[0] is _dispatch_to_mode:
        INTERCEPT[0] = _under[0]


def pop_innermost(stack, mode, kind):
    """Take ``mode`` off ``stack`` (a stack of ``kind`` s), where it must be on top."""
    if not stack or stack[-1] is not mode:
        raise AssertionError(f"exiting {type(mode).__name__}, which is not the innermost "
                             f"{kind}: modes exit in the reverse order of entering")
    stack.pop()


class StackedMode:
    """The ``with`` protocol of PyTorch's mode classes (``TorchFunctionMode``,
    ``TorchDispatchMode``): entering pushes the mode on its stack (``_push``), exiting
    pops it (``_pop``); a subclass names the two functions of its stack."""
    _push = _pop = None

    def __enter__(self):
        type(self)._push(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        type(self)._pop(self)

    @classmethod
    def push(cls, *args, **kwargs):
        _errors.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                     "`with Mode()`")
        return cls(*args, **kwargs)


def calls_unchanged(self, func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of ``BaseTorchFunctionMode`` and ``__torch_dispatch__`` of
    ``BaseTorchDispatchMode``: ``func`` called as it was."""
    return func(*args, **(kwargs or {}))


def innermost(stack):
    """The innermost mode of a mode stack (its last), or None when it is empty."""
    return stack[-1] if stack else None


def to_innermost(func, args, kwargs):
    """``func(*args, **kwargs)`` as the innermost dispatch mode handles it, that mode
    popped meanwhile (``func`` an OpOverload: a row's, or a custom operator's)."""
    mode = MODES.pop()
    if not MODES:
        INTERCEPT[0] = _under[0]
    try:
        types = tuple({type(a) for a in args if _is_subclass(a)})
        return mode.__torch_dispatch__(func, types, args, kwargs)
    finally:
        if not MODES:
            _under[0] = INTERCEPT[0]  # kept if something was entered meanwhile
            INTERCEPT[0] = _dispatch_to_mode
        MODES.append(mode)


def call(name, fn, args, kwargs):
    """``fn(*args, **kwargs)`` as the innermost dispatch mode handles it, ``fn`` a function
    that PyTorch runs as the ATen op ``name`` but hookgrad as no row (factories, ``detach``,
    the gradient seed ``ones_like``). Its callers run it only while a mode is entered."""
    return to_innermost(FUNCTION[0](name, fn), args, kwargs)


def _dispatch_to_mode(op, args, statics, out):
    func = OVERLOAD[0](op, out is not None, args)
    kwargs = dict(statics) if statics else {}
    if out is not None or not _records(op, args):
        return to_innermost(func, args, kwargs)
    # as PyTorch's modes sit under autograd: the mode computes the values (its ops record
    # nothing), then the node is recorded on whatever it returned
    with grad_mode.no_grad():
        res = to_innermost(func, args, kwargs)
    key = tuple(statics.items()) if statics else ()
    if res.__class__ is tuple:
        made = _record(op, key, args, tuple(r._data for r in res))
        return tuple(_adopt(r, m, args) for r, m in zip(res, made))
    return _save_detached(_adopt(res, _record(op, key, args, res._data), args))


def _save_detached(out):
    """``out``, whose node, where it saves ``out`` itself (relu, softmax), saves what
    ``aten.detach`` returns for it, as PyTorch's saved output is (a detached alias)."""
    node = out.grad_fn
    saved = node._out_saved if node is not None else None
    if saved.__class__ is tuple and saved[1]() is out:
        kept = call("detach.default", _tensor._detached, (out,), {})
        node._out_saved = (kept._data, *saved[1:])
    return out


def _adopt(returned, made, args):
    """The Tensor the mode returned, given the history recorded for it (``made``'s), as
    PyTorch's autograd sets it on the dispatch's result; ``made`` when that Tensor has a
    history already or is an argument."""
    if returned.grad_fn is not None or returned._requires_grad or \
            any(returned is a for a in args):
        return made
    node = made.grad_fn
    returned.grad_fn, returned._output_nr = node, made._output_nr
    returned._requires_grad = made._requires_grad
    saved = node._out_saved if node is not None else None
    if saved.__class__ is tuple and saved[1]() is made:  # the output saved, weakly held
        node._out_saved = (saved[0], _weakref(returned), returned._version)
    return returned


def _records(op, args):
    return grad_mode._state.enabled and op.node is not None and any(
        isinstance(a, Tensor) and a._requires_grad for a in args)


def _is_subclass(a):
    return isinstance(a, Tensor) and type(a) is not Tensor


_factory.MODES[:] = _tensor.DISPATCH[:] = MODES, call
