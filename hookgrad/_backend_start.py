"""Which line of the program started JAX's backends.

JAX creates its backends (the CPU client, GPUs, TPUs) on first use and keeps them for the
life of the process; ``jax.distributed.initialize`` (what ``init_process_group`` starts)
must come before that. Importing hookgrad starts none, so when one has started, a line of
the program did: :func:`watch` records it through JAX's backend-initialization hook, and
:func:`started_by` names it in ``init_process_group``'s error.
"""
import os
import traceback

import jax

_FIRST: list[str] = []   # "file:line in function: code" of the call that started them
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_JAX = (os.path.dirname(os.path.abspath(jax.__file__)) + os.sep, os.sep + "jaxlib" + os.sep,
        "<frozen importlib")


def _record(backend) -> None:
    if _FIRST:
        return
    stack = traceback.extract_stack()[:-1]
    outside = [f for f in stack if not f.filename.startswith(_JAX)
               and not any(p in f.filename for p in _JAX[1:])]
    user = [f for f in outside if not f.filename.startswith(_HERE)]
    if not outside:
        return
    frame = (user or outside)[-1]
    where = f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
    inner = outside[-1]
    if user and inner is not frame:   # through hookgrad: name the hookgrad call as well
        where += f" (through {os.path.relpath(inner.filename, os.path.dirname(_HERE[:-1]))}:" \
                 f"{inner.lineno} in {inner.name})"
    _FIRST.append(where)


def watch() -> None:
    """Record the first call that starts a JAX backend from now on."""
    try:
        from jax._src import xla_bridge  # NOTE: private: JAX's one backend-start hook
        if not xla_bridge.backends_are_initialized():   # else it would name this import
            xla_bridge.register_backend_initialization_hook(_record)
    except (ImportError, AttributeError):  # pragma: no cover - a JAX without the hook
        pass


def started() -> bool:
    """Whether JAX's backends have started in this process."""
    from jax._src import xla_bridge  # NOTE: private; JAX has no public query
    return xla_bridge.backends_are_initialized()


def started_by() -> str:
    """The call that started JAX's backends, or a note that it is unknown."""
    return _FIRST[0] if _FIRST else "a call made before hookgrad was imported"
