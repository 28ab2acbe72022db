"""split, tile and optimization_barrier: array primitives beside structural.py, with all their
rules and the lax functions binding them."""
import operator

from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front
from . import structural as st

# ---------------------------------------------------------------- split

split_p = make_primitive("split", multiple_results=True)


@split_p.def_abstract_eval
def _split_abstract_eval(x, *, sizes, axis):
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if not 0 <= axis < x.ndim or x.shape[axis] != sum(sizes):
        raise ValueError(f"split: sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype, x.weak_type)
            for s in sizes]


def split(operand, sizes, axis=0):
    """operand cut along `axis` into pieces of the given sizes (lax.split)."""
    ndim = len(get_aval(operand).shape)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an array of dimension {ndim}")
    return split_p.bind(operand, sizes=tuple(map(operator.index, sizes)), axis=axis % ndim)


def _split_transpose(cts, x, *, sizes, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [st.concatenate([ad.instantiate(ct) for ct in cts], axis)]


def _split_batch(axis_data, vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    outs = split_p.bind(x, sizes=sizes, axis=axis + 1 if d <= axis else axis)
    return outs, [d] * len(outs)


def _split_jvp(primals, tangents, **params):
    outs = split_p.bind(*primals, **params)
    (t,) = tangents
    if type(t) is Zero:
        return outs, [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    return outs, split_p.bind(t, **params)


split_p.def_jvp(_split_jvp)
split_p.def_transpose(_split_transpose)
split_p.def_batch(_split_batch)


# ---------------------------------------------------------------- tile

tile_p = make_primitive("tile")


@tile_p.def_abstract_eval
def _tile_abstract_eval(x, *, reps):
    if x.ndim != len(reps):
        raise TypeError(f"tile: reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be nonnegative, got {reps}")
    return ShapedArray(tuple(s * r for s, r in zip(x.shape, reps)), x.dtype, x.weak_type)


def tile(operand, reps):
    """operand repeated reps[i] times along each dimension i (lax.tile)."""
    return tile_p.bind(operand, reps=tuple(map(operator.index, reps)))


def _tile_transpose(ct, x, *, reps):
    """The sum of the ct's tiles: ct viewed as (r0, s0, r1, s1, ...) summed over the r's."""
    from .reductions import reduce_sum
    shape = tuple(k for pair in zip(reps, x.aval.shape) for k in pair)
    return [reduce_sum(st.reshape(ct, shape), tuple(range(0, len(shape), 2)))]


def _tile_batch(axis_data, vals, dims, *, reps):
    (x,), (d,) = vals, dims
    return tile_p.bind(bdim_at_front(x, d, axis_data.size), reps=(1,) + reps), 0


ad.deflinear(tile_p, _tile_transpose)
tile_p.def_batch(_tile_batch)


# ---------------------------------------------------------------- optimization_barrier

optimization_barrier_p = make_primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))


def optimization_barrier(operand):
    """The same pytree of values, with a barrier the compiler moves no operation across
    (lax.optimization_barrier); an identity on numpy_ref."""
    from ..pytree import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _barrier_jvp(primals, tangents):
    return (optimization_barrier_p.bind(*primals),
            optimization_barrier_p.bind(*map(ad.instantiate, tangents)))


def _barrier_transpose(cts, *args):
    return optimization_barrier_p.bind(*map(ad.instantiate, cts))


def _barrier_batch(axis_data, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


optimization_barrier_p.def_jvp(_barrier_jvp)
optimization_barrier_p.def_transpose(_barrier_transpose)
optimization_barrier_p.def_batch(_barrier_batch)
optimization_barrier_p.def_sharding(lambda in_specs, in_avals, out_avals: list(in_specs))
split_p.def_sharding(lambda in_specs, in_avals, out_avals, *, sizes, axis: [
    sp.dedupe(s if i != axis else None for i, s in enumerate(in_specs[0]))] * len(sizes))
