"""Stage 1, modes: what intercepts an op call before it runs.

``INTERCEPT[0]``, when set, receives every op call ``(op, args, statics, out)`` and
returns its result; an interceptor runs the op itself with :func:`below`, which calls
``dispatch.apply`` with the interceptors under it only. Interceptors stack: each entered
one keeps the one it replaced. Today's: compile's lineage (``_compile/host_run.py``),
DTensor's stage (``distributed/tensor``).
"""
INTERCEPT = [None]

