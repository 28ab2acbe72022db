"""split, stack, unstack, tile, optimization_barrier, xla_metadata_value, empty and empty2:
primitives beside structural.py, with all their rules and the lax functions binding them."""
import enum
import operator

import numpy as np

from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..sharding import NamedSharding
from ..sharding_types import concrete_sharding, is_typed, reject, strict
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front, defvectorized
from . import structural as st

# ---------------------------------------------------------------- split

split_p = make_primitive("split", multiple_results=True)


@split_p.def_abstract_eval
def _split_abstract_eval(x, *, sizes, axis):
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if not 0 <= axis < x.ndim or x.shape[axis] != sum(sizes):
        raise ValueError(f"split: Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype, x.weak_type)
            for s in sizes]


def split(operand, sizes, axis=0):
    """operand cut along `axis` into pieces of the given sizes (lax.split)."""
    axis = _canonical_axis("split", axis, len(get_aval(operand).shape))
    sizes = tuple(s if isinstance(s, np.integer) else operator.index(s) for s in sizes)
    return split_p.bind(operand, sizes=sizes, axis=axis)  # NumPy ints kept (printed), as JAX


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


# ---------------------------------------------------------------- stack, unstack

stack_p = make_primitive("stack")
unstack_p = make_primitive("unstack", multiple_results=True)


@stack_p.def_abstract_eval
def _stack_abstract_eval(*xs, axis):
    if not xs or any(x.dtype != xs[0].dtype for x in xs):
        raise TypeError("stack requires at least one operand, all of one dtype, got "
                        f"{', '.join(x.str_short() for x in xs)}")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError("stack: all input arrays must have the same shape, got "
                         f"{', '.join(str(x.shape) for x in xs)}")
    if not 0 <= axis <= xs[0].ndim:
        raise ValueError(f"stack: axis {axis} is out of bounds for {xs[0].ndim + 1} dimensions")
    shape = xs[0].shape[:axis] + (len(xs),) + xs[0].shape[axis:]
    return ShapedArray(shape, xs[0].dtype, weak_type=all(x.weak_type for x in xs))


@unstack_p.def_abstract_eval
def _unstack_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of bounds for {x.ndim} dimensions")
    return [ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)] * \
        x.shape[axis]


def stack(operands, axis=0):
    """The operands (of one shape) joined along a new dimension `axis` (lax.stack)."""
    ndim = len(get_aval(operands[0]).shape) + 1 if operands else 1
    return stack_p.bind(*operands, axis=_canonical_axis("stack", axis, ndim))


def unstack(x, axis=0):
    """x cut into its slices along `axis`, which is removed (lax.unstack)."""
    ndim = len(get_aval(x).shape)
    return tuple(unstack_p.bind(x, axis=_canonical_axis("unstack", axis, ndim)))


def _canonical_axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _stack_jvp(primals, tangents, *, axis):
    out = stack_p.bind(*primals, axis=axis)
    if all(type(t) is Zero for t in tangents):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, stack_p.bind(*map(ad.instantiate, tangents), axis=axis)


def _stack_transpose(ct, *xs, axis):
    if type(ct) is Zero:
        return [Zero(x.aval) if ad.is_undefined_primal(x) else None for x in xs]
    cts = unstack_p.bind(ct, axis=axis)
    return [c if ad.is_undefined_primal(x) else None for c, x in zip(cts, xs)]


def _unstack_jvp(primals, tangents, *, axis):
    outs = unstack_p.bind(*primals, axis=axis)
    (t,) = tangents
    if type(t) is Zero:
        return outs, [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    return outs, unstack_p.bind(t, axis=axis)


def _unstack_transpose(cts, x, *, axis):
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval)]
    return [stack_p.bind(*map(ad.instantiate, cts), axis=axis)]


def _stack_batch(axis_data, vals, dims, *, axis):
    xs = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


def _unstack_batch(axis_data, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    outs = unstack_p.bind(bdim_at_front(x, d, axis_data.size), axis=axis + 1)
    return outs, [0] * len(outs)


def _stack_sharding(in_specs, in_avals, out_avals, *, axis):
    """The operands' common spec with an unsharded stacking dimension (typing: JAX's
    ShardingTypeError for operands typed differently)."""
    spec = (sp.all_alike(in_specs, in_avals, out_avals) if strict()
            else sp.elementwise(in_specs, in_avals, in_avals))[0]
    return [spec[:axis] + (None,) + spec[axis:]]


def _unstack_sharding(in_specs, in_avals, out_avals, *, axis):
    """The operand's spec without the unstacked dimension, which may not be sharded (JAX's
    ShardingTypeError when typing)."""
    spec = in_specs[0]
    if strict() and spec[axis] is not None:
        raise reject(f"unstack operand cannot be sharded on the unstacking axis {axis}. Got "
                     f"operand type={in_avals[0].str_short()}")
    return [spec[:axis] + spec[axis + 1:]] * len(out_avals)


stack_p.def_sharding(_stack_sharding)
unstack_p.def_sharding(_unstack_sharding)
stack_p.def_jvp(_stack_jvp)
stack_p.def_transpose(_stack_transpose)
stack_p.def_batch(_stack_batch)
unstack_p.def_jvp(_unstack_jvp)
unstack_p.def_transpose(_unstack_transpose)
unstack_p.def_batch(_unstack_batch)


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


def _tile_sharding(in_specs, in_avals, out_avals, *, reps):
    """The operand's spec, where only dimensions tiled once may be sharded (JAX's
    ShardingTypeError when typing; propagation replicates the others)."""
    for i, (r, e) in enumerate(zip(reps, in_specs[0])):
        if strict() and r != 1 and e is not None:
            raise reject(f"Operand cannot be sharded on dimension {i} when the tiling is "
                         f"non-trivial. Got input type: "
                         f"{in_avals[0].str_short(short_dtypes=False)} with reps: {reps}")
    return [tuple(e if r == 1 else None for r, e in zip(reps, in_specs[0]))]


tile_p.def_sharding(_tile_sharding)
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


# ---------------------------------------------------------------- xla_metadata_value

xla_metadata_value_p = make_primitive("xla_metadata_value")
xla_metadata_value_p.def_abstract_eval(lambda x, *, xla_metadata_kvs: x)
# as JAX's: the tangent is tagged too, the cotangent passes untagged
ad.deflinear(xla_metadata_value_p, lambda ct, x, **params: [ct])
defvectorized(xla_metadata_value_p)
xla_metadata_value_p.def_sharding(sp.elementwise)


def xla_metadata_value(x, kvs):
    """x, tagged with XLA frontend attributes (sorted (key, value) pairs) for the op making
    it; an identity on numpy_ref."""
    return xla_metadata_value_p.bind(x, xla_metadata_kvs=kvs)


# ---------------------------------------------------------------- empty

empty_p = make_primitive("empty")


@empty_p.def_abstract_eval
def _empty_abstract_eval(*, shape, dtype, out_sharding):
    st._check_nonnegative("empty", shape)
    return ShapedArray(shape, dtype)


ad.defnondiff(empty_p)


def empty(shape, dtype, *, out_sharding=None):
    """An array of the shape and dtype whose values are unspecified (lax.empty): zeros here,
    as XLA's on CPU."""
    from .. import dtypes
    shape = (shape,) if isinstance(shape, int) else shape
    out = empty_p.bind(shape=st.static_ints("empty", shape), out_sharding=None,
                       dtype=dtypes.canonicalize_dtype(dtype))
    if out_sharding is None:
        return out
    from .sharding_ops import reshard  # as JAX's: Explicit mesh axes only
    return reshard(out, out_sharding)


# ---------------------------------------------------------------- empty2

class MemorySpace(enum.Enum):
    """Where a value lives (JAX's core.MemorySpace, printed in empty2's params)."""
    Device = "device"

    def __str__(self):
        return f"MemorySpace.{self.name}"


empty2_p = make_primitive("empty2")


@empty2_p.def_abstract_eval
def _empty2_abstract_eval(*, dtype, memory_space):
    return ShapedArray((), dtype)


ad.defnondiff(empty2_p)


def empty2(dtype, memory_space=MemorySpace.Device):
    """A scalar of dtype whose value is unspecified (JAX's lax.empty2): zero here, as XLA's."""
    return empty2_p.bind(dtype=dtype, memory_space=memory_space)


def empty_like_aval(aval):
    """A value of aval's type whose values are unspecified, as JAX's ad_util.empty_like_aval
    makes it: an empty2 scalar broadcast to the type (cond's unfilled residual slots)."""
    s = aval.sharding
    s = concrete_sharding(s) if is_typed(aval) and isinstance(s, NamedSharding) else None
    return st.broadcast_in_dim(empty2(aval.dtype), aval.shape, (), out_sharding=s)
