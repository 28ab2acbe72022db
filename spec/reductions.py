"""Spec entries of the reduction primitives (reduce_*, argmax/argmin, cumulative reductions)."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, BOOL, COMPLEX, FLOAT, INT, NUM, UNCHECKED, Arg, Invalid, PrimitiveSpec,
                   Signature, all_args, floats, kind, no_args, np_dtype, scaled_tolerance, shapes,
                   weak_flag)

# Distinct values on a grid: ties are kinks of max/min, and the grid step keeps the finite
# differences away from them.
_GRID = st.integers(-300, 300).map(lambda k: k / 100)
_NEAR_ONE = st.tuples(floats(0.5, 1.5, "float64"), st.booleans()).map(
    lambda p: -p[0] if p[1] else p[0])


def _or_smooth(diff_values):
    return floats(-3.0, 3.0, "float64") if diff_values is None else diff_values


def _operand(draw, dtype, shape, diff, diff_values, min_rank=0):
    unique = diff and diff_values is _GRID
    elems = diff_values if diff and kind(dtype) in "fc" else None
    return Arg(shape, dtype, draw(weak_flag(dtype)), elems, unique)


def _axes_signature(diff_values, with_sharding):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            # The max of nothing (-inf) has no derivative (JAX's JVP gives NaN there too).
            shape = draw(shapes(min_side=1 if diff and diff_values is _GRID else 0))
            perm = draw(st.permutations(range(len(shape))))
            axes = tuple(sorted(perm[:draw(st.integers(0, len(shape)))]))
            params = {"axes": axes, "out_sharding": None} if with_sharding else {"axes": axes}
            return Signature((_operand(draw, dtype, shape, diff, diff_values),), params)
        return sig()
    return signature


def _axes_invalid(ok_dtype, with_sharding, jax_range_error):
    """Axes errors are ValueErrors; JAX's logical reductions fail differently (IndexError, or
    a ValueError from the MLIR verifier for negative axes)."""
    extra = {"out_sharding": None} if with_sharding else {}
    x = np.ones((2, 2), np_dtype(ok_dtype))
    return (Invalid("a repeated axis", (x,), {"axes": (1, 1), **extra}, ValueError),
            Invalid("an axis out of range", (x,), {"axes": (2,), **extra}, ValueError,
                    jax_range_error),
            Invalid("a negative axis", (x,), {"axes": (-1,), **extra}, ValueError))


def reducer(name, dtypes, *, diff_values=None, nondiff=None, linear=False, tol=None,
            with_sharding=False, exact=False, jax_axis_error=ValueError):
    """The entry of a reduce_* primitive over `axes` (`jax_axis_error`: what JAX raises for
    an axis out of range)."""
    ok = "float32" if "float32" in dtypes else dtypes[-1]
    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="reductions",
        signature=_axes_signature(_or_smooth(diff_values), with_sharding),
        reference=lambda jax, x, *, axes, **_: getattr(jax.lax, name)(x, axes),
        tol=tol or {}, exact=exact, diff_args=no_args if nondiff else all_args,
        nondiff=nondiff, linear_args=all_args if linear else no_args,
        invalid=_axes_invalid(ok, with_sharding, jax_axis_error))


_SUM_TOL = scaled_tolerance(5)
_REDUCERS = [
    reducer("reduce_sum", NUM + COMPLEX, linear=True, tol=_SUM_TOL, with_sharding=True),
    reducer("reduce_prod", NUM + COMPLEX, diff_values=_NEAR_ONE, tol=_SUM_TOL),
    reducer("reduce_max", ALL + COMPLEX, diff_values=_GRID, exact=True),
    reducer("reduce_min", ALL + COMPLEX, diff_values=_GRID, exact=True),
    reducer("reduce_and", BOOL + INT, nondiff="zero", exact=True, jax_axis_error=IndexError),
    reducer("reduce_or", BOOL + INT, nondiff="zero", exact=True, jax_axis_error=IndexError),
    reducer("reduce_xor", BOOL + INT, nondiff="zero", exact=True, jax_axis_error=IndexError),
]


# ---------------------------------------------------------------- argmax / argmin

def _argminmax_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes(min_rank=1, min_side=1))
        axis = draw(st.integers(0, len(shape) - 1))
        index_dtype = np_dtype(draw(st.sampled_from(("int32", "int32", "int8", "uint8"))))
        return Signature((_operand(draw, dtype, shape, diff, _GRID),),
                         {"axes": (axis,), "index_dtype": index_dtype})
    return sig()


def argminmax(name):
    """The entry of argmax or argmin (first index of the extremum; NaN counts as extreme)."""
    x = np.ones((2, 0), np.float32)
    return PrimitiveSpec(
        name=name, dtypes=ALL, family="reductions", signature=_argminmax_signature,
        reference=lambda jax, x, *, axes, index_dtype:
            getattr(jax.lax, name)(x, axes[0], index_dtype),
        exact=True, nondiff="zero",
        invalid=(Invalid("an empty reduced dimension", (x,),
                         {"axes": (1,), "index_dtype": np.dtype(np.int32)}, ValueError),
                 Invalid("a float index dtype", (np.ones(2, np.float32),),
                         {"axes": (0,), "index_dtype": np.dtype(np.float32)}, TypeError)))


# ---------------------------------------------------------------- cumulative reductions

def _cumulative_signature(diff_values):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape = draw(shapes(min_rank=1))
            axis = draw(st.integers(0, len(shape) - 1))
            return Signature((_operand(draw, dtype, shape, diff, diff_values),),
                             {"axis": axis, "reverse": draw(st.booleans())})
        return sig()
    return signature


def cumulative(name, dtypes, *, diff_values=None, linear=False, tol=None, exact=False,
               **kwargs):
    """The entry of cumsum/cumprod/cummax/cummin along `axis` (from the end when reverse)."""
    x = np.ones((2, 2), np.float32)
    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="reductions",
        signature=_cumulative_signature(_or_smooth(diff_values)),
        reference=lambda jax, x, *, axis, reverse: getattr(jax.lax, name)(x, axis, reverse),
        tol=tol or {}, exact=exact, diff_args=all_args,
        linear_args=all_args if linear else no_args,
        invalid=(Invalid("an axis out of range", (x,), {"axis": 2, "reverse": False},
                         ValueError),), **kwargs)


_CUMULATIVE = [
    cumulative("cumsum", NUM + COMPLEX, linear=True, tol=_SUM_TOL),
    cumulative("cumprod", NUM + COMPLEX, diff_values=_NEAR_ONE, tol=_SUM_TOL),
    cumulative("cummax", NUM + COMPLEX, diff_values=_GRID, exact=True),
    cumulative("cummin", NUM + COMPLEX, diff_values=_GRID, exact=True),
    cumulative("cumlogsumexp", FLOAT, tol=_SUM_TOL,
               jax_dtype_errors={d: UNCHECKED for d in INT + COMPLEX},
               notes="log(cumsum(exp(x))) without overflow; real floats only (JAX accepts "
                     "complex values, and integers, failing with OverflowError unless empty); "
                     "JVP: a scan of (value, tangent) pairs combined by logaddexp's JVP"),
]

# ---------------------------------------------------------------- reduce_precision

def _reduce_precision_signature(dtype, diff):
    """Derivative samples keep the whole float64 format: reduce_precision's JVP (as JAX's) is
    the rounding of the tangent, which finite differences of a rounding do not see."""
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        bits = (11, 52) if diff else (draw(st.integers(1, 11)), draw(st.integers(0, 24)))
        return Signature((_operand(draw, dtype, shape, diff, floats(-3.0, 3.0, "float64")),),
                         {"exponent_bits": bits[0], "mantissa_bits": bits[1]})
    return sig()


REDUCE_PRECISION = PrimitiveSpec(
    name="reduce_precision", dtypes=FLOAT, family="reductions",
    signature=_reduce_precision_signature,
    reference=lambda jax, x, **params: jax.lax.reduce_precision(x, **params), exact=True,
    diff_args=all_args, linear_args=all_args,
    invalid=(Invalid("no exponent bits", (np.ones(2, np.float32),),
                     {"exponent_bits": 0, "mantissa_bits": 3}, ValueError),
             Invalid("negative mantissa bits", (np.ones(2, np.float32),),
                     {"exponent_bits": 5, "mantissa_bits": -1}, ValueError)),
    notes="bit-exact rounding to nearest even at mantissa_bits, then +-inf / +-0 outside the "
          "exponent range; linear as JAX defines it (tangents and cotangents rounded alike)")


# ---------------------------------------------------------------- reduce (generic)

def _reduce_signature(dtype, diff):
    from .windowed import computation, computation_args, generic_computations

    @st.composite
    def sig(draw):
        comp = computation(draw(st.sampled_from(generic_computations(dtype))))
        shape = draw(shapes(min_side=1 if diff else 0))
        perm = draw(st.permutations(range(len(shape))))
        dims = tuple(sorted(perm[:draw(st.integers(0, len(shape)))]))
        return Signature(computation_args(draw, comp, dtype, shape, diff),
                         {"computation": comp.fn, "jaxpr": comp.jaxpr(dtype),
                          "dimensions": dims})
    return sig()


def _operand_args():
    from .windowed import operand_args
    return operand_args


def _reduce_reference(jax, *args, computation, jaxpr, dimensions):
    from .windowed import jax_computation
    n = len(args) // 2
    return list(jax.lax.reduce(tuple(args[:n]), tuple(args[n:]), jax_computation(jax, jaxpr),
                               dimensions))


def _reduce_invalid():
    from .windowed import _generic_invalid
    x, one = np.ones(4, np.float32), np.ones((), np.float32)
    cases = _generic_invalid("reduce", {"dimensions": (0,)})
    return cases + (Invalid("a dimension out of range (JAX: IndexError)", (x, one),
                            {**cases[0].params, "dimensions": (1,)}, ValueError, IndexError),)


REDUCE = PrimitiveSpec(
    name="reduce", dtypes=ALL + COMPLEX, family="reductions", signature=_reduce_signature,
    reference=_reduce_reference, tol=scaled_tolerance(5), diff_args=_operand_args(),
    invalid=_reduce_invalid,
    notes="the reduced dimensions folded in row-major order by the computation (a jaxpr on "
          "scalars) from the init values; JVP as JAX's (the computation vmapped over a "
          "halving tree); batched init values are mapped member by member (JAX: "
          "NotImplementedError)")

SPECS = _REDUCERS + [argminmax("argmax"), argminmax("argmin")] + _CUMULATIVE + [
    REDUCE_PRECISION, REDUCE]
