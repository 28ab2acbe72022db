"""Hypothesis strategies: JAX's dtypes, shapes, edge-valued arrays, and every primitive's samples."""
import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from ..spec import base
from ..spec.base import Invalid, Sample, kind, np_dtype
from ..spec.base import shapes as _spec_shapes

# JAX's dtype lattice: what refjax and JAX accept with x64 off, and what x64 adds.
DTYPES_32 = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16",
             "float32", "complex64")
DTYPES_64 = ("int64", "uint64", "float64", "complex128")


def dtypes(x64=False, kinds="biufc"):
    """Dtype names of JAX's lattice ('bfloat16' included), those of x64 mode too when `x64`,
    restricted to the NumPy kinds in `kinds` ('b' bool, 'i', 'u', 'f', 'c').

    >>> from hypothesis import given
    >>> @given(dtypes(kinds="f"))
    ... def test(name): assert name in ("float16", "bfloat16", "float32")
    """
    names = DTYPES_32 + (DTYPES_64 if x64 else ())
    return st.sampled_from([n for n in names if kind(n) in kinds])


def shapes(min_rank=0, max_rank=3, min_side=0):
    """Small array shapes (sides 0 to 3; a zero side about one time in seven).

    >>> shapes(min_rank=1).example() != ()
    True
    """
    return _spec_shapes(min_rank, max_rank, min_side)


@st.composite
def broadcastable_shapes(draw, min_rank=0, max_rank=3):
    """A pair of shapes that NumPy-broadcast together (sides of 1 and missing leading dims).

    >>> a, b = broadcastable_shapes().example()
    >>> _ = np.broadcast_shapes(a, b)
    """
    full = draw(shapes(min_rank, max_rank))
    return _broadcast_view(draw, full), _broadcast_view(draw, full)


def _broadcast_view(draw, full):
    drop = draw(st.integers(0, len(full)))
    return tuple(1 if draw(st.booleans()) else s for s in full[drop:])


def edge_values(name):
    """The values of dtype `name` where implementations disagree: NaN, +-inf, -0.0, the
    smallest subnormal and normal, the largest finite value; integer extremes."""
    if kind(name) == "b":
        return [False, True]
    if kind(name) in "iu":
        info = np.iinfo(name)
        return sorted({int(info.min), int(info.min) + 1, -1 if info.min else 0, 0, 1,
                       int(info.max) - 1, int(info.max)})
    real = "float32" if kind(name) == "c" and name == "complex64" else name
    real = "float64" if name == "complex128" else real
    info = ml_dtypes.finfo(np_dtype(real))
    values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, float(info.smallest_subnormal),
              -float(info.smallest_subnormal), float(info.smallest_normal), float(info.max),
              -float(info.max), 1.0, -1.0]
    return [complex(v, w) for v, w in zip(values, values[::-1])] if kind(name) == "c" else values


def arrays(name, shape, edges=True, elements=None):
    """NumPy arrays of dtype `name` and `shape`; with `edges`, elements are sometimes the
    dtype's edge values (NaN, +-inf, -0.0, subnormals, integer extremes).

    >>> x = arrays("bfloat16", (2, 3)).example()
    >>> (x.shape, x.dtype.name)
    ((2, 3), 'bfloat16')
    """
    if elements is None:
        elements = base.default_elements(name)
        if edges:
            elements = st.one_of(elements, elements, st.sampled_from(edge_values(name)))
    return base.arrays(name, shape, elements)


def weak_scalars(kinds="ifc"):
    """Python scalars (int, float, complex): JAX gives them weakly typed dtypes.

    >>> type(weak_scalars("f").example())
    <class 'float'>
    """
    options = {"i": st.integers(-100, 100), "f": st.floats(-1e3, 1e3),
               "c": st.builds(complex, st.floats(-10, 10), st.floats(-10, 10))}
    return st.one_of(*[options[k] for k in kinds])


def samples(primitive_name, x64=False, dtypes=None):
    """Complete valid argument sets for the primitive called `primitive_name`, as refjax's
    spec draws them: each a `Sample` with `.values` (NumPy arrays), `.params` (a dict),
    `.sig.args` (shapes, dtypes, weak types), `.to_refjax()` and `.to_jax()`. Draw under
    x64 (`refjax.testing.enable_x64`) when `x64=True`.

    >>> s = samples("add").example()
    >>> len(s.values), s.params
    (2, {})
    """
    from ..spec import spec_for
    return spec_for(primitive_name).samples(x64, dtypes)


def invalid_samples(primitive_name):
    """The invalid inputs of the primitive: `Invalid(what, args, params, error, jax_error)`,
    each to be rejected with an exception of class `error` naming the primitive (an empty
    strategy for a primitive that declares none).

    >>> case = invalid_samples("add").example()
    >>> case.error
    <class 'TypeError'>
    """
    from ..spec import spec_for
    cases = spec_for(primitive_name).invalid_cases()
    return st.sampled_from(cases) if cases else st.nothing()


__all__ = ["DTYPES_32", "DTYPES_64", "dtypes", "shapes", "broadcastable_shapes", "edge_values",
           "arrays", "weak_scalars", "samples", "invalid_samples", "Sample", "Invalid"]
