"""Which of the three modes is running in this thread.

- eager: the tape records nodes, ``backward()`` runs hookgrad's engine (the default);
- functional: inside ``hookgrad.func.functional_call``: no tape; JAX's AD differentiates,
  and hooks are ``jax.custom_vjp`` boundaries;
- compiled: inside ``hookgrad.compile`` tracing: eager semantics on traced arrays.
"""
import contextlib
import threading


class _Mode(threading.local):
    functional = False
    compiling = False


state = _Mode()


def is_functional():
    return state.functional


def is_compiling():
    return state.compiling


@contextlib.contextmanager
def functional_mode():
    prev = state.functional
    state.functional = True
    try:
        yield
    finally:
        state.functional = prev


@contextlib.contextmanager
def compiling_mode():
    prev = state.compiling
    state.compiling = True
    try:
        yield
    finally:
        state.compiling = prev
