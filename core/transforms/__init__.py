"""Transformations: staging (jit, make_jaxpr), jvp, linearize, transpose, vjp/grad, vmap, custom rules."""
