"""Running a fuzz program in a mode: the mode's source (plain code with ``L`` the library,
printable as PyTorch code) and the runners; tests/fuzz/_modes.py has the rules, the
comparison and the shrinking, and says what each mode is.
"""
import os
import re
import warnings

from tests.fuzz import _harness as H
from tests.fuzz._programs import PRELUDE


def fuzz_examples(default):
    """How many programs a fuzz test runs: ``default``, or N with HOOKGRAD_FUZZ_EXAMPLES=N."""
    n = os.environ.get("HOOKGRAD_FUZZ_EXAMPLES")
    if not n:
        return default
    if not n.isdigit():
        raise ValueError(f"HOOKGRAD_FUZZ_EXAMPLES: expected a number of programs, got {n!r}")
    return int(n)


def _without_source_constants():
    # NOTE: hypothesis sometimes draws a number found in the source of any local module
    # loaded (hookgrad and every test file), so an edit anywhere changed which programs a
    # derandomized run drew: CI and a dry run of another commit drew different samples.
    # The fuzz sample should follow only the generator and the op table.
    try:
        from hypothesis.internal.conjecture import providers
        empty = providers.Constants()
    except (ImportError, AttributeError):  # another hypothesis: its own generation then
        return
    providers.HypothesisProvider._local_constants = property(lambda self: empty)


def fuzz_settings(examples):
    """Hypothesis settings of a fuzz test: the same ``examples`` programs on every run (no
    example database), no deadline (a program's first run compiles), no numbers taken
    from the project's source."""
    from hypothesis import HealthCheck, Phase, settings
    _without_source_constants()
    return settings(derandomize=True, max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=False,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink])


_PASSED = set()  # (kind, lines, flags) of drawn programs that passed, this process


def checked_before(kind, program):
    """Whether ``program`` passed a ``kind`` check already in this process: hypothesis's
    draws repeat a program (about one in seven), and a rerun compares the same again."""
    return (kind, tuple(program.lines), frozenset(program.flags)) in _PASSED


def passed(kind, program):
    """Record that ``program`` passed a ``kind`` check (call it after the assertion)."""
    _PASSED.add((kind, tuple(program.lines), frozenset(program.flags)))


HOST_PRELUDE = '''\
AT = [0]
host_hook = getattr(getattr(L, 'compile', None), 'host_hook', lambda f: f)
# the log is the harness's bookkeeping, written while the step is traced (values: host hooks)
trace_only = getattr(getattr(L, 'compile', None), 'trace_only', lambda f: f)
@trace_only
def at(i):
    AT[0] = i
@trace_only
def clear_log():
    LOG.clear()
def _meta(t, names, ts):
    if isinstance(t, (tuple, list)):
        return [_meta(v, names, ts) for v in t]
    if not isinstance(t, L.Tensor):
        return t
    r = {'shape': list(t.shape), 'dtype': str(t.dtype).split('.')[-1], 'value': ('#', len(ts))}
    ts.append(t.detach())
    if names:
        r['grad_fn'] = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    return r
@trace_only
def obs(label, t, names=True):
    ts = []
    entry = [AT[0], label, _meta(t, names, ts), None]
    LOG.append(entry)
    def fill(*vals): entry[3] = [v.tolist() for v in vals]
    host_hook(fill)(*ts)
'''

_SETUP = re.compile(r"^(a\d+ = L\.tensor\(|m\d+ = lin\()")
_GRAD = re.compile(r"\b((?:[am]\d+|y\d+)(?:\.weight|\.bias)?)\.grad\b")


def _is_setup(tag, src):
    return tag == "module_hook" or bool(_SETUP.match(src))


def _leaves(program):
    return [src.split(" = ", 1)[0] for _, src in program.lines if src.startswith("a") and
            _SETUP.match(src)]


def _modules(program):
    return [src.split(" = ", 1)[0] for _, src in program.lines if src.startswith("m") and
            _SETUP.match(src)]


def _at(i, src, indent=""):
    return f"{indent}at({i})\n{indent}{src}\n"


def _head(lib):
    return (f"import {lib} as L\nfrom tests.fuzz._programs import PRELUDE; exec(PRELUDE)\n"
            "from tests.fuzz._mode_run import HOST_PRELUDE; exec(HOST_PRELUDE)\n")


CALLS = 3  # the first call traces, the second retraces (``.grad`` now exists), the third
# re-runs the second's program (hookgrad._compile.replay)


def compiled_source(program, lib="torch"):
    """The program with all but its setup inside one compiled step, called ``CALLS``
    times; ``LOG`` keeps the last call's observations."""
    setup = "".join(_at(i, s) for i, (t, s) in enumerate(program.lines) if _is_setup(t, s))
    body = "".join(_at(i, s, "    ") for i, (t, s) in enumerate(program.lines)
                   if not _is_setup(t, s))
    return (f"{_head(lib)}{setup}@L.compile\ndef step():\n    clear_log()\n{body}"
            + "step()\n" * CALLS + "for e in LOG: print(*e)\n")


def _eager_calls(program, lib):
    """Eager ``lib`` running the step's lines ``CALLS`` times after the setup: the log of
    the last run begun (the one that raised, if one did), with the program's line numbers."""
    return eager_runs(program, lib)[1]


def eager_runs(program, lib):
    """``(once, calls)`` from one eager run of ``lib``: ``program`` run once (as
    ``_harness.run``) and its step's lines run ``CALLS`` times (as ``_eager_calls``). The
    repeated program begins with the program itself, and a line's observations are taken
    when it runs, so the first copy's are the single run's: the eager check, the compiled
    reference and the functional reference share one run."""
    body = [i for i, (t, s) in enumerate(program.lines) if not _is_setup(t, s)]
    if not body:
        out = H.run(program, lib)
        return out, out
    n = len(program.lines)
    rep = program.with_lines(program.lines + [program.lines[i] for i in body] * (CALLS - 1))
    out = H.run(rep, lib)
    once = [o for o in out if o[0] < n]
    if not out:
        return once, out

    def copy(i):
        return 0 if i < n else 1 + (i - n) // len(body)

    last = copy(out[-1][0])
    return once, [(i if i < n else body[(i - n) % len(body)], lab, v) for i, lab, v in out
                  if copy(i) == last]


_BACKWARD_AT = re.compile(r"^loss\.backward\((?:inputs=\[(?P<inputs>[^\]]*)\])?\)$")
_GRAD_OF = re.compile(r"^gs = L\.autograd\.grad\(loss, \[(?P<wrt>[^\]]*)\], allow_unused=True"
                      r"(?:, retain_graph=True)?\)$")


def _backward_line(program):
    for i, (_, src) in enumerate(program.lines):
        if src.startswith("loss = "):
            return i
    return None


def _as_grad(src):
    """``(wrt, then)`` for the backward line ``src`` under ``jax.grad``: the leaves to
    differentiate (None: every leaf and parameter) and what uses their gradients ``G``;
    None when ``jax.grad`` of the loss does not express ``src``."""
    m = _BACKWARD_AT.match(src)
    if m is not None:
        if m.group("inputs") is None:
            return None, "GRAD = G"
        wrt = [n.strip() for n in m.group("inputs").split(",")]
        return (wrt, "GRAD = G") if all(n.startswith("a") for n in wrt) else None
    m = _GRAD_OF.match(src)
    if m is not None:
        wrt = [n.strip() for n in m.group("wrt").split(",")]
        return (wrt, f"gs = tuple(G[k] for k in {wrt!r}); GRAD = {{}}") if \
            all(n.startswith("a") for n in wrt) else None
    return None


def _grads_from_dict(src):
    """``obs('a1.grad', a1.grad, False)`` reading ``GRAD`` instead of ``.grad``."""
    if not src.startswith("obs("):
        return src
    label, rest = src.split(", ", 1)
    return label + ", " + _GRAD.sub(r"GRAD.get(ALIAS.get('\1', '\1'))", rest)


def _leaf_aliases(leaves):
    """The forward's last line: each value that is a leaf itself (``a1.contiguous()``
    returns ``a1``) reads that leaf's gradient, as its ``.grad`` is the leaf's eagerly."""
    if not leaves:
        return ""
    pairs = ", ".join(f"({n!r}, {n})" for n in leaves)
    return ("        _v = dict(locals())\n"
            f"        ALIAS.update((k, n) for n, leaf in [{pairs}] for k, v in _v.items() "
            "if v is leaf and k != n)\n")


def functional_source(program, lib="torch", jit=False):
    """The program as a Module's forward under ``L.func.grad(functional_call)``; with
    ``jit``, that gradient under ``jax.jit``, as a training step runs it (one program)."""
    leaves, mods = _leaves(program), _modules(program)
    k = _backward_line(program)
    setup = "".join(_at(i, s) for i, (t, s) in enumerate(program.lines[:k + 1])
                    if _is_setup(t, s))
    fwd = "".join(_at(i, s, "        ") for i, (t, s) in enumerate(program.lines[:k + 1])
                  if not _is_setup(t, s))
    names = leaves + mods
    unpack = f"        {', '.join(names)}, = {', '.join('self.' + n for n in names)},\n" \
        if names else ""
    params = "".join(f"P.{n} = L.nn.Parameter({n}.detach())\n" for n in leaves) + \
        "".join(f"P.{m} = {m}\n" for m in mods)
    wrt, then = _as_grad(program.lines[k + 1][1])
    call = ("lambda p: L.func.functional_call(\n"
            "    P, (p, {k: v for k, v in S.items() if k not in p}), ())")
    grad, fill = f"G = L.func.grad({call})", ""
    if jit:  # the observed values leave the program as its outputs (``Outputs``)
        grad = ("import jax\nfrom tests.fuzz._mode_run import Outputs\n"
                "OUT = Outputs(host_hook); host_hook = OUT.hook\n"
                f"G = jax.jit(OUT.backward(L.func.grad(OUT.forward({call}), "
                "has_aux=True)))")
        fill = "G = OUT.fill(G)\n"
    after = "".join(_at(i, _grads_from_dict(s))
                    for i, (_, s) in enumerate(program.lines[k + 2:], k + 2))
    return (f"{_head(lib)}{setup}ALIAS = {{}}\nclass Prog(L.nn.Module):\n"
            f"    def forward(self):\n{unpack}{fwd}{_leaf_aliases(leaves)}        return loss\n"
            f"P = Prog()\n{params}"
            f"at({k + 1})\nS = L.func.state(P)\n"
            f"W = {'list(S)' if wrt is None else repr(wrt)}  # what the backward asks for\n"
            f"{grad}({{k: S[k] for k in W}})\n{fill}"
            "G = {k: L.as_tensor(v) for k, v in G.items()}\n"
            f"{then}\n{after}"
            "for e in LOG: print(*e)\n")


class Outputs:
    """The values ``obs`` reads inside a ``functional_jit`` gradient, as outputs of its
    program instead of host callbacks: JAX keeps no program with a host callback in its
    persistent cache (``jax/_src/compiler.py``), so with callbacks every seed's gradient
    was compiled again on every run. A value observed in the forward leaves ``jax.grad``
    as ``has_aux`` output (``forward``), one observed in the backward (a hook's gradient:
    a tracer of the ``jax.jit`` trace, where ``jax.grad`` transposes) as an output of the
    jitted function beside the gradients (``backward``); after the run ``fill`` hands each
    observation its values, as the callbacks did while it ran. A value of another trace
    (one the program opens inside the gradient) still goes through ``host_hook``, a
    callback: ``fallbacks`` counts those."""

    def __init__(self, host_hook):
        self.host_hook = host_hook
        self.phase = None      # "forward" / "backward" while the gradient is traced
        self.base = {}         # phase -> the trace whose values (and its parents') leave
        self.values = {"forward": [], "backward": []}
        self.calls = []        # (fill, [(phase, slot)]) in the order observed
        self.fallbacks = 0

    def _leaves(self, v):
        """Whether the array ``v`` can leave the program: concrete, or of the phase's
        trace or one it runs inside."""
        import jax
        if not isinstance(v, jax.core.Tracer):
            return True
        trace = self.base[self.phase]
        while trace is not None:
            if trace is v._trace:
                return True
            trace = getattr(trace, "parent_trace", None)
        return False

    def hook(self, fill):
        """``host_hook``: ``fill`` gets the values of its arguments after the run."""
        def call(*ts):
            arrays = [t._data for t in ts]
            if self.phase is None or not all(self._leaves(a) for a in arrays):
                self.fallbacks += self.phase is not None
                return self.host_hook(fill)(*ts)
            vals = self.values[self.phase]
            self.calls.append((fill, [(self.phase, len(vals) + i) for i in range(len(arrays))]))
            vals.extend(arrays)
        return call

    def forward(self, loss_fn):
        """``loss_fn`` returning ``(loss, forward values)``, for ``has_aux=True``."""
        from hookgrad._jax_trace import current  # the trace ``jax.grad`` runs it in

        def f(p):
            self.phase, self.base["forward"] = "forward", current()
            loss = loss_fn(p)
            self.phase = "backward"  # ``jax.grad`` transposes after the forward returns
            return loss, list(self.values["forward"])
        return f

    def backward(self, grad_fn):
        """``grad_fn`` (of ``forward``'s function) returning its gradients, the forward
        values and the backward values: the function ``jax.jit`` traces."""
        from hookgrad._jax_trace import current  # ``jax.jit``'s trace

        def f(p):
            self.base["backward"] = current()
            self.values, self.calls = {"forward": [], "backward": []}, []
            try:
                grads, forward = grad_fn(p)
            finally:
                self.phase = None
            return grads, forward, list(self.values["backward"])
        return f

    def fill(self, out):
        """The gradients of the run ``out``, each observation given its values."""
        import hookgrad
        grads, forward, backward = out
        got = {"forward": forward, "backward": backward}
        for fill, slots in self.calls:
            fill(*[hookgrad.as_tensor(got[phase][k]) for phase, k in slots])
        return grads


def jnp_source(program, lib="torch"):
    """The pure-op program (``run_jnp`` runs it with ``L`` = tests/fuzz/_jnp.py, its
    forward under ``jax.grad``)."""
    return program.source(lib)


def functional_jit_source(program, lib="torch"):
    """``functional_source`` with the gradient under ``jax.jit``."""
    return functional_source(program, lib, jit=True)


SOURCES = {"compiled": compiled_source, "functional": functional_source,
           "functional_jit": functional_jit_source, "jnp": jnp_source}
FUNCTIONAL = ("functional", "functional_jit")  # the modes of hookgrad.func, one set of rules


# --- running ----------------------------------------------------------------------
_UNSEEN = "<not run>"


def run(program, lib, mode):
    """``[(line, label, observation)]`` of ``program`` in ``mode``, as ``_harness.run``."""
    if mode == "jnp":
        return run_jnp(program)
    src = SOURCES[mode](program, lib.__name__).split("\n", 1)[1].rsplit("for e in LOG", 1)[0]
    ns = {"L": lib}
    err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(src, ns)  # noqa: S102 - the programs are our own generator's
        except Exception as e:  # noqa: BLE001 - the exception is the observation
            err = e
    out = []
    for line, label, meta, vals in ns.get("LOG", []):
        out.append((line, label, _fill(meta, vals)))
    if err is not None:
        out.append((ns["AT"][0], "raises", [type(err).__name__, H._first_line(err)]))
    return out


def run_jnp(program):
    """The program written in jnp (``tests/fuzz/_jnp.py``): its forward and loss as one
    function of the leaves and module weights, differentiated by ``jax.grad``; values
    observed in the forward come back as ``has_aux`` outputs."""
    import jax
    from tests.fuzz import _jnp as J
    ns = {"L": J}
    exec(PRELUDE, ns)  # noqa: S102
    exec(HOST_PRELUDE, ns)  # noqa: S102
    ns["lin"] = J.Linear
    k = _backward_line(program)
    pending = []
    checks, oks = [], []  # value checks met while traced: (line, message), all_ok
    err = None

    def traced_hook(fill):
        return lambda *ts: pending.append((fill, [t.a for t in ts]))

    def forward(params):
        for name, v in params.items():
            owner, _, attr = name.partition(".")
            if attr:
                setattr(ns[owner], attr, J.Tensor(v))
            else:
                ns[name] = J.Tensor(v)
        ns["host_hook"] = traced_hook
        J.TRACED_CHECKS.clear()
        for i, (t, src) in enumerate(program.lines[:k + 1]):
            if not _is_setup(t, src):
                ns["AT"][0] = i
                exec(src, ns)  # noqa: S102
                checks.extend((i, msg) for _, msg in J.TRACED_CHECKS)
                oks.extend(ok for ok, _ in J.TRACED_CHECKS)
                J.TRACED_CHECKS.clear()
        aux = [a for _, arrays in pending for a in arrays]
        return ns["loss"].a, (aux, oks)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for i, (t, src) in enumerate(program.lines[:k + 1]):
                if _is_setup(t, src):
                    ns["AT"][0] = i
                    exec(src, ns)  # noqa: S102
            params = {a: ns[a].a for a in _leaves(program)}
            for m in _modules(program):
                params.update({f"{m}.weight": ns[m].weight.a, f"{m}.bias": ns[m].bias.a})
            (_, (aux, oks)), grads = jax.jit(jax.value_and_grad(forward, has_aux=True))(params)
            ns["host_hook"] = lambda f: f
            it = iter(aux)
            for fill, arrays in pending:
                fill(*[J.Tensor(next(it)) for _ in arrays])
            _raise_failed_check(ns, checks, oks)
            for name, g in grads.items():
                owner, _, attr = name.partition(".")
                (getattr(ns[owner], attr) if attr else ns[owner]).grad = J.Tensor(g)
            for i, (_, src) in enumerate(program.lines[k + 1:], k + 1):
                ns["AT"][0] = i
                if src != "loss.backward()":
                    exec(src, ns)  # noqa: S102
        except Exception as e:  # noqa: BLE001 - the exception is the observation
            err = e
    out = [(line, label, _fill(meta, vals)) for line, label, meta, vals in ns["LOG"]]
    if err is not None:
        out.append((ns["AT"][0], "raises", [type(err).__name__, H._first_line(err)]))
    return out


def _raise_failed_check(ns, checks, oks):
    """Raise the first value check that failed in the run, on its line, as eager does
    there: what the forward logged on later lines is dropped."""
    for (line, message), ok in zip(checks, oks):
        if not bool(ok):
            ns["LOG"][:] = [e for e in ns["LOG"] if e[0] < line]
            ns["AT"][0] = line
            raise RuntimeError(message)


def _fill(meta, vals):
    if isinstance(meta, list):
        return [_fill(v, vals) for v in meta]
    if isinstance(meta, dict):
        slot = meta["value"][1]
        return {**meta, "value": vals[slot] if vals is not None else _UNSEEN}
    return meta
