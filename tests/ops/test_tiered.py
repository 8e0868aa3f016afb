"""Tiered execution (hookgrad/_ops/tiered.py): a small program's first calls on a new
signature run in NumPy while XLA compiles it in the background; then the compiled one
runs. What a user can see is the same but for float rounding: values, gradients, hook
calls and their order, errors."""
import concurrent.futures
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _numpy_eval
from hookgrad._engine import fusion
from hookgrad._ops import lazy, lazy_segment, tiered
from hookgrad._ops.op import _LIVE
from hookgrad.optim import _transform
from tests.ops._op_table import arrays_for, outputs, tensors
from tests.ops import test_op_table
from tests.ops.test_op_table import _rows, assert_close, grads, reference


class _NeverDone:
    """A compiler whose compiles never finish: every first-tier signature stays in NumPy."""

    def submit(self, fn, *args):
        return concurrent.futures.Future()


class _Counting:
    def __init__(self):
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return _EVAL(*args)


_EVAL = _numpy_eval.eval_jaxpr


@pytest.fixture(autouse=True)
def tiered_on(monkeypatch):
    """On, as it is by default outside the test suite (tests/conftest.py); an error of the
    interpreter raises (outside tests it sends the program to XLA)."""
    monkeypatch.setattr(tiered, "STRICT", True)
    with hg.autograd.set_tiered_execution(True):
        yield


@pytest.fixture
def first_tier(monkeypatch):
    """Fresh program caches whose every first-tier signature runs in NumPy (its compile
    never finishes) and counts those runs; the caches from before come back afterwards,
    so later tests reuse their compiled programs. The thread's trace of deferred ops starts
    empty too: ops an earlier test left pending, never read, would otherwise run (and be
    counted) at this test's first read."""
    monkeypatch.setattr(lazy._local, "trace", None)
    monkeypatch.setattr(lazy._local, "last", None)
    saved = [(op, op._fwd_cache, op._vjp_cache, op._avals) for op in list(_LIVE)]
    for op, *_ in saved:
        op._fwd_cache, op._vjp_cache, op._avals = {}, {}, {}
    for mod in (fusion, lazy_segment):
        monkeypatch.setattr(mod, "_compiled", type(mod._compiled)())
        monkeypatch.setattr(mod, "_seen", {})
    monkeypatch.setattr(tiered, "_compiler", _NeverDone)
    counting = _Counting()
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", counting)
    _transform._update_fn.cache_clear()
    _transform._init_fn.cache_clear()
    yield counting
    for op, fwd, vjp, avals in saved:
        op._fwd_cache, op._vjp_cache, op._avals = fwd, vjp, avals
    _transform._update_fn.cache_clear()
    _transform._init_fn.cache_clear()


def test_a_new_signature_runs_in_numpy_compiles_once_it_repeats(monkeypatch):
    counting = _Counting()
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", counting)
    prog = tiered.jit(lambda x, y: (jnp.tanh(x @ y).sum(0), x * 2))
    x, y = jnp.asarray(np.random.default_rng(0).standard_normal((4, 4)), jnp.float32), jnp.eye(4)
    want = jax.jit(prog.jitted)(x, y)
    state = None
    for call in (1, 2):
        got = prog(x, y)
        assert counting.calls == call  # NumPy ran it
        for g, w in zip(got, want):
            assert isinstance(g, jax.Array) and g.dtype == w.dtype and not g._committed
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
        state = prog._sigs[tuple(a.aval for a in (x, y))]
        # a program called once is never compiled; the second call starts XLA's compile
        assert (state.future is None) == (call == 1)
    tiered.wait()  # the compile finishes
    assert state.future.done()
    got = prog(x, y)
    assert counting.calls == 2  # now compiled
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # XLA's bits
    prog(x[:2], y[:, :2])  # another signature: NumPy again
    assert counting.calls == 3


def test_first_tier_results_feed_the_next_without_a_copy_back(first_tier, monkeypatch):
    # a result remembers its (read-only) NumPy value; the next first-tier op reads that,
    # not the device array
    prog = tiered.jit(lambda x: jnp.sin(x) * 2)
    x = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    y = prog(x)
    host = hg._host_transfer.known(y)
    np.testing.assert_array_equal(host, np.asarray(y))
    assert not host.flags.writeable
    reads = []
    monkeypatch.setattr(np, "asarray", lambda a, *k, **kw: reads.append(a) or np.array(a))
    z = prog(y)
    assert first_tier.calls == 2 and not any(r is y for r in reads)
    np.testing.assert_allclose(z, np.sin(np.sin(np.asarray(x)) * 2) * 2, rtol=1e-6)


def _chain(x, c):
    y = x
    for _ in range(6):
        y = (y * c + c).tanh()
    return y


def test_first_tier_values_stay_in_numpy_until_something_reads_them(first_tier, monkeypatch):
    """A deferred op run by the first tier keeps its result in NumPy for the next op
    (``Program.host``), and so does a backward chain node by node: a value is put on the
    device once something reads it as a JAX array (a compiled program, the user, a
    node's saved value). Values, dtypes and ``.device`` are those of the compiled run."""
    X = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    C = np.full((8, 8), 0.5, np.float32)

    def run():
        x = hg.tensor(X, requires_grad=True)
        y = _chain(x, hg.tensor(C))
        assert y.device == hg.device("cpu")  # asking computes nothing
        y.sum().backward()
        return y, x.grad

    run()  # each op's first call runs when called (its signature is learnt)
    puts = []
    put = hg._host_transfer.put
    monkeypatch.setattr(hg._host_transfer, "put",
                        lambda values, *a, **k: puts.extend(values) or put(values, *a, **k))
    calls = first_tier.calls
    y, grad = run()
    # 18 ops forward and 18 vjps backward ran in NumPy; put: the tensors made in run()
    # and what leaves the chains (the gradient, a value read outside them), not a value
    # per op as when each result was put
    assert first_tier.calls - calls >= 36 and len(puts) <= 6, len(puts)
    with hg.autograd.set_tiered_execution(False):
        y_xla, grad_xla = run()
    for got, want in ((y, y_xla), (grad, grad_xla)):
        assert isinstance(got._data, jax.Array) and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(force=True), want.numpy(force=True), rtol=2e-6,
                                   atol=1e-7)


def test_a_value_kept_in_numpy_is_put_for_the_compiled_program(first_tier):
    """``Program.host`` gives ``Host`` values in the first tier; a compiled program (or
    one not tiered) called with them puts them first, and ``device`` gives the array the
    plain call gives."""
    from hookgrad._host_value import Host
    prog = tiered.jit(lambda a, b: (a * b, a + 1))
    x = jnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32))
    want = prog(x, x)  # the signature's first call: traced, run in NumPy, put
    got = prog.host(x, x)  # its next: kept in NumPy
    assert [g.__class__ for g in got] == [Host, Host]
    for g, w in zip(got, want):
        d = tiered.device(g)
        assert isinstance(d, jax.Array) and not d._committed and d.dtype == w.dtype
        np.testing.assert_array_equal(d, w)
    prog._sigs[tiered._signature((x, x))] = tiered._JITTED  # as once its compile is ready
    for call in (prog.call_ready, prog.host, prog):
        res = call(x, got[0]) if call is not prog else call(x, tiered.device(got[0]))
        assert not any(r.__class__ is Host for r in res)
        np.testing.assert_array_equal(res[0], np.asarray(x) * np.asarray(want[0]))


def test_a_large_program_is_traced_and_compiled_in_the_background(monkeypatch):
    """``ready``: a fused chain or a forward segment is not traced in the caller's thread
    (its trace costs more than running its parts); the caller runs the parts until it is
    compiled, then the program."""
    program = tiered.jit(lambda a, b: jnp.sin(a) * b + 1.0)
    a, b = jnp.linspace(0.0, 1.0, 7, dtype=jnp.float32), jnp.float32(2.0)
    gate = concurrent.futures.Future()
    traced = []

    class Held:  # the background job waits for the gate: the caller must not
        def submit(self, fn, *args):
            done = concurrent.futures.Future()
            def job():
                gate.result()
                traced.append(True)
                fn(*args)
                done.set_result(None)
            threading.Thread(target=job).start()
            return done

    monkeypatch.setattr(tiered, "_compiler", Held)
    assert program.ready(a, b) is False and program.ready(a, b) is False
    assert program.call_ready(a, b) is None  # the caller's cue to run the parts
    assert not traced  # nothing was traced in the caller's thread
    gate.set_result(None)
    for _ in range(600):  # the job's trace and compile end (a bound, not a timing)
        if program.ready(a, b):
            break
        time.sleep(0.05)
    assert traced and program.ready(a, b)
    np.testing.assert_allclose(program(a, b), np.sin(np.asarray(a)) * 2.0 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(program.call_ready(a, b), np.sin(np.asarray(a)) * 2.0 + 1.0,
                               rtol=1e-6)


def test_the_compiler_rests_by_the_time_it_held_the_interpreter_not_by_its_waits(
        monkeypatch):
    """After each job the compiler sleeps ``_REST`` times its lowering's CPU time: a
    lowering that waited (a lower-priority thread on busy cores) held no lock meanwhile,
    and resting by its wall time left the queue idle (3.3x longer at load 7)."""
    rests = []
    monkeypatch.setattr(tiered.time, "sleep", rests.append)

    class Lowered:
        def compile(self):
            return None

    class Waiting:  # a lowering that spends 0.3 s waiting, and little CPU
        def lower(self):
            threading.Event().wait(0.3)
            return Lowered()

    class Working:  # a lowering that spends its time computing
        def lower(self):
            end = time.thread_time() + 0.05
            while time.thread_time() < end:
                pass
            return Lowered()

    tiered._compile(Waiting())
    tiered._compile(Working())
    assert rests[0] < 0.05 * tiered._REST  # the wait is not rested for
    assert rests[1] >= 0.05 * tiered._REST  # the CPU time is


def test_a_large_program_compiles_before_the_single_programs_queued_ahead_of_it():
    """The compiler runs a segment's or fused chain's job (``ready``) before first-tier
    programs' jobs submitted earlier: its caller runs the parts one by one meanwhile.
    Otherwise the jobs run in the order submitted; ``wait`` waits for all of them."""
    compiler = tiered._Compiler()
    ran, gate = [], threading.Event()

    class Lowered:
        def __init__(self, name):
            self.name = name

        def compile(self):
            ran.append(self.name)

    class Traced:
        def __init__(self, name):
            self.name = name

        def lower(self):
            return Lowered(self.name)

    class Jitted:  # what ``ready`` submits: the program, traced in the background
        def __init__(self, name):
            self.name = name

        def trace(self, *args):
            return Traced(self.name)

    busy = compiler.submit(gate.wait)  # the thread is busy: the next jobs queue
    jobs = [compiler.submit(tiered._compile, Traced("single 1")),
            compiler.submit(tiered._compile, Traced("single 2")),
            compiler.submit(tiered._trace_and_compile, Jitted("segment"), ()),
            compiler.submit(tiered._compile, Traced("single 3"))]
    gate.set()
    busy.result(timeout=60)
    concurrent.futures.wait(jobs, timeout=60)
    assert ran == ["segment", "single 1", "single 2", "single 3"]
    compiler.shutdown()


def test_a_single_programs_compile_waits_its_grace_for_a_large_program(monkeypatch):
    """A single program's job submitted to an idle compiler waits ``GRACE``: a large
    program's job submitted meanwhile runs first (a cold start's first repeated op would
    otherwise hold the compiler while the segments and backward chains queue behind it)."""
    monkeypatch.setattr(tiered, "GRACE", 30.0)
    compiler = tiered._Compiler()
    ran = []

    class Traced:
        def __init__(self, name):
            self.name = name

        def lower(self):
            return self

        def compile(self):
            ran.append(self.name)

        def trace(self, *args):
            return self

    single = compiler.submit(tiered._compile, Traced("single"))
    large = compiler.submit(tiered._trace_and_compile, Traced("segment"), ())
    large.result(timeout=20)  # at once: no grace for a large program
    assert ran == ["segment"] and not single.done()
    # ``wait`` (drain) waives the grace: it returns once the single program compiled
    done = threading.Thread(target=compiler.drain)
    done.start()
    done.join(timeout=20)  # far less than the 30 s grace
    assert not done.is_alive() and ran == ["segment", "single"] and single.done()
    compiler.shutdown()


def test_the_compiler_drops_its_queue_at_shutdown():
    compiler = tiered._Compiler()
    gate, started = threading.Event(), threading.Event()
    busy = compiler.submit(lambda: started.set() or gate.wait())
    queued = compiler.submit(lambda: "never")
    assert started.wait(timeout=60)
    compiler.shutdown()
    gate.set()
    assert busy.result(timeout=60) is True  # the running job ends
    assert queued.cancelled()
    with pytest.raises(RuntimeError):
        compiler.submit(lambda: None)
    compiler._thread.join(timeout=60)
    assert not compiler._thread.is_alive()


def test_a_compile_job_runs_with_the_switch_interval_lowered_then_restores_it():
    """While a job runs the interpreter switches threads every ``SWITCH`` seconds (the
    caller's thread, letting go of the lock in each C call, gets it back sooner); the
    previous interval comes back after the job, and one set meanwhile is kept."""
    import sys
    compiler, before = tiered._Compiler(), sys.getswitchinterval()
    try:
        seen = compiler.submit(sys.getswitchinterval).result(timeout=60)
        assert seen == pytest.approx(min(before, tiered.SWITCH), abs=1e-6)
        assert sys.getswitchinterval() == before
        compiler.submit(sys.setswitchinterval, 0.002).result(timeout=60)  # someone's own
        assert sys.getswitchinterval() == pytest.approx(0.002, abs=1e-6)
    finally:
        sys.setswitchinterval(before)
        compiler.shutdown()


def test_values_kept_in_numpy_are_put_before_the_compiled_call(first_tier):
    """``call_ready`` with ``Host`` values (a backward chain's saved values while its
    forward still runs op by op) puts them before calling the compiled program: JAX never
    sees one (its refusal, a TypeError, costs ~1.5 ms of traceback filtering)."""
    from hookgrad._host_value import Host
    prog = tiered.jit(lambda a, b: a * b + 1.0)
    x = jnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32))
    prog(x, x)
    kept = prog.host(x, x)
    assert kept.__class__ is Host
    prog._sigs[tiered._signature((x, x))] = tiered._JITTED  # as once its compile is ready
    jitted, seen = prog.jitted, []
    prog.jitted = lambda *args: seen.append([a.__class__ for a in args]) or jitted(*args)
    got = prog.call_ready(x, kept)
    assert seen and not any(Host in classes for classes in seen)
    np.testing.assert_allclose(got, np.asarray(x) * (np.asarray(x) ** 2 + 1) + 1, rtol=1e-6)


def test_a_large_program_is_ready_at_once_with_tiered_execution_off():
    program = tiered.jit(lambda a: a * 3.0)
    with hg.autograd.set_tiered_execution(False):
        assert program.ready(jnp.ones(3))
        np.testing.assert_array_equal(program.call_ready(jnp.ones(3)), np.full(3, 3.0))


def test_flat_arguments_are_told_apart_without_flattening_a_tree(monkeypatch):
    # a forward segment's leaves: arrays, Python numbers, None (attention's left-out
    # mask) and PRNG keys (dropout's); their signature is each one's aval or class
    monkeypatch.setattr(tiered, "_pytree_key", None)  # calling it would raise
    program = tiered.jit(lambda a, mask, key, n: a * n if mask is None else a + mask)
    a, key = jnp.ones(3), jax.random.key(0)
    for _ in range(3):
        np.testing.assert_array_equal(program(a, None, key, 2), np.full(3, 2.0))
        np.testing.assert_array_equal(program(a, a, key, 2), np.full(3, 2.0))
    assert tiered._signature((a, None, key, 2)) != tiered._signature((a, a, key, 2))
    assert tiered._signature((a, None, key, 2)) != tiered._signature((a, None, key, 2.0))


def test_turned_off_programs_compile_at_first_sight(monkeypatch):
    counting = _Counting()
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", counting)
    with hg.autograd.set_tiered_execution(False):  # the switch, beside set_lazy_forward
        assert not hg.autograd.is_tiered_execution_enabled()
        prog = tiered.jit(lambda x: jnp.exp(x) + 1)
        np.testing.assert_array_equal(prog(jnp.ones(3)), jnp.exp(jnp.ones(3)) + 1)
    assert hg.autograd.is_tiered_execution_enabled()  # as it was
    assert counting.calls == 0


def test_deterministic_algorithms_turn_the_first_tier_off(monkeypatch):
    counting = _Counting()
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", counting)
    prog = tiered.jit(lambda x: jnp.exp(x) + 1)
    try:
        hg.use_deterministic_algorithms(True)  # results that do not vary from run to run
        assert not hg.autograd.is_tiered_execution_enabled()
        np.testing.assert_array_equal(prog(jnp.ones(3)), jnp.exp(jnp.ones(3)) + 1)
        assert counting.calls == 0
    finally:
        hg.use_deterministic_algorithms(False)
    assert hg.autograd.is_tiered_execution_enabled()
    prog(jnp.ones(4))
    assert counting.calls == 1


@pytest.mark.parametrize("why, make, call", [
    ("a tracer", lambda: tiered.jit(jnp.sin), lambda p: jax.jit(p)(jnp.ones(3))),
    ("vmap", lambda: tiered.jit(jnp.sin), lambda p: jax.vmap(p)(jnp.ones((2, 3)))),
    ("grad", lambda: tiered.jit(lambda x: jnp.sin(x).sum()), lambda p: jax.grad(p)(jnp.ones(3))),
    ("committed", lambda: tiered.jit(jnp.sin),
     lambda p: p(jax.device_put(jnp.ones(3), jax.devices()[0]))),
    ("unsupported", lambda: tiered.jit(jax.lax.erf), lambda p: p(jnp.ones(3))),
    ("too costly", lambda: tiered.jit(lambda a: a @ a), lambda p: p(jnp.ones((512, 512)))),
])
def test_what_numpy_may_not_run_compiles_as_before(monkeypatch, why, make, call):
    counting = _Counting()
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", counting)
    prog = make()
    got = call(prog)
    want = call(prog.jitted)
    np.testing.assert_array_equal(got, want)
    assert counting.calls == 0, why


def test_an_interpreter_error_sends_the_program_to_xla(monkeypatch):
    monkeypatch.setattr(tiered, "STRICT", False)

    def broken(*args):
        raise ValueError("a gap in the interpreter")
    monkeypatch.setattr(_numpy_eval, "eval_jaxpr", broken)
    prog = tiered.jit(lambda x: x * 3)
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(prog(x), x * 3)
    assert prog._sigs[(x.aval,)] is tiered._JITTED
    monkeypatch.setattr(tiered, "STRICT", True)
    with pytest.raises(ValueError, match="a gap in the interpreter"):
        tiered.jit(lambda x: x * 3)(x)


def test_a_first_tier_signature_seen_by_a_tracer_runs_compiled(monkeypatch):
    monkeypatch.setattr(tiered, "_compiler", _NeverDone)
    prog = tiered.jit(lambda x: x * 3)
    x = jnp.arange(3.0)
    prog(x)  # the first tier: NumPy
    np.testing.assert_array_equal(jax.jit(prog)(x), x * 3)  # traced: the jax.jit program


# rows with a primitive or form the interpreter refuses (special functions NumPy has no
# vectorized form of; a scatter it cannot prove free of duplicate indices): their
# programs compile at first sight
COMPILED_FIRST = {"erf", "erf.method", "erfc", "erfc.method", "erfinv", "erfinv.method",
                  "lgamma", "lgamma.method", "digamma", "digamma.method", "scatter",
                  "scatter.value", "pad_packed_sequence"}
# LAPACK decompositions and solves (custom calls the interpreter has no NumPy form of)
COMPILED_FIRST |= {
    "inverse.method", "linalg.eigvalsh", "linalg.inv", "linalg.inv_ex", "linalg.lstsq",
    "linalg.lstsq gelsd",  # its rank check, ``(rank < n).any()``, runs on the host
    "linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve",
    "linalg.lu_solve right adjoint", "linalg.matrix_exp", "linalg.matrix_power -1",
    "linalg.pinv", "linalg.qr", "linalg.qr complete", "linalg.qr wide", "linalg.slogdet",
    "linalg.solve", "linalg.solve broadcast", "linalg.solve right", "linalg.solve vector",
    "linalg.solve_ex", "linalg.solve_triangular", "linalg.solve_triangular lower right unit",
    "linalg.svdvals", "matrix_exp.method", "pinverse", "qr", "qr.method complete",
    "slogdet.method", "svd.method no_uv",
}
# special functions, sign-bit ops, integer gcd/lcm loops, sorted searches, scatters (put,
# index_copy, index_fill, diagonal_scatter); in these rows the ops around the scatter or
# zeta (the index's reshape, the diagonal view, zeta's ``+ 1.5`` on detached inputs) run
# on the host (stages/host.py, host_tier.view)
COMPILED_FIRST |= {
    "bucketize", "bucketize.right", "copysign", "copysign.scalar", "frexp", "gcd", "i0", "lcm",
    "mvlgamma", "polygamma", "polygamma.method", "put", "searchsorted", "signbit",
    "special.zeta", "index_copy", "index_fill", "index_fill.tensor", "diagonal_scatter.dims",
    "isin", "isin ids",  # integers only, nothing requires grad: all on the host (host_forms)
}
# branch legacy: torch.special's functions (special functions, the polynomials' loops), the
# deprecated LU forms (LAPACK), geqrf's and triangular_solve's reflections and solves
COMPILED_FIRST |= {
    "special.erfcx", "special.erfcx.negative", "special.i0e", "special.i1", "special.i1e",
    "special.log_ndtr", "special.psi", "special.gammaln", "special.multigammaln", "igamma",
    "igamma_",
    "igammac.method", "special.gammaincc", "special.modified_bessel_i0",
    "special.modified_bessel_i1", "special.chebyshev_polynomial_t.tensor_n",
    "special.legendre_polynomial_p.scalar_x", "lu", "lu.method_infos", "lu_solve",
    "lu_solve.method", "triangular_solve lower_transpose_unit", "geqrf", "geqrf wide_batched",
    *(f"special.{kind}{name}" for kind in ("", "shifted_")
      for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                   "chebyshev_polynomial_w")),
    "special.hermite_polynomial_h", "special.hermite_polynomial_he",
    "special.laguerre_polynomial_l", "special.legendre_polynomial_p",
}
# complex numbers and torch.fft: the first tier computes real arrays only (complex dtypes and
# FFT custom calls have no NumPy form in its interpreter)
COMPILED_FIRST |= {
    "complex", "polar", "view_as_complex", "view_as_real_copy", "view_as_complex_copy", "conj",
    "conj_physical", "conj_physical_", "real.set", "imag.set", "abs.complex", "angle.complex",
    "sgn.complex", "fft.fftfreq", "fft.rfftfreq",
    *(f"fft.{n}" for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft",
                           "rfft2", "irfft2", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2",
                           "hfftn", "ihfftn")),
}


@_rows()
def test_op_table_through_the_first_tier(first_tier, row):
    """Every op-table row, forward and backward, with its first-tier programs run by NumPy:
    jax.grad's values, as through XLA."""
    arrays = arrays_for(row)
    got = outputs(row.call(hg, *tensors(hg, row, arrays)))
    _, _, gs = grads(hg, row, arrays)
    assert (first_tier.calls == 0) == (row.id in COMPILED_FIRST), first_tier.calls
    if row.ref is None:
        return
    want = reference(row)
    for k, (g, w) in enumerate(zip(got, want[0])):
        assert_close(g, w, f"{row.id} output {k} vs jnp")
    for k, (g, w) in enumerate(zip(gs or (), want[1] or ())):
        assert_close(g, w, f"{row.id} grad {k} vs jax.grad")


@_rows("gg")
def test_grad_of_grad_through_the_first_tier(first_tier, row):
    """create_graph: the backward's vjps are recorded ops, new programs: through NumPy too."""
    test_op_table.test_grad_of_grad_matches_jax_and_torch(row)
    assert (first_tier.calls == 0) == (row.id in COMPILED_FIRST), first_tier.calls


_ERRORS = next(m for m in test_op_table.test_errors_match_torch.pytestmark
               if m.name == "parametrize").args[1]


@pytest.mark.parametrize("call, exc, match", _ERRORS)
def test_errors_through_the_first_tier_are_the_compiled_ones(first_tier, call, exc, match):
    with pytest.raises(exc, match=match):
        call(hg, hg.zeros(3, 4))


def _cnn_steps(steps=3):
    """A small CNN's training steps with a module hook, a tensor hook and a saved-tensor
    hook recording what they see, in order; returns (log, losses, parameters)."""
    hg.manual_seed(0)
    nn = hg.nn
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                      nn.Linear(4 * 8 * 8, 10))
    opt = hg.optim.AdamW(m.parameters(), lr=1e-2)
    log = []
    m[3].register_full_backward_hook(
        lambda mod, gin, gout: log.append(("module", float(gout[0].abs().sum()))))
    x, y = hg.randn(8, 1, 8, 8), hg.randint(0, 10, (8,))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with hg.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("pack", tuple(t.shape))) or t, lambda t: t):
            h = m[1](m[0](x))
        h.register_hook(lambda g: log.append(("tensor", tuple(g.shape))))
        loss = hg.nn.functional.cross_entropy(m[3](m[2](h)), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return log, losses, [p.detach().numpy() for p in m.parameters()]


def test_a_training_loop_through_the_first_tier_is_the_compiled_ones(first_tier):
    """Hook calls, their order and what they see, losses and parameters: the same with the
    first tier as with every program compiled at first sight."""
    log, losses, params = _cnn_steps()
    assert first_tier.calls > 0
    calls = first_tier.calls
    with hg.autograd.set_tiered_execution(False):
        want = _cnn_steps()
    assert first_tier.calls == calls
    # the same hook calls in the same order, seeing the same values (to float rounding)
    assert [(kind, v) for kind, v in log if kind != "module"] == \
        [(kind, v) for kind, v in want[0] if kind != "module"]
    assert [kind for kind, _ in log] == [kind for kind, _ in want[0]]
    np.testing.assert_allclose([v for kind, v in log if kind == "module"],
                               [v for kind, v in want[0] if kind == "module"], rtol=1e-5)
    np.testing.assert_allclose(losses, want[1], rtol=1e-5)
    for p, w in zip(params, want[2]):
        np.testing.assert_allclose(p, w, rtol=1e-4, atol=1e-6)
