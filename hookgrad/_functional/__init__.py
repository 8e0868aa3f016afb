"""The functional backend: hooks as ``jax.custom_vjp`` boundaries inside
``hookgrad.func.functional_call``, where JAX's AD runs the backward.
"""
