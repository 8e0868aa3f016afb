"""torch.jit, torch._dynamo and torch.compiler: what each name does in hookgrad (TorchScript's
decorators return their argument; is_compiling follows hookgrad.compile's trace), and the
not-implemented ones raise hookgrad's message."""
import typing

import jax
import pytest

import hookgrad
import hookgrad.nn as nn
from hookgrad import _dynamo, compiler, jit


def test_script_trace_and_decorators_return_what_they_are_given():
    def f(x):
        return x + 1
    m = nn.Linear(2, 2)
    assert jit.script(f) is f and jit.trace(f, (hookgrad.ones(2),)) is f
    assert jit.script(m) is m and jit.trace_module(m, {"forward": hookgrad.ones(2)}) is m
    assert jit.ignore(f) is f and jit.ignore(drop=True)(f) is f and jit.unused(f) is f
    assert jit.export(f) is f and jit.script_if_tracing(f) is f and jit._overload_method(f) is f
    assert jit.annotate(typing.List[int], []) == [] and jit.Final is typing.Final
    assert not jit.is_scripting() and not jit.is_tracing()
    assert not isinstance(m, jit.ScriptModule) and issubclass(jit.ScriptModule, nn.Module)
    assert jit.wait(jit.fork(f, 2)) == 3 and issubclass(jit.Error, RuntimeError)


@pytest.mark.parametrize("call, name", [
    (lambda: jit.save(nn.Linear(1, 1), "m.pt"), "torch.jit.save"),
    (lambda: jit.load("m.pt"), "torch.jit.load"),
    (lambda: jit.ScriptFunction(), "torch.jit.ScriptFunction"),
    (lambda: jit.isinstance([1], typing.List[int]), "torch.jit.isinstance"),
    (lambda: _dynamo.explain(lambda: 1)(), "torch._dynamo.explain"),
    (lambda: compiler.set_stance("force_eager"), "torch.compiler.set_stance"),
])
def test_what_hookgrad_lacks_raises_when_called(call, name):
    with pytest.raises(NotImplementedError, match=rf"hookgrad does not implement {name} yet"):
        call()


def test_is_compiling_inside_a_compiled_step_and_module_only():
    seen = []
    # recorded while tracing only: a compiled step whose Python appends runs eagerly
    note = hookgrad.compile.trace_only(lambda v: seen.append(v))

    def step(x):
        note((compiler.is_compiling(), _dynamo.is_compiling(),
              compiler.is_dynamo_compiling(),
              _dynamo.eval_frame._is_in_optimized_module()))
        return x * 2

    class M(nn.Module):
        def forward(self, x):
            note(compiler.is_compiling())
            return x + 1

    step(hookgrad.ones(2))
    hookgrad.compile(step)(hookgrad.ones(2))
    M()(hookgrad.ones(2))
    hookgrad.compile(M())(hookgrad.ones(2))
    jax.jit(lambda a: step(hookgrad.Tensor(a))._data)(jax.numpy.ones(2))
    assert seen == [(False,) * 4, (True,) * 4, False, True, (True,) * 4]


def test_decorators_keep_the_function_and_marks_are_hints():
    def f(x):
        return x * 3
    assert compiler.disable(f) is f and compiler.disable(reason="io")(f) is f
    assert compiler.allow_in_graph(f) is f and _dynamo.assume_constant_result(f) is f
    compiled = hookgrad.compile(lambda x: compiler.disable(f)(x) + 1)
    assert compiled(hookgrad.ones(2)).tolist() == [4.0, 4.0]
    t = hookgrad.ones(2, 3)
    assert _dynamo.mark_dynamic(t, 0) is None and _dynamo.mark_static_address(t) is None
    assert _dynamo.graph_break() is None and _dynamo.reset() is None
    assert compiler.list_backends() == ["xla"] and not compiler.is_exporting()


def test_config_settings_exist_and_patch_restores_them():
    cfg = _dynamo.config
    assert cfg.capture_scalar_outputs is False and cfg.cache_size_limit == 8
    with cfg.patch(capture_scalar_outputs=True):
        assert cfg.capture_scalar_outputs is True

    @cfg.patch("cache_size_limit", 64)
    def read():
        return cfg.cache_size_limit
    assert read() == 64 and cfg.cache_size_limit == 8 and not cfg.capture_scalar_outputs
    with pytest.raises(AttributeError, match="no setting 'not_a_setting'"):
        with cfg.patch(not_a_setting=1):
            pass
    assert compiler.config is cfg and issubclass(_dynamo.exc.Unsupported, RuntimeError)
