"""Anomaly mode: ``detect_anomaly``, ``set_detect_anomaly``, NaN checks, forward tracebacks."""
import warnings

import pytest

import hookgrad as hg
from tests.differential import needs_torch, same_as_torch

ENABLE_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                  "should only be enabled for debugging.")
NAN_ERROR = r"Function 'DivBackward0' returned nan values in its 1th output\."


@pytest.fixture(autouse=True)
def _restore_state():
    yield
    hg.set_anomaly_enabled(False)  # a failing test must not leave it on for the next ones


def _messages(record):
    # PyTorch appends " (Triggered internally at <C++ file>)" to warnings from C++
    return [str(w.message).split(" (Triggered internally at")[0] for w in record]


def _div_nan_scenario(L):
    """0 / 0 in forward: the gradient w.r.t. the divisor is NaN (its 1th output)."""
    a = L.tensor([0.0, 1.0], requires_grad=True)
    b = L.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            y = a / b  # the forward line the warning must show
            keys = sorted(y.grad_fn.metadata)
            try:
                y.sum().backward()
                err = None
            except RuntimeError as e:
                err = (type(e).__name__, str(e))
    msgs = _messages(rec)
    # the traceback's file path and line differ between the two runs only by library
    trace = msgs[1].split("\n")
    return {"keys": keys, "error": err, "enable": msgs[0], "n_warnings": len(msgs),
            "head": trace[0], "last_code_line": trace[-2].strip(),
            "state_after": [L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()]}


def test_nan_in_backward_raises_and_warns_with_forward_traceback():
    got = same_as_torch(_div_nan_scenario)
    assert got["error"] == ("RuntimeError",
                            "Function 'DivBackward0' returned nan values in its 1th output.")
    assert got["enable"] == ENABLE_WARNING
    assert got["head"] == ("Error detected in DivBackward0. Traceback of forward call that "
                           "caused the error:")
    assert got["last_code_line"] == "y = a / b  # the forward line the warning must show"
    assert got["keys"] == ["traceback_"]
    assert got["state_after"] == [False, True]


def test_traceback_names_this_file_and_ends_at_the_user_call():
    a = hg.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with hg.autograd.detect_anomaly():
            y = a.exp()
    stack = y.grad_fn.metadata["traceback_"]
    assert __file__ in stack[-1] and "y = a.exp()" in stack[-1]
    assert not any("hookgrad/_ops" in s for s in stack)  # the op's dispatch is cut off


def test_decorator_form_and_state_restored():
    calls = []

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @hg.autograd.detect_anomaly(check_nan=False)
        def f(x):
            calls.append((hg.is_anomaly_enabled(), hg.is_anomaly_check_nan_enabled()))
            return (x / x).sum()

    x = hg.tensor([0.0, 2.0], requires_grad=True)
    f(x).backward()  # check_nan=False: no error, the NaN reaches .grad
    assert calls == [(True, False)]
    assert not hg.is_anomaly_enabled() and hg.is_anomaly_check_nan_enabled()
    assert hg.isnan(x.grad).tolist() == [True, False]


def _nesting_scenario(L):
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.autograd.detect_anomaly(check_nan=False):
            seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
            with L.autograd.set_detect_anomaly(False):
                seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
                with L.autograd.detect_anomaly():
                    seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
                seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
            seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
        seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
        L.autograd.set_detect_anomaly(True, check_nan=False)  # as a function: stays set
        seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
        L.autograd.set_detect_anomaly(False)
        seen.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
    return seen


def test_nesting_restores_the_previous_state():
    got = same_as_torch(_nesting_scenario)
    assert got == [(True, False), (False, True), (True, True), (False, True), (True, False),
                   (False, True), (True, False), (False, True)]


def test_check_nan_false_and_off_by_default_let_nan_through():
    assert not hg.is_anomaly_enabled() and hg.is_anomaly_check_nan_enabled()
    a = hg.tensor([0.0, 1.0], requires_grad=True)
    y = a / a
    assert y.grad_fn.metadata == {}  # no traceback kept while off
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # off: not a single warning
        y.sum().backward(retain_graph=True)
    assert hg.isnan(a.grad).tolist() == [True, False]
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with hg.autograd.detect_anomaly(check_nan=False):
            y.sum().backward()


def _function_error_scenario(L):
    class Boom(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    a = L.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            y = Boom.apply(a) * 2
            try:
                y.sum().backward()
                err = None
            except ValueError as e:
                err = str(e)
    msgs = _messages(rec)
    return {"error": err, "n_warnings": len(msgs),
            "head": msgs[1].split(".")[0], "forward_line": "Boom.apply(a) * 2" in msgs[1]}


def test_error_inside_a_custom_function_backward_warns_and_propagates():
    got = same_as_torch(_function_error_scenario)
    assert got == {"error": "boom in backward", "n_warnings": 2,
                   "head": "Error detected in BoomBackward", "forward_line": True}


def test_error_in_op_node_shows_its_forward_line():
    a = hg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with hg.autograd.detect_anomaly():
            y = a.sin()
    y.grad_fn.register_hook(lambda gi, go: 1 / 0)
    with pytest.warns(UserWarning) as rec:
        with hg.autograd.set_detect_anomaly(True):
            with pytest.raises(ZeroDivisionError):
                y.sum().backward()
    msg = [str(w.message) for w in rec if "Error detected" in str(w.message)]
    assert len(msg) == 1
    assert msg[0].startswith("Error detected in SinBackward0. Traceback of forward call")
    assert "y = a.sin()" in msg[0]


@needs_torch
def test_node_created_outside_anomaly_mode_has_no_forward_information():
    def scenario(L):
        a = L.tensor([0.0], requires_grad=True)
        y = a / a
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with L.autograd.set_detect_anomaly(True):
                try:
                    y.backward()
                except RuntimeError as e:
                    err = str(e)
        return [err, _messages(rec)]

    got = same_as_torch(scenario)
    assert got[1] == ["Error detected in DivBackward0. No forward pass information available. "
                      "Enable detect anomaly during forward pass for more information."]


def test_compiled_step_names_the_node_when_a_run_produces_nan():
    w = hg.tensor([1.0, 2.0], requires_grad=True)

    @hg.compile
    def step(x):
        (w * x).sqrt().sum().backward()  # x = 0: SqrtBackward0 gives inf, MulBackward0 NaN

    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with hg.autograd.detect_anomaly():
            step(hg.tensor([1.0, 4.0]))  # traced with the checks; finite: runs quietly
            assert w.grad.tolist() == pytest.approx([0.5, 2 ** -0.5])
            with pytest.warns(UserWarning, match="Error detected in MulBackward0") as rec:
                with pytest.raises(RuntimeError, match=r"Function 'MulBackward0' returned nan "
                                                       r"values in its 0th output\."):
                    step(hg.tensor([0.0, 4.0]))
    assert any("(w * x).sqrt().sum().backward()" in str(r.message) for r in rec)


def test_eager_nan_index_counts_edges_as_torch_does():
    def scenario(L):
        w = L.tensor([1.0, 2.0], requires_grad=True)
        x = L.tensor([0.0, 4.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with L.autograd.detect_anomaly():
                try:
                    (w * x).sqrt().sum().backward()
                except RuntimeError as e:
                    return str(e)

    assert same_as_torch(scenario) == ("Function 'MulBackward0' returned nan values in its "
                                       "0th output.")


def test_create_graph_nodes_name_the_node_that_induced_them():
    a = hg.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning) as rec:
        with hg.autograd.detect_anomaly():
            y = a * a * a
            g, = hg.autograd.grad(y.sum(), a, create_graph=True)
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                g.sqrt().sum().backward()  # d sqrt at 0 is inf; inf * 0 in d(a * a)
    msgs = [str(w.message) for w in rec][1:]
    assert len(msgs) == 2
    assert msgs[0].startswith("Error detected in MulBackward0Backward. Traceback of forward "
                              "call that caused the error:\n")
    assert "create_graph=True)" in msgs[0]
    assert msgs[1].startswith("\n\nPrevious calculation was induced by MulBackward0. Traceback "
                              "of forward call that induced the previous calculation:\n")
    assert "y = a * a * a" in msgs[1]


def test_turning_anomaly_mode_on_retraces_a_compiled_step():
    w = hg.tensor([1.0, 2.0], requires_grad=True)

    @hg.compile
    def step(x):
        (w * x).sqrt().sum().backward()

    step(hg.tensor([1.0, 4.0]))
    step(hg.tensor([0.0, 4.0]))  # off: no check in the program, the NaN reaches .grad
    assert hg.isnan(w.grad).tolist() == [True, False]
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with hg.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="'MulBackward0' returned nan values"):
                step(hg.tensor([0.0, 4.0]))
