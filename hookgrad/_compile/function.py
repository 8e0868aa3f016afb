"""``CompiledFunction``: what ``hookgrad.compile(fn)`` returns. Each call plans (what is
state, the cache key), finds or traces the program (``hookgrad._compile.trace``), runs it
and writes its outputs back; ``hookgrad._compile.replay`` skips the planning when the last
call's state is unchanged."""
import functools

import jax
import numpy as np

from . import after_run as _after_run
from . import arg_objects as _arg_objects
from . import checks as _checks
from . import effects as _effects
from . import guards as _guards
from . import host_run as _host_run
from . import replay as _replay
from . import sharding as _sharding
from . import first_call as _first_call
from . import speculate as _speculate
from . import steady as _steady
from . import trace as _trace
from . import write_back as _write_back
from .. import _mode, _watch
from .._random import GLOBAL as _KEY
from .state import (_Plan, _Roots, _State, _arg_array_key, _context_key, _dict_key,
                    _global_hook_dicts, _is_optimizer, _module_cls, _module_hook_attrs,
                    _opt_key, _opt_tree, _tensor_key, _Walk)
from .state import code_of as _code_of
from .host_hook import _flatten_containers
from .._tensor import Tensor
from .._watch import WATCHED
from .._autograd import grad_mode
from .._autograd.saved import hook_state as _saved_state

__all__ = ["CompiledFunction"]

_gm = grad_mode._state
_OPEN = _mode.OPEN  # no thread in a functional call or a trace: no thread-local read
_Tracer = jax.core.Tracer


class CompiledFunction:
    """The callable ``hookgrad.compile(fn)`` returns.

    Attributes:
        trace_count: how many programs the step has traced and kept, one per distinct
            cache key met (``cache_clear()`` does not reset it). It is not how often the
            step's Python ran under tracing: a first call that creates the optimizer's
            state (or ``.grad``) traces the step twice, as it is and as the calls after it
            see it, and keeps only the second program (``hookgrad._compile.first_call``), so
            a training loop reads 1; a trace repeated to check for side effects, and the
            trace of a step that then runs eagerly, are not counted either.
        reshard_count: for a sharded step (``compile(..., mesh=...)``), how many state
            arrays (parameters, buffers, ``.grad``, optimizer state) calls moved to the
            sharding the program reads them in. The program writes them back there, so it
            stops growing after the first call of a training loop.

    Methods ``lower(*args, **kwargs)`` (the ``jax.stages.Lowered`` program for these
    arguments: ``.as_text()`` prints its StableHLO), ``cost_analysis(*args, **kwargs)`` and
    ``jaxpr(*args, **kwargs)`` inspect what runs; ``cache_clear()`` drops the programs.
    """

    _is_compiled_function = True

    def __init__(self, fn, *, donate=None, disable=False, autotune=False, options=None,
                 sharding=None, fullgraph=False):
        self._fn = fn
        self._fullgraph = fullgraph
        self._sharding = sharding   # compile's mesh and shardings (_compile.sharding.Config)
        self._moved = [0]
        self._autotune = autotune
        self._options = options or {}   # XLA compiler options (_compile_tune)
        self._roots = _Roots(fn)
        self._cache = {}
        self._guards = _guards.Guards()   # the plain Python values programs are keyed on
        self._found = None      # the cached walk of the roots, with its guards
        self._codes = ()        # the roots' code (``state.code_of``), read with the walk
        self._replay = None     # the last call, for the next to re-run (_compile_replay)
        self._donate = donate
        self._disable = disable
        self.trace_count = 0
        self._key_data = None   # (typed key, its raw data) from the last call
        self._hooks_known = frozenset(), frozenset()
        self._hooks_registered = False   # the last trace's (``trace._Snapshot``)
        self._spec_log = None   # the values the last eager run read (``speculate``)
        self._branches = {}     # key -> the programs of its other branches, to trace next
        self._misses = 0        # calls in a row whose branch had no program
        self._watch = None      # the Watch of the trace running (``appends``)
        self._append_only = {}  # id -> a list the step only appends to, held
        functools.update_wrapper(self, fn, updated=())

    @property
    def reshard_count(self):
        return self._moved[0]

    def __repr__(self):
        return f"<hookgrad.compile of {getattr(self._fn, '__name__', self._fn)!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def cache_clear(self):
        self._cache.clear()
        self._found = self._replay = None

    # ---- the call
    def __call__(self, *args, **kwargs):
        if self._disable or _OPEN[0] and (_mode.state.compiling or
                                          _mode.state.backend is not None):
            # nested in another compiled step or a functional call: inline
            return self._fn(*args, **kwargs)
        last = self._replay
        if last is not None:   # the steady call written for its program, first
            out = (last.basis.steady or _steady.rerun)(self, last, args, kwargs)
            if out is not _steady.MISS:
                return out
        last, self._replay = self._replay, None
        plan = None if last is None else _replay.check(self, last, args, kwargs)
        # ``last`` holds this call's input arrays: a donated buffer must have no other holder
        del last
        if plan is not None:
            entry = plan.basis.entry
        else:
            plan = self._plan(args, kwargs)
            if plan is None:  # an outer JAX trace is running: just trace through
                return self._fn(*args, **kwargs)
            entry = self._cache.get(plan.key)
            if entry is None and self._at_limit():
                return self._fn(*args, **kwargs)
            if entry is None:
                traced = self._trace(plan, args, kwargs)
                if isinstance(traced, BaseException):   # fullgraph=True; the user's frames
                    raise traced from None
                if traced is _speculate.LEARN:   # a branch on a value: learn it eagerly
                    return _speculate.learn(self, args, kwargs)
                if type(traced) is not tuple:   # eagerly, and a warning if that works
                    out = self._fn(*args, **kwargs)
                    traced()
                    return out
                plan, entry = traced
            elif type(entry) is _effects.Eager:
                return self._fn(*args, **kwargs)
            plan.basis = _replay.basis(plan, entry)
        while True:
            try:
                out = self._run(entry, plan)
                break
            except _speculate.Mispredicted as e:   # nothing written back
                self._replay = None
                entry = _speculate.branch(self, entry, plan, e.prefix)
                if entry is None:   # no program for this branch yet
                    return _speculate.learn(self, args, kwargs)
                plan = self._plan(args, kwargs)   # the state as it was: a full plan
                plan.basis = _replay.basis(plan, entry)
            except _host_run.Replaced as e:
                return self._replaced(entry, e, args, kwargs)
            except _after_run.Stale:   # a name rebound: trace again, next call
                self._replay = None
                for key in [k for k, v in self._cache.items() if v is entry]:
                    del self._cache[key]
                return self._fn(*args, **kwargs)
        if entry.path:
            self._misses = 0
        self._replay = plan.written
        return out

    def _replaced(self, entry, e, args, kwargs):
        """A host call's hook returned a value: the call, and later ones, run eagerly."""
        self._replay = None   # nothing written back, the host calls undone
        if self._fullgraph:
            raise _effects.Unsupported(
                f"hookgrad.compile(fullgraph=True): {e}, so this call cannot be one "
                "program. Return the replacement on every call, or drop "
                "fullgraph=True to run such a step eagerly.") from None
        for key in [k for k, v in self._cache.items() if v is entry]:
            self._cache[key] = _effects.Eager(str(e))
        out = self._fn(*args, **kwargs)
        _effects.warn_once(self, str(e))
        return out

    def _at_limit(self):
        """Whether the step has as many programs as ``torch._dynamo.config.recompile_limit``
        allows (8): as Dynamo, a call needing one more runs eagerly, with one warning. The
        signatures found to run eagerly count too: each cost a trace, and a step whose key
        changes on every call (a new value each time) must stop tracing."""
        config = _mode.dynamo_config
        limit = 8 if config is None else config.recompile_limit
        eager = sum(type(e) is _effects.Eager for e in self._cache.values())
        n = sum(type(e) is _trace.Entry for e in self._cache.values()) + \
            _speculate.other_branches(self)
        if n + eager < limit:
            return False
        what = f"{n} programs" + (f" and {eager} signatures run eagerly" if eager else "")
        _effects.warn_once(
            self, f"it has {what}, torch._dynamo.config.recompile_limit ({limit})",
            "A call needing a new program (new argument shapes, guarded Python values, "
            "hooks) runs eagerly, as under torch.compile; raise the limit to compile more.")
        return True

    def _trace(self, plan, args, kwargs):
        """``(plan, entry)`` to run this call by: the program traced for ``plan`` (or, on a
        first call creating state, the next calls' program). None where the step's Python
        has effects a program cannot repeat (``_compile.effects``) or its trace raised:
        they are undone, and a function to call after this call has run eagerly."""
        watch = self._watch = _effects.Watch(self, plan)
        # the hooks, and the places, there were before the trace (``host_run``)
        self._hooks_known = watch.hooks, watch.holders()
        failed, found, had = None, [], set(self._cache)
        try:
            with watch:
                entry = _trace.trace(self, plan)
                # a first step creating state: run it by the next calls' program
                steady = _first_call.first_call(self, plan, entry, args, kwargs)
            found = watch.effects() + self._registered()
            if (found or watch.logged()) and watch.quiet():
                found = self._trace_again(plan)
        except Exception as e:  # noqa: BLE001 - the eager run raises it if it is eager's
            failed = e
        self._watch = None
        if failed is None and not found:
            watch.show_logs()
            traced = steady if steady is not None else (plan, entry)
            old = plan.key[-1]
            # what host calls write changes on every call: not a guard
            # nor the argument objects' values: their structure is in the key
            if self._guards.add(watch, entry.host_reached | traced[1].host_reached |
                                _after_run.unguarded(traced[1]) |
                                _arg_objects.holders(plan)):
                self._rekey(old, traced[0])
            _speculate.traced(self, *traced)
            _after_run.note(self, traced[1])
            return traced
        watch.undo()
        # every program this trace made (a first call's next-calls program included,
        # whatever key it ended under): the step's Python is not in them
        for key in [k for k in self._cache if k not in had] + [plan.key]:
            if self._cache.pop(key, None) is not None:
                self.trace_count -= 1
        if isinstance(failed, _speculate.NeedsValue) and not found:
            return _speculate.LEARN
        return _effects.run_eagerly(self, plan, failed, found)

    def _registered(self):
        # a hook the trace registered on a state Tensor (``trace._Snapshot`` removed it)
        return ["registered a hook on a Tensor it keeps"] if self._hooks_registered else []

    def _rekey(self, old, plan):
        """Guarded places were added: the programs keyed with the values ``old`` (this
        call's, the next calls' of a first step) are found by the keys calls now make."""
        new = self._guards.values()
        for key in [k for k in self._cache if k[-1] == old]:
            self._cache[key[:-1] + (new,)] = self._cache.pop(key)
        plan.key = plan.key[:-1] + (new,)

    def _trace_again(self, plan):
        """The effects of tracing the step once more (undone), [] if none: a first trace
        that only filled caches (a Module's name looked up once, a counter dict gaining
        its keys) or logged a notice once is followed by traces that change nothing, and
        its program stands."""
        kept, count = self._cache.get(plan.key), self.trace_count
        again = self._watch = _effects.Watch(self, plan, logs_are_effects=True)
        try:
            with again:
                _trace.trace(self, plan)
        finally:
            self._cache.pop(plan.key, None)
            if kept is not None:
                self._cache[plan.key] = kept
            self.trace_count = count
        found = again.effects() + again.kept_tracers() + self._registered()
        if found:
            again.undo()
        return found

    def _entry(self, args, kwargs):
        plan = self._plan(args, kwargs)
        entry = self._cache.get(plan.key)
        if entry is None:
            traced = self._trace(plan, args, kwargs)
            if isinstance(traced, BaseException):
                raise traced from None
            entry = traced[1] if type(traced) is tuple else self._cache.get(plan.key)
        if type(entry) is _effects.Eager:
            raise RuntimeError(f"{self!r} has no program for these arguments: "
                               f"it runs eagerly ({entry.reason})")
        return plan, entry

    def lower(self, *args, **kwargs):
        """The lowered XLA program this call would run (``.as_text()``, ``.compile()``)."""
        plan, entry = self._entry(args, kwargs)
        flat = plan.flat + [jax.random.key_data(plan.rng)] if entry.key_in else plan.flat
        if entry.layout is not None:
            flat = [jax.ShapeDtypeStruct(np.shape(a), a.dtype, sharding=s)
                    for a, s in zip(flat, entry.layout.ins)]
        return entry.exe.lower(*flat)

    def cost_analysis(self, *args, **kwargs):
        """XLA's cost analysis (flops, bytes accessed) of the program for these arguments."""
        return self.lower(*args, **kwargs).compile().cost_analysis()

    def jaxpr(self, *args, **kwargs):
        """The traced program (a ``ClosedJaxpr``) for these arguments."""
        return self._entry(args, kwargs)[1].jaxpr

    def compiler_options(self, *args, **kwargs):
        """The XLA compiler options the program for these arguments is compiled with: the
        ``options`` given to ``compile``, or what ``mode="max-autotune"`` picked."""
        return dict(self._entry(args, kwargs)[1].options)

    # ---- planning: what is state, what the cache key is
    def _discover(self, module_cls):
        """The state the step's roots reach, and the part of the cache key read from its
        Modules and the global hooks. The walk is redone only when a guard fails: a root
        rebound, a container or Module slot re-pointed, an attribute of a Module rebound
        (``train()``/``eval()``), a hook added or removed."""
        roots, root_ids = self._roots.values()
        found = self._found
        if found is not None and found.holds(root_ids):
            return found.state, found.module_key
        now = _watch.epoch()
        st = _State(self._append_only)
        for v in roots:
            st.walk(v, module_cls)
        for d in _global_hook_dicts():
            st._guard(_dict_key, d, type(d) not in WATCHED)
        module_key = self._module_key(st)
        # the roots are held by ``_Roots`` and the guarded objects by ``st``: the ids
        # compared cannot be reused by new objects
        self._found = _Walk(root_ids, st, module_key, now)
        self._codes = tuple(map(_code_of, roots))
        return st, module_key

    @staticmethod
    def _module_key(st):
        key = [(id(m), m.training,
                tuple(_dict_key(m.__dict__.get(a)) for a in _module_hook_attrs(m)))
               for m in st.modules]
        key.append(tuple(_dict_key(d) for d in _global_hook_dicts()))
        # a Module's sharding (DistributedDataParallel, fully_shard) is part of the program
        key.append(tuple(id(c) for m in st.modules
                         if (c := m.__dict__.get(_sharding.MODULE_ATTR)) is not None))
        return tuple(key)

    def _plan(self, args, kwargs):
        """What this call's program reads and its cache key (``_compile.state._Plan``), or
        None inside an outer JAX trace."""
        module_cls = _module_cls()
        epoch = _watch.epoch()
        st, module_key = self._discover(module_cls)
        plan = _Plan()
        plan.found, plan.epoch, plan.n_walk = self._found, epoch, len(st.tensors)
        plan.roots = self._roots.held()   # the values the walk was made from
        plan.flags = list(map(_replay._FLAGS, st.tensors))
        arg_leaves, rebuild = _flatten_containers((args, kwargs))
        st, module_key, arg_only, arg_slots, static_key, plan.arg_objects = \
            self._plan_args(st, module_key, arg_leaves, module_cls)
        flat = []
        plan.ctx = _context_key(_gm.enabled, _saved_state)
        # then one ``_tensor_key`` per Tensor, from ``_KEY_TENSORS`` on (``replay.basis``)
        key = [tuple(static_key), plan.ctx, (module_key, self._codes)]
        grads_in = []
        for i, t in enumerate(st.tensors):
            arr = t._data
            if isinstance(arr, _Tracer):
                return None
            flat.append(arr)
            if t._grad is not None:
                flat.append(t._grad._data)
                grads_in.append(i)
            tid = id(t)
            key.append(_tensor_key(t, ("arg", arg_only[tid]) if tid in arg_only else tid))
        opt_trees = []
        plan.groups, plan.opt_keys = [], []
        for opt in st.optimizers:
            plan.groups.append(_replay.group_record(opt))
            tree, leaves, treedef = _opt_tree(opt)
            opt_trees.append((len(flat), len(leaves), treedef, tree))
            flat.extend(leaves)
            opt_key = _opt_key(opt, tree, leaves)
            plan.opt_keys.append(opt_key)
            key.append((id(opt), treedef) + opt_key)
        rng = _KEY.get()
        key.append(rng.dtype)
        for v, slot in zip(arg_leaves, arg_slots):
            if slot[0] == "a":
                flat.append(v)
        key.append(self._guards.values())   # last: ``_rekey`` replaces it
        plan.key, plan.flat, plan.state = tuple(key), flat, st
        plan.tensors, plan.optimizers = st.tensors, st.optimizers
        plan.n_args, plan.kw_names = len(args), tuple(kwargs)
        plan.grads_in, plan.opt_trees, plan.rng = grads_in, opt_trees, rng
        plan.arg_leaves, plan.arg_slots, plan.rebuild = arg_leaves, arg_slots, rebuild
        return plan

    def _plan_args(self, st, module_key, arg_leaves, module_cls):
        """Sort the call's leaves: Tensors join the state (by position when only an
        argument holds them), arrays are inputs, Modules and optimizers are walked, the
        rest are static. Returns the state, the module key, each argument-only Tensor's
        position, one slot per leaf (("t", tensor index) | ("a", None) | ("s", value)),
        the arguments' part of the cache key and, per plain object argument, its leaf's
        position and the objects it holds (``_compile.arg_objects``)."""
        # ``st`` is the cached walk: copied before adding to it (None: its Tensors copied)
        shared = True
        arg_only, arg_slots, static_key, objects = {}, [], [], []

        def add(t):
            nonlocal st, shared
            if id(t) not in st.tensor_ids:
                arg_only[id(t)] = len(arg_only)  # keyed by position, not identity
                if shared:
                    st, shared = st.copy(deep=False), None
                st.add_tensor(t)
            return st.tensor_ids[id(t)]

        for v in arg_leaves:
            if isinstance(v, Tensor):
                i = add(v)
                arg_slots.append(("t", i))
                static_key.append(("T", i))
            elif isinstance(v, (jax.Array, np.ndarray, np.generic)):
                arg_slots.append(("a", None))
                static_key.append(_arg_array_key(v))
            elif (obj := _arg_objects.walk(v, module_cls)) is not None:
                # a plain object (a KV cache): keyed by its structure, its Tensors read
                # by position, the attributes the step sets done again after each run
                key, tensors, reached, ids = obj
                objects.append((len(arg_slots), reached, ids))
                arg_slots.append(("s", v))
                static_key.append(("obj", key, tuple(map(add, tensors))))
            elif module_cls is not None and isinstance(v, module_cls) or _is_optimizer(v) \
                    or _holds_tensors(v):
                # NOTE: an object holding Tensors (transformers' KV cache): they are state,
                # read and written back as a Module's; the watch sees what the step does to it
                if shared is not False:
                    st, shared = st.copy(), False
                n_modules = len(st.modules)
                st.walk(v, module_cls)
                if len(st.modules) != n_modules:
                    module_key = self._module_key(st)
                arg_slots.append(("s", v))
                static_key.append(("obj", id(v)))
            else:
                arg_slots.append(("s", v))
                try:
                    hash(v)
                    static_key.append(("v", type(v), v))
                except TypeError:
                    static_key.append(("id", id(v)))
        return st, module_key, arg_only, arg_slots, static_key, objects

    # ---- running and writing back
    def _run(self, entry, plan):
        if entry.appends and not _after_run.ready(entry):
            raise _after_run.Stale
        exe = entry.exe
        flat = plan.flat
        if entry.key_in:
            rng = plan.rng
            cached = self._key_data
            if cached is not None and cached[0] is rng:
                data = cached[1]
            else:
                data = jax.random.key_data(rng)
            flat = flat + [data]
        if entry.layout is not None:
            entry.layout.place(plan, flat, self._moved)
        donated = entry.donated
        # index checks not proved by host bounds: the program giving back what it donates
        checked = entry.check_out is not None and not _checks.proved(entry, flat)
        if checked:
            exe, donated = _checks.checked_program(entry)
        # donate a replaced buffer only if nothing but its Tensor (or optimizer) holds it:
        # held here by its holder, ``plan.flat``, the list with the key
        # (a re-run call: not the optimizer's state only it holds, ``trace._private_state``)
        if donated is not entry.donated:
            get = _trace.items_getter(donated)
        else:
            get = entry.replay_get if plan.replayed else entry.donated_get
        exe = _write_back.executable(entry, exe, get, flat, _write_back.HELD if
                                     flat is plan.flat else _write_back.HELD + 1)
        res = exe(*flat)
        if checked:   # an index out of range raises here
            _checks.verify(entry, plan, flat, res)
        # the values the step's Python read: its branches checked, its scalars returned
        got = None if entry.path is None else _speculate.fetch(entry, res)
        if entry.host_calls and entry.host_first:   # hooks run on the host see the state before the write-back
            _host_run.run_calls(entry.host_calls, res)
        del flat
        _write_back.state(entry, plan.tensors, res)
        _write_back.optimizers(entry, plan.optimizers, plan.opt_trees, res, plan.flat)
        # the replaced inputs are freed now, while the program runs, not after it
        plan.flat = None
        if entry.key_out is not None:
            data = res[entry.key_out]
            new_key = jax.random.wrap_key_data(data, impl=_trace.key_impl(plan.rng))
            _KEY.set(new_key)
            self._key_data = (new_key, data)
        made = None
        if entry.appends:   # the step's ``losses.append(...)``, ``calls += 1``
            made = _after_run.replay(entry, res, got, plan.arg_leaves)
        if plan.basis is not None:
            plan.written = _replay.written(plan)
        out = _write_back.outputs(entry, res, got, plan.arg_leaves, made)
        # host hooks reached while tracing, in that order, with this run's values
        if entry.host_calls and not entry.host_first:
            _host_run.run_calls(entry.host_calls, res)
        return out


def _holds_tensors(v):
    """Whether a plain object argument holds Tensors in its attributes (one level, or in
    lists, tuples and dicts there)."""
    d = getattr(v, "__dict__", None)
    if type(d) is not dict or isinstance(v, type):
        return False
    for a in d.values():
        items = a.values() if type(a) is dict else a if type(a) in (list, tuple) else (a,)
        if any(isinstance(x, Tensor) for x in items):
            return True
    return False


CompiledFunction.__module__ = "hookgrad.compile"  # its public path
