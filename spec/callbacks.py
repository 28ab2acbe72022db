"""Spec entries of pure_callback and io_callback: the samples call NumPy's flip through them
(not elementwise, so vmap's per-element calls are checked) and real JAX's callbacks are the
reference; vmap methods, errors and printing are tested in tests/test_callbacks.py."""
import numpy as np
from hypothesis import strategies as st

from .base import ALL, COMPLEX, Arg, PrimitiveSpec, Signature, shapes, weak_flag


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        return Signature((Arg(draw(shapes()), dtype, draw(weak_flag(dtype))),), {})
    return sig()


def _flip(x):
    return np.flip(np.asarray(x))


def _types(jax, x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def _pure(jax, x):
    return jax.pure_callback(_flip, _types(jax, x), x, vmap_method="sequential")


def _io(jax, x):
    return jax.experimental.io_callback(_flip, _types(jax, x), x)


def _refjax(fn):
    def apply(x):
        import refjax
        return fn(refjax, x)
    return apply


SPECS = [
    PrimitiveSpec(name="pure_callback", dtypes=ALL + COMPLEX, family="callbacks",
                  signature=_signature, reference=_pure, apply=_refjax(_pure), exact=True,
                  nondiff="raises", nondiff_error=ValueError,
                  notes="samples flip their operand in NumPy; vmap_method='sequential'; JVP "
                        "raises ValueError as JAX's"),
    PrimitiveSpec(name="io_callback", dtypes=ALL + COMPLEX, family="callbacks",
                  signature=_signature, reference=_io, apply=_refjax(_io), exact=True,
                  nondiff="raises", nondiff_error=ValueError,
                  notes="samples flip their operand in NumPy, unordered; JVP raises ValueError "
                        "as JAX's"),
]
