"""The layer above the op table that differentiates: the backward engine (graph tasks,
ready order, hook dispatch), ``backward``/``grad``, fused backward chains,
``autograd.Function`` and forward AD. Public paths live in ``hookgrad.autograd``
(facades); nothing internal imports those.
"""
