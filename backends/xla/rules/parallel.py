"""jax.lax lowerings of the collectives (psum, pmax, all_gather, ppermute, ...)."""
import jax.numpy as jnp
from jax import lax

from ....core.avals import ShapedArray
from ....core.primitives import parallel as par
from ....core.primitives.parallel_more import pbroadcast_p
from ....core.primitives.parallel_vma import (
    all_gather_reduced_p, preduced_p, reduced_vary_cast_p, unreduced_psum_p,
    unreduced_reduce_scatter_p, vary_unreduced_cast_p)
from ._common import rule


@rule(par.psum_p, par.psum_invariant_p, unreduced_psum_p)
def _psum(x, *, axes):
    return lax.psum(x, axes)


@rule(par.pmax_p)
def _pmax(x, *, axes):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return _reduce_gathered(lax.reduce_max, x, axes)
    return lax.pmax(x, axes)


@rule(par.pmin_p)
def _pmin(x, *, axes):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return _reduce_gathered(lax.reduce_min, x, axes)
    return lax.pmin(x, axes)


def _reduce_gathered(reduce, x, axes):
    """pmax/pmin of floats and complexes as reduce_max/min over the gathered lanes, which is
    what they mean (jax.vmap's batching rule, refjax's numpy_ref). XLA's CPU all-reduce differs:
    it drops NaNs (all-NaN lanes give -inf), keeps whichever of +0.0/-0.0 it meets first, and
    rejects complex operands at run time (UNIMPLEMENTED). The cost: each device holds every
    lane's operand for a moment."""
    return reduce(lax.all_gather(x, tuple(axes)), (0,))


def _empty_result(x, params, prim):
    """Zero-size operands: XLA's verifier rejects all-gather / reduce-scatter on a zero-size
    dimension, but there is nothing to communicate: the result is empty, of the shape the
    abstract eval gives."""
    aval = prim.abstract_eval(ShapedArray(x.shape, x.dtype), **params)
    return jnp.zeros(aval.shape, x.dtype)


@rule(par.all_gather_p, all_gather_reduced_p)
def _all_gather(x, *, axis_name, axis, tiled, axis_size):
    if x.size == 0:
        return _empty_result(x, dict(axis_name=axis_name, axis=axis, tiled=tiled,
                                     axis_size=axis_size), par.all_gather_p)
    return lax.all_gather(x, axis_name, axis=axis, tiled=tiled)


@rule(par.psum_scatter_p, unreduced_reduce_scatter_p)
def _psum_scatter(x, *, axis_name, scatter_dimension, tiled, axis_size):
    if x.size == 0:
        return _empty_result(x, dict(axis_name=axis_name, scatter_dimension=scatter_dimension,
                                     tiled=tiled, axis_size=axis_size), par.psum_scatter_p)
    return lax.psum_scatter(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled)


@rule(par.ppermute_p)
def _ppermute(x, *, axis_name, perm):
    return lax.ppermute(x, axis_name, perm)


@rule(par.all_to_all_p)
def _all_to_all(x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    return lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled)


@rule(par.axis_index_p)
def _axis_index(*, axis_name):
    return lax.axis_index(axis_name)


@rule(par.pvary_p)
def _pvary(x, *, axes):
    """The identity (shard_map is lowered with check_vma=False: varying-ness needs no
    marking), but JAX's NameError outside any shard_map binding its axes."""
    for name in axes:
        try:
            lax.axis_size(name)
        except NameError:
            raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                            "pvary under `jax.shard_map`.") from None
    return x


@rule(vary_unreduced_cast_p, reduced_vary_cast_p, preduced_p)
def _free_cast(x, *, axes):
    return x  # shard_map is lowered with check_vma=False: these casts need no marking


@rule(par.ragged_all_to_all_p)
def _ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                       *, axis_name, axis_index_groups):
    """XLA:CPU has no ragged-all-to-all (UNIMPLEMENTED): every device gathers the operands
    and offsets of all and writes the chunks sent to it, in sender order."""
    name = axis_name[0]
    ops, io, ss, oo = (lax.all_gather(a, name) for a in (operand, input_offsets, send_sizes,
                                                          output_offsets))
    n, k = io.shape
    me, per = lax.axis_index(name), k // n
    rows = jnp.arange(output.shape[0])
    out = output
    for i in range(n):
        for j in range(per):
            c = me * per + j
            written = (rows >= oo[i, c]) & (rows < oo[i, c] + ss[i, c])
            if operand.shape[0] == 0:
                continue
            src = jnp.clip(io[i, c] + rows - oo[i, c], 0, operand.shape[0] - 1)
            mask = written.reshape((-1,) + (1,) * (output.ndim - 1))
            out = jnp.where(mask, ops[i][src], out)
    return out


@rule(pbroadcast_p)
def _pbroadcast(x, *, axis_name, source):
    # JAX 0.10.2 lowers pbroadcast (CollectiveBroadcast) on GPU only: on CPU it is lane
    # `source` of the gathered lanes.
    return lax.all_gather(x, axis_name)[source]
