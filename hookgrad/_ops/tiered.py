"""Tiered execution: a small program's first calls run in NumPy while XLA compiles it.

Eagerly, every op, fused backward chain, forward segment and optimizer update is an XLA
program, and on a CPU XLA takes 20-100 ms to compile each: the first training steps of a
small model in a fresh process spend nearly all their time compiling. ``jit(fn)`` here is
``jax.jit(fn)`` with a first tier: on a new argument signature it traces ``fn`` (as
``jax.jit`` would) and evaluates the traced program with NumPy (``hookgrad._numpy_eval``);
from the signature's second call on, a background thread (at a lower priority) lowers and
compiles it, and NumPy runs the calls until the compiled program is ready; from then on
the signature runs compiled. A program called once is never compiled. What the caller sees
is the same arrays (values within float rounding of XLA's: a few ulp in transcendental
functions and summation order), on the same default device, uncommitted as ``jax.jit``'s
would be. A caller that feeds the results to the next program (a forward segment run op
by op, a backward chain node by node) calls ``host`` instead: the first tier's results
stay NumPy values (``Host``) that the next first-tier call reads, put on the device
(``device``) only when something reads them as JAX arrays.

A signature takes the first tier only when it pays and is safe: concrete, uncommitted
arrays on the CPU (not tracers, not arrays a user placed on a device, not on a GPU, where
compiling is cheap against NumPy's transfers), every primitive and dtype one the
interpreter knows (``_numpy_eval.supported``), no weakly typed result, and at most
``MAX_COST`` element operations (a matmul or convolution counts its multiply-adds):
anything larger compiles first, as before, since NumPy would be slower than the compile. A
compile that fails is not reported from the background: that signature's next call runs
``jax.jit``'s way and raises there; an error inside the interpreter (a gap in it) sends
the signature to ``jax.jit`` likewise. While a compile job runs, the interpreter's switch
interval is ``SWITCH`` (0.5 ms; ``sys.setswitchinterval``, restored after the job): the
caller's thread gets the interpreter lock back sooner from the compiler's Python.

``hookgrad.autograd.set_tiered_execution(False)`` (or ``HOOKGRAD_TIERED=0`` in the
environment) turns it off: every signature compiles at first sight, and a program's
results are bit for bit the same from its first call on. So does
``hookgrad.use_deterministic_algorithms(True)``, PyTorch's switch for results that do not
vary from run to run (here they would, with when a background compile ends).
"""
import concurrent.futures
import contextlib
import functools
import heapq
import os
import sys
import threading
import time

import jax
import jax.extend.core
import numpy as np

from jax._src.random.prng import PRNGKeyArray as _KEY  # NOTE: private, as in lazy.py

from .. import _host_transfer, _numpy_eval
from .._host_value import Host
from .setting import Setting

ENV = "HOOKGRAD_TIERED"
MAX_COST = 1 << 26  # element operations a program may cost to run in NumPy first
STRICT = False  # tests: an interpreter error raises instead of falling back to XLA
_REST = 3  # the background compiler rests this many times its lowering's time after each
GRACE = 0.1  # seconds a single program's compile waits before it starts (_Compiler)
SWITCH = 5e-4  # seconds: the interpreter's switch interval while a compile job runs
_state = {"enabled": os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no"),
          "deterministic": False}  # hookgrad.use_deterministic_algorithms(True) sets it
_JITTED = True  # a signature's settled state: jax.jit runs it (else a _First)
_Tracer = jax.core.Tracer
_pool = []  # the background compiler, made on first use


class set_tiered_execution(Setting):
    """Run a program's first calls in NumPy while XLA compiles it (on by default on the
    CPU); as a context manager it restores the previous setting on exit. Off, programs
    compile at first sight and give XLA's bits from the first call::

        >>> with hookgrad.autograd.set_tiered_execution(False):
        ...     loss = model(x).sum()
    """

    _state = _state


def is_tiered_execution_enabled():
    """Whether new programs run their first calls in NumPy now: the switch is on and
    ``hookgrad.use_deterministic_algorithms(True)`` is not in effect."""
    return _state["enabled"] and not _state["deterministic"]


class _First:
    """A signature in the first tier: its traced program, then the compile under way."""
    __slots__ = ("jaxpr", "avals", "out_tree", "traced", "future")

    def __init__(self, traced):
        self.jaxpr, self.traced, self.future = traced.jaxpr, traced, None
        self.avals = traced.jaxpr.out_avals
        self.out_tree = jax.tree_util.tree_structure(traced.out_info)


class Program:
    """``jax.jit(fn, **kw)`` whose new signatures run in NumPy until compiled."""

    def __init__(self, fn, **kw):
        self.jitted = jax.jit(fn, **kw)
        self._sigs = {}

    def _cache_size(self):  # as jax.jit's: programs compiled (read by _engine/fusion.py)
        return self.jitted._cache_size()

    def __call__(self, *args):
        if _state["enabled"] and not _state["deterministic"]:
            try:  # NOTE: every eager op: ``_signature``'s common case, without its call
                sig = tuple([x.aval if x.__class__ is not _KEY else (_KEY, x.shape, x.dtype)
                             for x in args])
            except AttributeError:
                sig = _signature(args)
            state = self._sigs.get(sig)
            if state is not _JITTED:
                if state.__class__ is concurrent.futures.Future:  # ready() started it
                    concurrent.futures.wait((state,))  # called before it was ready
                    self._sigs[sig] = _JITTED
                    return self.jitted(*args)
                return self._tiered(sig, state, args)
        return self.jitted(*args)

    def host(self, *args):
        """``self(*args)`` for a caller that keeps NumPy values: a call the first tier runs
        gives its results as ``Host`` values, put on the device only when something reads
        them as JAX arrays (:func:`device`), and ``args`` may hold such values. NOTE: a
        put costs ~5 us and remembering its NumPy value ~2 more, against NumPy's 1-3 us
        for a small op: a chain of first-tier ops (a forward segment run op by op, a
        backward chain node by node) mostly feeds its own next op."""
        state = None
        if _state["enabled"] and not _state["deterministic"]:
            sig = _signature(args)
            state = self._sigs.get(sig)
            if state.__class__ is _First:
                return self._tiered(sig, state, args, True)
        args = [a if a.__class__ is not Host else device(a) for a in args]
        return self.jitted(*args) if state is _JITTED else self(*args)

    def _tiered(self, sig, state, args, host=False):
        leaves = jax.tree_util.tree_leaves(args)
        if state is None:  # _first checks the arguments are concrete
            state = self._sigs[sig] = self._first(args, leaves)
        elif not _concrete(leaves):  # a tracer with a first-tier aval: this call only
            state = _JITTED
        elif state.future is None:  # it repeats: worth compiling
            try:
                state.future = _compiler().submit(_compile, state.traced)
            except RuntimeError:  # the interpreter is exiting: no more background work
                state = self._sigs[sig] = _JITTED
            else:
                state.traced = None
        elif state.future.done():
            # NOTE: a failed compile is dropped here: jax.jit compiles again and raises
            state = self._sigs[sig] = _JITTED
        if state is not _JITTED:
            try:
                outs = _numpy_eval.eval_jaxpr(state.jaxpr, *[_host_value(x) for x in leaves])
            except Exception:  # noqa: BLE001 - an interpreter gap: XLA's way, not the user's
                if STRICT:
                    raise
                self._sigs[sig] = _JITTED
            else:
                # NOTE: small results remember their NumPy values: the next first-tier op
                # reads them with no copy back from the device
                return jax.tree_util.tree_unflatten(
                    state.out_tree, [Host(x, None) for x in outs] if host else
                    _host_transfer.put(outs, state.avals, True))
        return self.jitted(*[device(a) for a in args])

    def ready(self, *args):
        """Whether a call on ``args`` now runs the compiled program. If it would not,
        tracing and compiling it start in the background (no first tier) and this says
        False: for a large program (a fused backward chain, a forward segment) whose
        trace alone costs more than its caller's own way of computing the same thing,
        which the caller takes meanwhile."""
        if not (_state["enabled"] and not _state["deterministic"]):
            return True
        sig = _signature(args)
        state = self._sigs.get(sig)
        return state is _JITTED or state.__class__ is _First or self._settled(sig, state, args)

    def call_ready(self, *args, sig=None):
        """The call's result when ``ready(*args)``, else None (the compile under way in
        the background): one signature for both. ``sig``: the arguments' signature when
        the caller knows it (a deferred segment's key holds it), else worked out."""
        if not (_state["enabled"] and not _state["deterministic"]):
            return _call_jitted(self.jitted, args)
        if sig is None:
            sig = _signature(args)
        state = self._sigs.get(sig)
        if state is _JITTED:
            return _call_jitted(self.jitted, args)
        if state.__class__ is _First:  # its first tier already traced: call it
            return self._tiered(sig, state, args)
        return _call_jitted(self.jitted, args) if self._settled(sig, state, args) else None

    def _settled(self, sig, state, args):
        """``ready`` for a signature not yet seen (``state`` None) or compiling in the
        background (a Future)."""
        if state is None:
            if not _cpu_default() or not _concrete(jax.tree_util.tree_leaves(args)):
                self._sigs[sig] = _JITTED
                return True
            try:  # (a first-tier value kept in NumPy is traced by its shape and dtype)
                self._sigs[sig] = _compiler().submit(_trace_and_compile, self.jitted, [
                    a if a.__class__ is not Host else jax.ShapeDtypeStruct(a.shape, a.dtype)
                    for a in args])
            except RuntimeError:  # the interpreter is exiting: no more background work
                self._sigs[sig] = _JITTED
                return True
            return False
        if state.done():  # a failed compile raises again in jax.jit's call, the caller's
            self._sigs[sig] = _JITTED
            return True
        return False

    def _first(self, args, leaves):
        """The new signature's state: a ``_First``, or ``_JITTED``."""
        if not _cpu_default() or not _concrete(leaves):
            return _JITTED
        traced = self.jitted.trace(*args)
        closed = traced.jaxpr
        if (any(getattr(v.aval, "weak_type", False) for v in closed.jaxpr.outvars)
                or _cost(closed.jaxpr) > MAX_COST or not _numpy_eval.supported(closed)):
            return _JITTED
        return _First(traced)


def _host_value(x):
    if x.__class__ is Host:
        return x.np
    v = _host_transfer.known(x)
    return np.asarray(x) if v is None else v


def device(x):
    """A first-tier result kept in NumPy (a ``Host`` from :meth:`Program.host`) as the JAX
    array the program's call gives (uncommitted, on the CPU, remembering its NumPy value);
    anything else as it is."""
    if x.__class__ is Host:
        return _host_transfer.put([x.np], [x.aval], True)[0]
    return x


def _call_jitted(jitted, args):
    """``jitted(*args)``; ``args`` may hold first-tier values kept in NumPy (``Host``: a
    fused backward chain's saved values while its forward still runs op by op), put first.
    Python numbers (a segment's positions and scales) go in as JAX scalars made once per
    value (``_host_transfer.numbers_placed``): jaxlib would put each on the device per
    call."""
    # NOTE: looked for before the call (~1 us for 60 arguments, in C), not by catching
    # JAX's refusal: its TypeError costs ~1.5 ms (JAX filters the traceback it raises
    # with), ~3 a run of the 200-op chain between its first compiled program and its last
    if Host in map(type, args):
        args = [device(a) for a in args]
    return jitted(*_host_transfer.numbers_placed(args))


def wait():
    """Block until every compile started so far has ended (for benchmarks that time the
    steady state: a program's next call then runs compiled)."""
    if _pool:
        _pool[0].drain()


@functools.lru_cache(maxsize=None)
def _cpu_default():
    """Whether JAX's default backend is the CPU (elsewhere compiling is cheap against
    NumPy's work and transfers: no first tier)."""
    return jax.default_backend() == "cpu"


def _signature(args):
    """What of the arguments decides jax.jit's trace. NOTE: the hot path of every eager op:
    an aval per array argument, the type of a Python number (an op at positions passes its
    positions so) or of None, the shape and dtype of a NumPy array or PRNG key, the tree
    and leaves of anything else."""
    try:
        # NOTE: a PRNG key's aval costs ~9 us (dropout's key): its class, shape and dtype.
        # A Python number or None (a fused backward's constants) is told here too: its
        # AttributeError and the loop below cost 4-5 times this pass
        return tuple([c if (c := x.__class__) in _NUMBERS else x.aval if c is not _KEY
                      else (_KEY, x.shape, x.dtype) for x in args])
    except AttributeError:  # a NumPy array, a tuple of arrays
        pass
    sig = []
    for x in args:
        c = x.__class__
        if c in _NUMBERS:
            sig.append(c)
        elif c is np.ndarray or c is _KEY:  # positions as one array (_ops/box_index.py)
            sig.append((c, x.shape, x.dtype))
        else:
            aval = getattr(x, "aval", None)
            if aval is None:
                return _pytree_key(args)
            sig.append(aval)
    return tuple(sig)


signature = _signature  # (a fused backward's plan keeps its own: ``_engine/fusion.py``)


_NUMBERS = frozenset((int, float, bool, complex, type(None)))  # None: an empty tree


def _pytree_key(args):
    """What of the arguments decides jax.jit's trace (a Python number: its type)."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    return (tree, *[(x.__class__, getattr(x, "shape", None), getattr(x, "dtype", None),
                     getattr(x, "weak_type", None)) for x in leaves])


def _concrete(leaves):
    """Whether every argument is a value NumPy may read: no tracer, nothing a user placed
    on a device (jax.jit keeps it there), nothing off the CPU."""
    for x in leaves:
        if isinstance(x, _Tracer) or getattr(x, "_committed", False) or (
                isinstance(x, jax.Array) and next(iter(x.devices())).platform != "cpu"):
            return False
    return True


def jit(fn, **kw):
    """``jax.jit(fn, **kw)`` with the NumPy first tier (module docstring)."""
    return Program(fn, **kw)


def _compile(traced):
    start = time.thread_time()
    lowered = traced.lower()
    held = time.thread_time() - start
    lowered.compile()
    # NOTE: lowering is Python, holding the interpreter lock the caller's steps need (XLA's
    # compile releases it): resting 3x as long after each, the compiler takes at most a
    # quarter of the lock (with a warm persistent cache, jobs are mostly lowering). Its
    # CPU time is the time it held the lock: its wall time also counts the waits of a
    # thread at a lower priority on busy cores (3.3x its CPU time for GPT-2's programs at
    # load 7), and resting by it left the queue idle most of the time
    time.sleep(_REST * held)


def _trace_and_compile(jitted, args):
    _compile(jitted.trace(*args))


def _lower_priority():
    """The compiling thread yields its core to the caller's work (its NumPy, BLAS threads
    included): it compiles on spare cores. Linux sets a nice value per thread."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except OSError:
            pass


@contextlib.contextmanager
def _caller_first():
    """The interpreter's switch interval lowered to ``SWITCH`` for a compile job, restored
    after it unless someone set another meanwhile.

    NOTE: the caller's thread lets go of the interpreter lock in each of its C calls (a
    NumPy op of 500+ elements, a put, an XLA call), and the compiler's Python (tracing,
    lowering) takes it; by default the caller then waits up to 5 ms to get it back. A
    cold start's op-by-op runs paid that many times a run: the 200-op chain's first
    second ran at 1.7-2.3x PyTorch with the default, 1.4-1.6x at 0.5 ms."""
    before = sys.getswitchinterval()
    ours = min(before, SWITCH)
    sys.setswitchinterval(ours)
    try:
        yield
    finally:
        if abs(sys.getswitchinterval() - ours) < 1e-6:  # kept in whole microseconds
            sys.setswitchinterval(before)


def _compiler():
    if not _pool:
        _pool.append(_Compiler())
        # NOTE: at exit, compiles nobody will use are dropped rather than waited for (the
        # one running finishes: XLA cannot be stopped midway)
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(_pool[0].shutdown)
    return _pool[0]


class _Compiler:
    """The background compiler: one thread at a lower priority, running the jobs
    submitted to it. A large program's (``ready``: a forward segment, a fused backward
    chain) goes before every single program's: until it is compiled its caller runs its
    ops one XLA call or NumPy evaluation each, while a single program's first tier costs
    about what its compiled call does. In the order submitted otherwise. A single program's
    job starts only ``GRACE`` seconds after it was submitted: a large program submitted
    meanwhile goes first.

    NOTE: in first-in-first-out order, a GPT-2 forward+backward's 20 large programs
    waited behind the 66 single ops queued before them (seen twice before a segment is
    seen ``lazy.COMPILE_AT`` times). The grace is for the first of them: the queue is empty
    when a cold start's first single program repeats (the 200-op chain's first multiply,
    5 ms in), and its compile, which pays XLA's start-up (~100 ms on the 2-core VM),
    delayed the chain's backward chains and forward segments, submitted 30-50 ms in."""

    def __init__(self):
        self._jobs = []  # a heap of (rank, number, time submitted, future, fn, args)
        self._count = 0
        self._cv = threading.Condition()
        self._closed = False
        self._thread = None
        self._draining = 0  # callers of drain(): no grace while one waits

    def submit(self, fn, *args):
        future = concurrent.futures.Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._count += 1
            heapq.heappush(self._jobs, (fn is not _trace_and_compile, self._count,
                                        time.monotonic(), future, fn, args))
            # (a forked child has the parent's object but not its thread: it starts its own)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="hookgrad-compile")
                self._thread.start()
            self._cv.notify()
        return future

    def _work(self):
        _lower_priority()
        while True:
            with self._cv:
                while not self._closed:
                    if self._jobs:
                        single, _, submitted = self._jobs[0][:3]
                        left = submitted + GRACE - time.monotonic() \
                            if single and not self._draining else 0
                        if left <= 0:
                            break
                        self._cv.wait(left)  # or until a job is submitted
                    else:
                        self._cv.wait()
                if not self._jobs:
                    return
                future, fn, args = heapq.heappop(self._jobs)[3:]
            if future.set_running_or_notify_cancel():
                try:
                    with _caller_first():
                        result = fn(*args)
                    future.set_result(result)
                except BaseException as e:  # noqa: BLE001 - the caller's next call raises it
                    future.set_exception(e)

    def drain(self):
        """Return once every job submitted so far has ended (their graces waived)."""
        with self._cv:
            self._draining += 1
            self._cv.notify()
        try:
            # one worker, and a job submitted now runs after every job queued before it
            self.submit(lambda: None).result()
        finally:
            with self._cv:
                self._draining -= 1

    def shutdown(self):
        """Drop the jobs not started; the thread ends after the one running."""
        with self._cv:
            self._closed = True
            for job in self._jobs:
                job[3].cancel()
            self._jobs.clear()
            self._cv.notify()


def _cost(jaxpr):
    """Element operations of a jaxpr, a matmul's or convolution's multiply-adds counted."""
    total = 0
    for eqn in jaxpr.eqns:
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            total += _cost(sub)
        size = sum(int(np.prod(v.aval.shape)) for v in eqn.outvars
                   if hasattr(v.aval, "shape"))
        name = eqn.primitive.name
        if name == "dot_general":
            (contract, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval.shape
            size *= int(np.prod([lhs[d] for d in contract]))
        elif name == "conv_general_dilated":
            rhs = eqn.invars[1].aval.shape
            out_feature = eqn.params["dimension_numbers"].rhs_spec[0]
            size *= int(np.prod(rhs)) // max(rhs[out_feature], 1)
        total += size
    return total
