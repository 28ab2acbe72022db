"""jax.lax lowerings of the reductions: reduce_*, argmax/argmin, the cumulative reductions, the
generic reduce and reduce_precision."""
import jax
import jax.sharding as jsh
import numpy as np
from jax import lax

from ....core import dtypes
from ....core.primitives import reductions as red
from ...base import get_backend
from ._common import LOW_FLOATS, computed_whole, convert, on_mesh, rule


def _wide(x):
    """Half floats are accumulated in float32, near numpy_ref's exact accumulation."""
    return lax.convert_element_type(x, np.float32) if x.dtype in LOW_FLOATS else x


def _narrow(out, like):
    return lax.convert_element_type(out, like.dtype) if out.dtype != like.dtype else out


def _accumulated(fn):
    """A sum or product lowered with half floats accumulated in float32."""
    def lowered(x, *, axes, **_):
        return _narrow(fn(_wide(x), axes), x)
    return lowered


def _max_min(fn):
    """A max or min (exact in any dtype, so computed in x's own). On a mesh a NaN among the
    reduced elements is put back: XLA's cross-device max/min drops NaNs (real JAX gives 1.0
    for reduce_max([nan, 1]) split over two devices); complex ones reduce whole operands
    (XLA's CPU backend has no cross-device complex max/min: UNIMPLEMENTED, in JAX too)."""
    def lowered(x, *, axes, **_):
        if dtypes.kind(x.dtype) == "c":
            return _whole(fn)(x, axes=axes)
        out = fn(x, axes)
        if not on_mesh(x) or dtypes.kind(x.dtype) != "f":
            return out
        nan = lax.full_like(out, np.nan)
        return lax.select(lax.reduce_or(lax.ne(x, x), axes), nan, out)
    return lowered


def _whole(fn):
    """A reduction of whole operands on a mesh (bitwise and, or, xor: XLA's CPU backend has
    no cross-device ones, UNIMPLEMENTED "Unsupported reduction computation", in JAX too)."""
    def lowered(x, *, axes, **_):
        return computed_whole(lambda v: fn(v, axes), x, typed=_reduced_type(x, axes))
    return lowered


def _reduced_type(x, axes):
    """JAX's type of a reduction of x over axes on Explicit mesh axes: x's without them."""
    sharding = jax.typeof(x).sharding
    spec = tuple(sharding.spec) + (None,) * (x.ndim - len(sharding.spec))
    kept = [entry for i, entry in enumerate(spec) if i not in axes]
    return jsh.NamedSharding(sharding.mesh, jsh.PartitionSpec(*kept))


rule(red.reduce_sum_p)(_accumulated(lax.reduce_sum))
rule(red.reduce_prod_p)(_accumulated(lax.reduce_prod))
rule(red.reduce_max_p)(_max_min(lax.reduce_max))
rule(red.reduce_min_p)(_max_min(lax.reduce_min))
rule(red.reduce_and_p)(_whole(lax.reduce_and))
rule(red.reduce_or_p)(_whole(lax.reduce_or))
rule(red.reduce_xor_p)(_whole(lax.reduce_xor))


@rule(red.argmax_p)
def _argmax(x, *, axes, index_dtype):
    return lax.argmax(x, axes[0], index_dtype)


@rule(red.argmin_p)
def _argmin(x, *, axes, index_dtype):
    return lax.argmin(x, axes[0], index_dtype)


def _cumulative(fn, wide):
    """A cumulative reduction; `wide`: whether half floats accumulate in float32."""
    def lowered(x, *, axis, reverse):
        return _narrow(fn(_wide(x) if wide else x, axis, reverse), x)
    return lowered


rule(red.cumsum_p)(_cumulative(lax.cumsum, wide=True))
rule(red.cumprod_p)(_cumulative(lax.cumprod, wide=True))
rule(red.cummax_p)(_cumulative(lax.cummax, wide=False))
rule(red.cummin_p)(_cumulative(lax.cummin, wide=False))
rule(red.cumlogsumexp_p)(_cumulative(lax.cumlogsumexp, wide=True))


def jax_computation(closed):
    """A reduction computation on JAX values (flat tuples in, a flat list out), interpreted
    with the xla lowerings, its outputs typed exactly as the init values."""
    def fn(xs, ys):
        outs = get_backend("xla").interpret(closed, list(xs) + list(ys))
        return [convert(o, a.dtype) for o, a in zip(outs, closed.out_avals)]
    return fn


@rule(red.reduce_p)
def _reduce(*args, computation, jaxpr, dimensions):
    n = len(args) // 2
    fn = jax_computation(jaxpr)
    return list(lax.reduce(tuple(args[:n]), tuple(args[n:]), lambda a, b: tuple(fn(a, b)),
                           dimensions))


@rule(red.reduce_precision_p)
def _reduce_precision(x, *, exponent_bits, mantissa_bits):
    return lax.reduce_precision(x, exponent_bits, mantissa_bits)
