"""``hookgrad.compile``'s ``mode`` and ``options``: which XLA options a compiled step uses.

PyTorch's ``torch.compile(mode=..., options=...)`` configures Inductor. Here they configure
XLA: ``options`` is a dict of XLA compiler options (``jax.jit(compiler_options=...)``,
e.g. ``{"xla_cpu_use_xnnpack": True}``), checked when ``compile`` is called, and
``mode="max-autotune"`` (or ``options={"max_autotune": True, ...}``) compiles each program
under a few option sets for its backend, runs the step's real calls on them in turn,
timing each, and keeps the fastest.

On the CPU the choice that matters is the matmul library: XLA:CPU runs dots with YNNPACK
by default, and which of YNNPACK, Eigen and oneDNN is fastest depends on the shapes and
the machine, and on a shared machine on what else it is doing (on the 2-core AMD VM of
``benchmarks/compiled_step.py``, a transformer step running alone is 20-30% faster with
Eigen, the MLP's 5-15% slower). On GPUs and TPUs XLA already autotunes its kernels while
compiling, so there is nothing to choose between.
"""
import time

import jax
import numpy as np

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_AUTOTUNE = ("max-autotune-no-cudagraphs", "max-autotune")

NO_YNN = {"xla_cpu_experimental_ynn_fusion_type": ""}
CANDIDATES = {
    "cpu": ({}, NO_YNN, dict(NO_YNN, xla_cpu_use_onednn=True),
            {"xla_cpu_use_xnnpack": True}),
}

# a candidate replaces the default only if its time, divided by the default's in the same
# round, has a median this much below 1: one round's ratio scatters by +-10% on a shared
# machine, and a wrong pick costs more than a missed small gain
MARGIN = 0.05
# rounds of timed calls (each candidate once per round) after one untimed round: at least
# MIN_ROUNDS, then more while the tuning calls have taken less than BUDGET_S in all
MIN_ROUNDS, MAX_ROUNDS, BUDGET_S = 6, 20, 2.0


def resolve(mode, options):
    """``(autotune, xla_options)`` from ``compile``'s ``mode`` and ``options``; raises the
    ``RuntimeError`` ``torch.compile`` raises for an unknown mode, for both given, and for
    an option the backend does not know."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError("compile(options=...) expects a dict of XLA compiler options, got "
                        f"{type(options).__name__}")
    xla = dict(options or {})
    autotune = mode in _AUTOTUNE or bool(xla.pop("max_autotune", False))
    if xla:
        try:
            _check(xla)
        except jax.errors.JaxRuntimeError as e:
            raise RuntimeError(f"compile(options={xla!r}): XLA rejected an option: {e}. The "
                               "options are XLA compiler options (as for jax.jit's "
                               "compiler_options), plus max_autotune") from None
    return autotune, xla


def _check(options):
    """Raise XLA's error for an option it does not know or a value it cannot parse."""
    jax.jit(lambda: np.float32(0), compiler_options=options).lower().compile()


def jit(fn, donated, options, layout=None):
    """``jax.jit`` of a traced step with its donated arguments, XLA options and, for a
    sharded step, its inputs' and outputs' shardings (``layout.ins``/``layout.outs``)."""
    kw = {"compiler_options": options} if options else {}
    if layout is not None:
        kw.update(in_shardings=tuple(layout.ins), out_shardings=list(layout.outs))
    return jax.jit(fn, donate_argnums=donated, **kw) if donated else jax.jit(fn, **kw)


class Autotuned:
    """A program of ``mode="max-autotune"``. Its first run uses the given options, like
    any program's: one that runs once (a first call creating ``.grad`` and optimizer
    state) is not worth more compiles. From its second run on it is compiled under each
    candidate option set and the calls rotate through them, each timed to completion,
    round after round in alternating order; then the fastest (``pick``) runs every later
    call and ``entry.options`` names it. The tuning calls are real steps: they write back
    and run host hooks as any call does, and the candidates compute the same step (up to
    the rounding of a different matmul library), so nothing is run twice. Each is judged
    by its time over the default's in the same round, so a shared machine's drift falls on
    both alike."""

    def __init__(self, fn, donated, entry):
        self._fn, self._donated, self._entry = fn, donated, entry
        self._exe = self._jitted = jit(fn, donated, entry.options, entry.layout)
        self._first = True     # the first run uses the given options
        self._done = False     # picked, or nothing to pick from
        self._tuning = None    # [(options, executable, times, jitted)] while tuning
        self._round = self._call = 0
        self._spent = 0.0

    def lower(self, *args):
        return self._jitted.lower(*args)

    def __call__(self, *args):
        if self._done or self._first:
            self._first = False
            return self._exe(*args)
        if self._tuning is None:
            self._tuning = self._start(args)
            if self._tuning is None:    # nothing to choose between
                self._done = True
                return self._exe(*args)
        cands = self._tuning
        i = self._call if self._round % 2 == 0 else len(cands) - 1 - self._call
        t0 = time.perf_counter()
        out = jax.block_until_ready(cands[i][1](*args))
        dt = time.perf_counter() - t0
        if self._round:               # the first round runs each program once, untimed
            cands[i][2].append(dt)
            self._spent += dt
        self._call += 1
        if self._call == len(cands):
            self._call, self._round = 0, self._round + 1
            if self._round > MIN_ROUNDS and (self._round > MAX_ROUNDS or
                                             self._spent > BUDGET_S):
                self._finish()
        return out

    def _start(self, args):
        """The default's jitted program and each other candidate compiled for ``args``; a
        candidate XLA cannot compile (an option this jaxlib lacks) is left out."""
        cands = [(self._entry.options, self._exe, [], self._exe)]
        for opts in candidates(_platform(args), self._entry.options)[1:]:
            jitted = jit(self._fn, self._donated, opts, self._entry.layout)
            try:
                exe = jitted.lower(*args).compile()
            except jax.errors.JaxRuntimeError:
                continue
            cands.append((opts, exe, [], jitted))
        return cands if len(cands) > 1 else None

    def _finish(self):
        cands, self._tuning = self._tuning, None
        default = np.asarray(cands[0][2])
        ratios = [float(np.median(np.asarray(t) / default)) for _, _, t, _ in cands]
        self._entry.options, self._exe, _, self._jitted = cands[pick(ratios)]
        self._entry.tuning = [(o, float(np.median(t)), r)
                              for (o, _, t, _), r in zip(cands, ratios)]
        self._done = True


def candidates(platform, base):
    """The option sets to time on ``platform``: the user's ``base`` options win over a
    candidate's; duplicates are dropped; the first is ``base`` itself."""
    out, seen = [], set()
    for c in CANDIDATES.get(platform, ({},)):
        opts = {**c, **base}
        key = tuple(sorted(opts.items()))
        if key not in seen:
            seen.add(key)
            out.append(opts)
    return out


def pick(ratios, margin=MARGIN):
    """Index of the candidate with the lowest median time ratio to the default (index 0),
    or 0 unless that median is below ``1 - margin``."""
    best = min(range(len(ratios)), key=ratios.__getitem__)
    return best if ratios[best] < 1 - margin else 0


def _platform(args):
    for a in args:
        if isinstance(a, jax.Array):
            return next(iter(a.devices())).platform
    return jax.default_backend()
