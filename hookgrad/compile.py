"""``hookgrad.compile``: run an eager-style training step as one XLA program.

::

    @hookgrad.compile
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()          # hookgrad's engine, hooks included, traced once
        opt.step()
        opt.zero_grad()
        return loss

The first call traces the step under ``jax.jit`` with every Tensor it can reach holding a
tracer: the Parameters and buffers of the Modules it closes over, their ``.grad``, the
state of its optimizers, the global PRNG key and its Tensor arguments. The eager engine
runs once at trace time, so tensor, Node, module, saved-tensor and multi-grad hooks are
traced into the program. What the step writes to that state comes back as outputs of the
compiled program and is written into the same Python objects after each call, so N
compiled calls leave the state N eager calls leave. Later calls with the same shapes,
dtypes, hooks, ``train()``/``eval()`` flags and ``.grad`` presence run the cached program.

Hooks that need concrete values on the host (logging, appending to a list) are marked
with :func:`host_hook`: their Tensor arguments become outputs of the program and the hook
runs after each run with that run's values. Reading a traced value any other way
(``.item()``, ``float(t)``, printing) raises :class:`TracedValueError`.

This module is the facade. The machinery is in ``hookgrad._compile``: ``function`` (the
``CompiledFunction`` a call goes through), ``trace`` (snapshot, bind, collect outputs,
donate), ``state`` (discovering the state and the cache keys), ``replay`` (re-running the
last call's program), ``host_hook`` and ``tune`` (XLA options, ``mode="max-autotune"``).

``hookgrad.compile`` is this module made callable: ``hookgrad.compile(fn)`` compiles,
``hookgrad.compile.host_hook`` marks host hooks.
"""
import functools
import sys
import types

from ._compile import sharding as _sharding
from ._compile import tune as _tune
from ._compile.function import CompiledFunction
from ._compile.effects import is_trace_only, trace_only
from ._compile.host_hook import TracedValueError, host_hook, is_host_hook
from ._compile.state import MODULE_COMPILE, _module_cls

__all__ = ["compile", "host_hook", "is_host_hook", "trace_only", "is_trace_only",
           "CompiledFunction", "TracedValueError"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="xla", mode=None,
            options=None, disable=False, donate=None, mesh=None, in_shardings=None,
            param_shardings=None):
    """Compile an eager-style step (forward, ``backward()``, optimizer step) with XLA.

    ::

        hookgrad.compile(model=None, *, fullgraph=False, dynamic=None, backend="xla",
                         mode=None, options=None, disable=False, donate=None, mesh=None,
                         in_shardings=None, param_shardings=None)

    Use it as a decorator (``@hookgrad.compile`` or ``@hookgrad.compile(...)``) or call it
    on a function. Called on a Module, it returns an ``OptimizedModule`` whose forward is
    compiled and whose outputs backpropagate through one compiled node, for eager training
    loops (see ``hookgrad.nn._optimized_module``). The step may close over Modules, optimizers
    and Tensors: their parameters, buffers, ``.grad``, optimizer state and the global PRNG key are
    inputs and outputs of the compiled program, written back after every call. It is
    retraced on new shapes/dtypes, hooks added or removed, ``train()``/``eval()``
    changes and ``.grad`` appearing or disappearing.

    ``mode="max-autotune"`` (or ``"max-autotune-no-cudagraphs"``): from a program's second
    run on, compile it under a few XLA option sets for its backend (on the CPU: which
    library runs the matmuls), run the step's calls on each in turn, timed, and keep the
    fastest (``step.compiler_options(*args)`` tells which);
    ``"default"``, ``"lite"`` and ``"reduce-overhead"`` compile as XLA does by default.
    ``options`` is a dict of XLA compiler options (as ``jax.jit``'s ``compiler_options``;
    ``"max_autotune": True`` autotunes on top of them); not both ``mode`` and ``options``.
    ``fullgraph``, ``dynamic`` and ``backend`` are accepted for PyTorch compatibility (the
    whole step is always one XLA program: there are no graph breaks). ``donate``: let XLA
    reuse the buffers of the state the step replaces (the default, ``None``, donates a
    buffer on a call where nothing but its Tensor or optimizer holds it; ``False`` never
    donates).

    Sharded steps (docs/distributed.md): ``mesh`` is a ``jax.sharding.Mesh`` with named
    axes; the program runs SPMD over its devices, ``jax.jit`` with shardings. ``in_shardings``
    shards the step's positional arguments: one ``PartitionSpec`` (or ``NamedSharding``,
    or ``None`` for replicated) for all, or a tuple with one per argument (keyword
    arguments are replicated). ``param_shardings`` shards the state by name in
    ``named_parameters()``/``named_buffers()`` of the Modules the step reaches: a dict or
    sequence of ``(regex, PartitionSpec)`` rules, the first whose regex ``re.search``-es
    the name wins, or a callable ``(name, tensor) -> PartitionSpec | None``; unmatched
    state is replicated. ``.grad`` and optimizer state are sharded like their parameter,
    and what the program writes back stays where it is (``step.reshard_count``). Hooks run
    in the program on the global arrays: a parameter's hooks see the batch-reduced
    gradient. Modules wrapped in ``nn.parallel.DistributedDataParallel`` or passed to
    ``hookgrad.distributed.fsdp.fully_shard`` bring their own mesh and rules.

    Example::

        >>> @hookgrad.compile
        ... def step(x, y):
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        ...     opt.zero_grad()
        ...     return loss
        >>> for x, y in data:
        ...     loss = step(x, y)
    """
    autotune, xla_options = _tune.resolve(mode, options)
    sharded = mesh is not None or in_shardings is not None or param_shardings is not None
    # checked now, so a bad mesh or rule fails where it is written
    sharding = _sharding.Config(mesh, in_shardings, param_shardings) if sharded else None
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable,
                                 donate=donate, mesh=mesh, in_shardings=in_shardings,
                                 param_shardings=param_shardings)
    kw = dict(donate=donate, disable=disable, autotune=autotune, options=xla_options,
              sharding=sharding, fullgraph=fullgraph)
    module_cls = _module_cls()
    if module_cls is not None and isinstance(model, module_cls):
        # as torch.compile(model): an OptimizedModule whose forward is compiled
        if sharded:
            raise ValueError("compile(model, mesh=..., in_shardings=..., param_shardings=...): "
                             "sharding applies to compiled steps; compile a function that "
                             "runs the model (forward, backward, optimizer step) instead")
        if disable:
            return model
        return MODULE_COMPILE["new"](model, fullgraph=fullgraph, options=xla_options)
    if not callable(model):
        raise RuntimeError("compile() expects a callable (a function or a Module), got "
                           f"{type(model).__name__}")
    return CompiledFunction(model, **kw)


def _module_compile_options(model=None, *, fullgraph=False, dynamic=None, backend="xla",
                            mode=None, options=None, disable=False, donate=None):
    """``Module.compile``'s arguments (``hookgrad.compile``'s, without ``model``): the
    options of its compiled forward, or None for ``disable=True``."""
    if model is not None:
        raise TypeError("Module.compile() takes no positional arguments; pass the options by "
                        "keyword, as hookgrad.compile(fn, ...)")
    _, xla_options = _tune.resolve(mode, options)
    return None if disable else {"fullgraph": fullgraph, "options": xla_options}


class _CallableModule(types.ModuleType):
    """``hookgrad.compile`` is both this module and the ``compile`` function."""

    def __call__(self, *args, **kwargs):
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
# the function carries the same names, for code holding ``from hookgrad.compile import compile``
compile.host_hook = host_hook
compile.is_host_hook = is_host_hook
compile.trace_only = trace_only
compile.is_trace_only = is_trace_only
compile.TracedValueError = TracedValueError


from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
