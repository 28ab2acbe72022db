"""Collectives (psum, all_gather, ppermute, ...): each is defined by its batching rule."""
import math

from .. import dtypes, pytree
from ..errors import in_jax_words
from ..vma import axis_state, mix_hint
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import Tracer, as_value, get_aval
from ..transforms.ad import Zero, deflinear, instantiate
from ..transforms.batching import bdim_at_front, moveaxis
from . import elementwise as ew
from . import parallel_lanes as lanes
from . import reductions
from . import structural as st
from .axis_env import (  # noqa: F401  (re-exported: the axis env's users import it here)
    AXIS_ENV, _axis_names, _no_groups, _single_name, axis_env_key, axis_scope, axis_size,
    binding_order,
    check_axis_names, extend_axis_env, lax_axis_size, vma_checked)


def _as_array(x):
    return as_value(x)


def _bool_as_int(x):
    """psum counts bools (as JAX's psum does): they are summed as int32. The other collectives
    keep the operand's dtype, bool included."""
    if get_aval(x).dtype == dtypes.bool_:
        return ew.convert_element_type(x, dtypes.canonicalize_dtype(dtypes.int32))
    return x


def _collective(prim):
    """A collective primitive: rules run even for unbatched operands (`uses_axis_env`), since
    the named axis decides what they mean (psum of a constant multiplies by the axis size)."""
    prim = make_primitive(prim)
    prim.def_uses_axis_env()
    return prim


def _same_aval(x, **_):
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)


# ---------------------------------------------------------------- psum, pmax, pmin

psum_p = _collective("psum")
pmax_p = _collective("pmax")
pmin_p = _collective("pmin")
# psum as JAX stages it in a check_vma shard_map body: its operand varies over every summed
# axis (lax.psum inserts the pvary), its result over none of them; transposed to pvary.
psum_invariant_p = _collective("psum_invariant")
for _p in (psum_p, pmax_p, pmin_p, psum_invariant_p):
    _p.def_abstract_eval(_same_aval)
for _p in (psum_p, pmax_p, pmin_p):  # JAX prints the groups these take (refjax: always None)
    _p.def_pp(lambda eqn, context: [("axes", eqn.params["axes"]), ("axis_index_groups", None)])


def _reduced_vma(eqn, ins, strict):
    """An all-reduce is invariant over the axes it reduces over."""
    return [frozenset().union(*ins) - set(eqn.params["axes"])]


def _psum_vma(eqn, ins, strict):
    if strict:
        _check_psum_axes(eqn, ins)
    return _reduced_vma(eqn, ins, strict)


def _check_psum_axes(eqn, ins):
    """JAX's rule: a psum (or pmean) reduces over axes its operand varies over, or over axes
    it is invariant over (each lane then counts once per device), never over a mix."""
    for vma, v in zip(ins, eqn.invars):
        _check_psum_mix(eqn.params["axes"], v.aval.update(vma=vma))


def _check_psum_mix(axes, aval, api="jax.lax.psum"):
    """JAX's ValueError for a psum (or psum_scatter) over a mix, followed by the axes the value
    varies and does not vary over (JAX's lists only the states); else the value's state."""
    return axis_state(aval, axes, api, mix_hint(axes, aval))


psum_p.def_vma(_psum_vma)
pmax_p.def_vma(_reduced_vma)
pmin_p.def_vma(_reduced_vma)
psum_invariant_p.def_vma(_reduced_vma)


def _varying_over_axis_name(eqn, ins, strict):
    """The result varies over the collective's axis (all_gather's too: its value is equal on
    every lane, but JAX's type system counts it as varying; all_gather_invariant would not)."""
    return [frozenset().union(*ins) | set(lanes.names_of(eqn.params["axis_name"]))]


def _times_axis_size(x, size):
    return ew.mul(x, ew.full((), size, get_aval(x).dtype))


def _allreduce_batcher(prim, reduce_mapped, reduce_unmapped):
    """On its own axis: reduce over the batch dim (the result is the same on every lane, so it
    is unbatched); the other names are reduced by the enclosing axes' rules."""
    def rule(axis_data, vals, dims, *, axes):
        (x,), (d,) = vals, dims
        if axis_data.name not in axes:
            return prim.bind(x, axes=axes), d
        rest = tuple(a for a in axes if a != axis_data.name)
        out = reduce_unmapped(x, axis_data.size) if d is None else reduce_mapped(x, (d,))
        return (prim.bind(out, axes=rest) if rest else out), None
    prim.def_batch(rule)


_allreduce_batcher(psum_p, lambda x, a: reductions.reduce_sum(x, a), _times_axis_size)
_allreduce_batcher(psum_invariant_p, lambda x, a: reductions.reduce_sum(x, a),
                   _times_axis_size)
_allreduce_batcher(pmax_p, lambda x, a: reductions.reduce_max(x, a), lambda x, n: x)
_allreduce_batcher(pmin_p, lambda x, a: reductions.reduce_min(x, a), lambda x, n: x)

# Every value is seen as one copy per lane: psum sums the copies and hands the sum to every
# lane, so it is its own transpose (as JAX's psum outside check_vma; shard_map's transpose
# divides replicated cotangents by the axis size to match).
deflinear(psum_p, lambda ct, x, *, axes: [psum_p.bind(ct, axes=axes)])


def _pminmax_jvp(prim):
    """Ties share the tangent equally, like reduce_max's JVP."""
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if type(t) is Zero:
            return out, Zero(get_aval(out).to_tangent_aval())
        hit = ew.convert_element_type(ew.eq(x, out), get_aval(t).dtype)
        num = _bind_allreduce(psum_p, ew.mul(instantiate(t), hit), axes)
        return out, ew.div(num, _bind_allreduce(psum_p, hit, axes))
    prim.def_jvp(jvp)


_pminmax_jvp(pmax_p)
_pminmax_jvp(pmin_p)


def _reducer_api(prim, api, doc, prepare=lambda x: x):
    def fn(x, axis_name, *, axis_index_groups=None):
        axes = _axis_names(axis_name)
        check_axis_names(axes, api)
        if axis_index_groups is not None:
            groups = lanes.check_groups(axis_index_groups, axes, False, api)
            per_group = lanes.reduce_in_groups(lanes.REDUCERS[api])
            return pytree.tree_map(lambda leaf: lanes.lanewise(
                prepare(_as_array(leaf)), axes, groups, per_group), x)
        return pytree.tree_map(lambda leaf: _bind_allreduce(prim, prepare(_as_array(leaf)),
                                                            axes), x)
    fn.__name__, fn.__doc__ = api, doc
    return fn


def _varying(x, axes):
    """In a check_vma body, as JAX 0.10: a collective's operand is first made varying over the
    axes it acts on (pvary over those it is invariant over)."""
    aval = get_aval(x)
    missing = tuple(a for a in axes if a not in aval.vma) if vma_checked() else ()
    check_not_partial(aval, missing)
    return pvary_p.bind(x, axes=binding_order(missing)) if missing else x


def check_not_partial(aval, axes):
    """JAX's pvary refuses a value unreduced over its axes: each device's partial value is no
    operand of a collective, nor an output's block, but their sum."""
    if set(axes) & set(getattr(getattr(aval.sharding, "spec", None), "unreduced", ())):
        raise in_jax_words(ValueError(f"pvary cannot accept args which are unreduced. Got "
                                      f"{aval.str_short(True)} and axes={set(axes)}"))


def _bind_allreduce(prim, x, axes):
    """An all-reduce as JAX 0.10 binds it: in a check_vma body, of an operand varying over
    its axes, and psum as psum_invariant."""
    if not vma_checked():
        return prim.bind(x, axes=axes)
    if prim is psum_p and _check_psum_mix(axes, get_aval(x)) == "unreduced":
        from .parallel_vma import unreduced_psum_p  # the casts build on the collectives
        return unreduced_psum_p.bind(x, axes=axes)
    return (psum_invariant_p if prim is psum_p else prim).bind(_varying(x, axes), axes=axes)


_psum = _reducer_api(psum_p, "psum", "", _bool_as_int)


def psum(x, axis_name, *, axis_index_groups=None):
    """All-reduce sum of x (a pytree) over the named axis or axes: every lane receives the sum
    over the lanes (bools are counted, as int32). A pytree of constants (no traced value) is
    the same on every lane: as JAX's, its sum is computed at once, size times each (a Python
    scalar stays one: `psum(1, 'i')` is the axis size)."""
    leaves = pytree.tree_leaves(x)
    if axis_index_groups is not None or not leaves or any(isinstance(v, Tracer) for v in leaves):
        return _psum(x, axis_name, axis_index_groups=axis_index_groups)
    names = _axis_names(axis_name)
    check_axis_names(names, "psum")
    sizes = axis_scope()[0]
    if not all(a in sizes for a in names):  # sizes known later: psum them then
        return _psum(x, axis_name)
    n = math.prod(sizes[a] for a in names)
    return pytree.tree_map(lambda v: _constant_times(v, n), x)


def _constant_times(x, n):
    if type(x) in (int, float, complex):
        return type(x)(n) * x
    return _times_axis_size(_bool_as_int(_as_array(x)), n)
pmax = _reducer_api(pmax_p, "pmax", "All-reduce maximum of x (a pytree) over the named axes.")
pmin = _reducer_api(pmin_p, "pmin", "All-reduce minimum of x (a pytree) over the named axes.")


def pmean(x, axis_name, *, axis_index_groups=None):
    """All-reduce mean of x (a pytree) over the named axis or axes (within each of the
    axis_index_groups: divided by the group's size)."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    names = _axis_names(axis_name)
    if axis_index_groups is None:
        n = _size_of(names, "pmean")
        return pytree.tree_map(lambda v: v / n, total)
    groups = lanes.check_groups(axis_index_groups, names, False, "pmean")
    return pytree.tree_map(lambda v: v / lanes.group_sizes(v, names, groups), total)


def _size_of(names, api):
    """The product of the axes' sizes: static when known, else psum(1) (resolved later)."""
    sizes, _ = axis_scope()
    if all(n in sizes for n in names):
        out = 1
        for n in names:
            out *= sizes[n]
        return out
    return psum_p.bind(1, axes=names)


# ---------------------------------------------------------------- axis_index

axis_index_p = _collective("axis_index")
axis_index_p.def_abstract_eval(lambda *, axis_name: ShapedArray((), dtypes.int32))


def _axis_index_batch(axis_data, vals, dims, *, axis_name):
    if axis_data.name != axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return st.iota(dtypes.int32, axis_data.size), 0


axis_index_p.def_batch(_axis_index_batch)
axis_index_p.def_vma(lambda eqn, ins, strict: [frozenset({eqn.params["axis_name"]})])


def axis_index(axis_name):
    """This lane's index along the named axis (several names: the row-major linear index)."""
    names = _axis_names(axis_name)
    check_axis_names(names, "axis_index")
    if not isinstance(axis_name, (tuple, list)):
        return axis_index_p.bind(axis_name=names[0])
    # JAX's sum, innermost axis first, staged as JAX stages it (from a concrete int32 zero)
    index, inner = ew.full((), 0, dtypes.int32), 1
    for name in reversed(names):
        index = ew.add(index, ew.mul(axis_index_p.bind(axis_name=name), inner))
        inner = inner * _size_of((name,), "axis_index")
    return index


# ---------------------------------------------------------------- pvary

pvary_p = _collective("pvary")
pvary_p.def_abstract_eval(_same_aval)


def _pvary_batch(axis_data, vals, dims, *, axes):
    """Values are unchanged; an unbatched operand is materialized as one copy per lane."""
    (x,), (d,) = vals, dims
    if d is None and axis_data.name in axes:
        x, d = bdim_at_front(x, d, axis_data.size), 0
    rest = tuple(a for a in axes if a != axis_data.name)
    return (pvary_p.bind(x, axes=rest) if rest else x), d


pvary_p.def_batch(_pvary_batch)
pvary_p.def_vma(lambda eqn, ins, strict: [frozenset().union(*ins) | set(eqn.params["axes"])])
# Each lane's copy of an invariant value gets its own cotangent: they are summed (JAX's).
deflinear(pvary_p, lambda ct, x, *, axes: [psum_invariant_p.bind(ct, axes=axes)])
deflinear(psum_invariant_p, lambda ct, x, *, axes: [pvary_p.bind(ct, axes=axes)])


# ---------------------------------------------------------------- all_gather

all_gather_p = _collective("all_gather")


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, axis_name, axis, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[axis] *= axis_size
    else:
        shape.insert(axis, axis_size)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _gather_lanes(x, axis, tiled, size):
    """Lanes stacked at dim 0 of x become dim `axis` (merged into it when tiled)."""
    y = moveaxis(x, 0, axis)
    if not tiled:
        return y
    shape = list(get_aval(y).shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return st.reshape(y, tuple(shape))


def _all_gather_batch(axis_data, vals, dims, *, axis_name, axis, tiled, axis_size):
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, tiled=tiled, axis_size=axis_size)
    if axis_data.name != axis_name:
        if d is None:
            return all_gather_p.bind(x, axis=axis, **params), None
        return all_gather_p.bind(moveaxis(x, d, 0), axis=axis + 1, **params), 0
    return _gather_lanes(bdim_at_front(x, d, axis_data.size), axis, tiled, axis_data.size), None


def _gather_lanewise(x, names, groups, axis, tiled, n):
    """all_gather within groups of n lanes of the named axes, on the lanes made explicit."""
    return lanes.lanewise(x, names, groups, lambda members: _every_lane_gets(
        _gather_lanes(members, axis, tiled, n), n))


all_gather_p.def_batch(lanes.several_axes(
    _all_gather_batch, lambda x, names, axis, tiled, axis_size: _gather_lanewise(
        x, names, lanes.all_lanes(names), axis, tiled, axis_size)))
all_gather_p.def_vma(_varying_over_axis_name)
all_gather_p.def_pp(lambda eqn, context: [
    ("all_gather_dimension", eqn.params["axis"]), ("axis_index_groups", None),
    ("axis_name", lanes.names_of(eqn.params["axis_name"])), ("axis_size", eqn.params["axis_size"]),
    ("tiled", eqn.params["tiled"])])
deflinear(all_gather_p, lambda ct, x, *, axis_name, axis, tiled, axis_size: [
    psum_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=axis, tiled=tiled,
                        axis_size=axis_size)])


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every lane receives the lanes' values of x stacked along a new dimension `axis`
    (concatenated along `axis` when tiled)."""
    names = _axis_names(axis_name)
    check_axis_names(names, "all_gather")
    groups = _groups_or_none(axis_index_groups, names, "all_gather")

    def one(leaf):
        leaf = _as_array(leaf)
        ndim = len(get_aval(leaf).shape)
        ax = _check_axis("all_gather", axis, ndim if tiled else ndim + 1)
        if groups is not None:
            return _gather_lanewise(leaf, names, groups, ax, tiled, len(groups[0]))
        return all_gather_p.bind(_varying(leaf, names), axis_name=_param(names), axis=ax,
                                 tiled=bool(tiled), axis_size=_total_size(names, "all_gather"))
    return pytree.tree_map(one, x)


def _groups_or_none(axis_index_groups, names, api):
    """None without groups (the collective's own primitive, over one axis or several), else
    the groups, of one size."""
    if axis_index_groups is None:
        return None
    return lanes.check_groups(axis_index_groups, names, True, api)


def _every_lane_gets(value, n):
    """value (the same for each of the n members of a group) as their results, stacked."""
    shape = tuple(get_aval(value).shape)
    return st.broadcast_in_dim(value, (n,) + shape, tuple(range(1, len(shape) + 1)))


def _param(names):
    """The `axis_name` param of a collective over `names`: the name, or the tuple of several."""
    return names if len(names) > 1 else names[0]


def _total_size(names, api):
    """The number of lanes of the named axes together."""
    return math.prod(axis_size(n, api) for n in names)


def _check_axis(api, axis, bound):
    if not -bound <= axis < bound:
        raise ValueError(f"{api}: axis {axis} is out of bounds for an operand allowing axes in "
                         f"[{-bound}, {bound})")
    return axis % bound


# ---------------------------------------------------------------- psum_scatter

# JAX's name for what lax.psum_scatter binds (printed jaxprs show reduce_scatter)
psum_scatter_p = _collective("reduce_scatter")


@psum_scatter_p.def_abstract_eval
def _psum_scatter_abstract_eval(x, *, axis_name, scatter_dimension, tiled, axis_size):
    _check_scatter_dtype(x.dtype, axis_name)
    shape, n = list(x.shape), x.shape[scatter_dimension]
    if tiled and n % axis_size or not tiled and n != axis_size:
        need = "divisible by" if tiled else "equal to"
        raise ValueError(f"psum_scatter: dimension {scatter_dimension} of the operand "
                         f"{x.str_short()} has size {n}, which must be {need} the size "
                         f"{axis_size} of axis {axis_name!r}")
    if tiled:
        shape[scatter_dimension] = n // axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _check_scatter_dtype(dtype, axis_name):
    """JAX sums the lanes with `add`, which rejects bool (psum, unlike it, counts bools)."""
    if dtype == dtypes.bool_:
        raise TypeError(f"reduce_scatter over axis {axis_name!r} does not accept dtype bool. "
                        "Accepted dtypes are subtypes of integer, floating, complexfloating.")


def _split_to_lanes(x, dim, tiled, size):
    """The inverse of _gather_lanes: dim `dim` of x (split in `size` chunks when tiled)
    becomes the lane dim 0."""
    if tiled:
        shape = list(get_aval(x).shape)
        shape[dim:dim + 1] = [size, shape[dim] // size]
        x = st.reshape(x, tuple(shape))
    return moveaxis(x, dim, 0)


def _psum_scatter_batch(axis_data, vals, dims, *, axis_name, scatter_dimension, tiled,
                        axis_size):
    (x,), (d,) = vals, dims
    _check_scatter_dtype(get_aval(x).dtype, axis_name)
    params = dict(axis_name=axis_name, tiled=tiled, axis_size=axis_size)
    if axis_data.name != axis_name:
        if d is None:
            return psum_scatter_p.bind(x, scatter_dimension=scatter_dimension, **params), None
        return psum_scatter_p.bind(moveaxis(x, d, 0), scatter_dimension=scatter_dimension + 1,
                                   **params), 0
    total = _times_axis_size(x, axis_data.size) if d is None else \
        reductions.reduce_sum(x, (d,))
    return _split_to_lanes(total, scatter_dimension, tiled, axis_data.size), 0


def _scatter_lanewise(x, names, groups, dim, tiled, n):
    """psum_scatter within groups of n lanes of the named axes, on the lanes made explicit."""
    return lanes.lanewise(x, names, groups, lambda members: _split_to_lanes(
        reductions.reduce_sum(members, (0,)), dim, tiled, n))


psum_scatter_p.def_batch(lanes.several_axes(
    _psum_scatter_batch, lambda x, names, scatter_dimension, tiled, axis_size: _scatter_lanewise(
        x, names, lanes.all_lanes(names), scatter_dimension, tiled, axis_size)))
psum_scatter_p.def_vma(_varying_over_axis_name)
psum_scatter_p.def_pp(lambda eqn, context: [("axis_index_groups", None)] + sorted(
    dict(eqn.params, axis_name=lanes.names_of(eqn.params["axis_name"])).items()))
deflinear(psum_scatter_p, lambda ct, x, *, axis_name, scatter_dimension, tiled, axis_size: [
    all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled,
                      axis_size=axis_size)])


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The psum of x over the named axis, of which each lane keeps only its own chunk along
    `scatter_dimension` (untiled: that dimension must equal the axis size and is removed)."""
    names = _axis_names(axis_name)
    check_axis_names(names, "psum_scatter")
    groups = _groups_or_none(axis_index_groups, names, "psum_scatter")
    size = len(groups[0]) if groups else _total_size(names, "psum_scatter")

    def one(leaf):
        leaf = _as_array(leaf)
        state = vma_checked() and _check_psum_mix(names, get_aval(leaf), "jax.lax.psum_scatter")
        dim = _check_axis("psum_scatter", scatter_dimension, len(get_aval(leaf).shape))
        params = dict(axis_name=_param(names), scatter_dimension=dim, tiled=bool(tiled),
                      axis_size=size)
        if state == "unreduced" and groups is None:  # JAX's unreduced psum_scatter
            from .parallel_vma import unreduced_reduce_scatter_p
            return unreduced_reduce_scatter_p.bind(leaf, **params)
        if groups is None:
            return psum_scatter_p.bind(_varying(leaf, names), **params)
        _psum_scatter_abstract_eval(get_aval(leaf), **params)  # JAX's shape/dtype errors
        return _scatter_lanewise(leaf, names, groups, dim, tiled, size)
    return pytree.tree_map(one, x)


# ---------------------------------------------------------------- ppermute

ppermute_p = _collective("ppermute")
ppermute_p.def_abstract_eval(_same_aval)


def _permute_lanes(x, perm, size):
    """Lane dst of the result is lane src of x (lanes at dim 0); unreached lanes are zero."""
    src_of = dict((dst, src) for src, dst in perm)
    zero = None
    pieces = []
    for dst in range(size):
        if dst in src_of:
            pieces.append(st.slice_in_dim(x, src_of[dst], src_of[dst] + 1, axis=0))
            continue
        if zero is None:
            zero = ew.full((1,) + tuple(get_aval(x).shape[1:]), 0, get_aval(x).dtype)
        pieces.append(zero)
    return st.concatenate(pieces, 0)


def _ppermute_batch(axis_data, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    if axis_data.name != axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    return _permute_lanes(bdim_at_front(x, d, axis_data.size), perm, axis_data.size), 0


def _permute_lanewise(x, names, perm):
    """ppermute over several axes, on the lanes made explicit: numbered row-major in the
    order the axes are bound (the mesh's, for shard_map), as JAX numbers devices."""
    names = binding_order(names)
    n = lanes.lane_count(names)
    return lanes.lanewise(x, names, lanes.all_lanes(names),
                          lambda members: _permute_lanes(members, perm, n))


ppermute_p.def_batch(lanes.several_axes(_ppermute_batch, _permute_lanewise))
ppermute_p.def_vma(_varying_over_axis_name)
ppermute_p.def_pp(lambda eqn, context: [("axis_name", lanes.names_of(eqn.params["axis_name"])),
                                        ("perm", eqn.params["perm"])])
deflinear(ppermute_p, lambda ct, x, *, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))])


def _check_perm(perm, size):
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute: perm {perm} sends from or to some lane twice; sources and "
                         "destinations must each be distinct")
    bad = [i for i in srcs + dsts if not 0 <= i < size]
    if bad:
        raise ValueError(f"ppermute: perm {perm} names lane {bad[0]}, outside the axis of "
                         f"size {size}")
    return perm


def ppermute(x, axis_name, perm):
    """Lane dst receives x from lane src for each (src, dst) pair of perm; lanes receiving
    nothing get zeros. Over several axes, lanes are numbered row-major over them in the
    order they are bound (the mesh's, for shard_map), as JAX numbers devices."""
    names = _axis_names(axis_name)
    check_axis_names(names, "ppermute")
    perm = _check_perm(perm, _total_size(names, "ppermute"))
    return pytree.tree_map(
        lambda leaf: ppermute_p.bind(_varying(_as_array(leaf), names), axis_name=_param(names),
                                     perm=perm), x)


# ---------------------------------------------------------------- all_to_all

all_to_all_p = _collective("all_to_all")


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
        return ShapedArray(shape, x.dtype, weak_type=x.weak_type)
    del shape[split_axis]
    shape.insert(concat_axis, axis_size)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def _all_to_all_tiled(x, split_axis, concat_axis, size):
    """x: lanes at dim 0. Lane j receives chunk j of every lane's split_axis, concatenated in
    lane order along concat_axis."""
    shape = list(get_aval(x).shape)
    s, c = split_axis + 1, concat_axis + 1
    shape[s:s + 1] = [size, shape[s] // size]
    y = moveaxis(st.reshape(x, tuple(shape)), s, 0)   # (dst lane, src lane, ...)
    y = moveaxis(y, 1, c)                              # src lanes just before concat dim
    shape = list(get_aval(y).shape)
    shape[c:c + 2] = [shape[c] * shape[c + 1]]
    return st.reshape(y, tuple(shape))


def _all_to_all_lanes(x, split_axis, concat_axis, tiled, size):
    if tiled:
        return _all_to_all_tiled(x, split_axis, concat_axis, size)
    # Untiled, as JAX's lax.all_to_all: a new size-1 dim receives the chunks, and the split
    # dim (down to size 1) is dropped.
    if split_axis == concat_axis:
        return _all_to_all_tiled(x, split_axis, concat_axis, size)
    if split_axis < concat_axis:
        concat_axis += 1
    x = st.expand_dims(x, (concat_axis + 1,))
    if concat_axis <= split_axis:
        split_axis += 1
    y = _all_to_all_tiled(x, split_axis, concat_axis, size)
    return st.squeeze(y, (split_axis + 1,))


def _all_to_all_batch(axis_data, vals, dims, *, axis_name, split_axis, concat_axis, tiled,
                      axis_size):
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, tiled=tiled, axis_size=axis_size)
    if axis_data.name != axis_name:
        if d is None:
            return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                     **params), None
        return all_to_all_p.bind(moveaxis(x, d, 0), split_axis=split_axis + 1,
                                 concat_axis=concat_axis + 1, **params), 0
    x = bdim_at_front(x, d, axis_data.size)
    return _all_to_all_lanes(x, split_axis, concat_axis, tiled, axis_data.size), 0


def _all_to_all_lanewise(x, names, groups, split_axis, concat_axis, tiled, n):
    """all_to_all within groups of n lanes of the named axes, on the lanes made explicit."""
    return lanes.lanewise(x, names, groups, lambda members: _all_to_all_lanes(
        members, split_axis, concat_axis, tiled, n))


all_to_all_p.def_batch(lanes.several_axes(
    _all_to_all_batch, lambda x, names, split_axis, concat_axis, tiled, axis_size:
    _all_to_all_lanewise(x, names, lanes.all_lanes(names), split_axis, concat_axis, tiled,
                         axis_size)))
all_to_all_p.def_vma(_varying_over_axis_name)
all_to_all_p.def_pp(lambda eqn, context: [("axis_index_groups", None)] + sorted(
    (k, v) for k, v in eqn.params.items() if k != "axis_size"))
deflinear(all_to_all_p, lambda ct, x, *, split_axis, concat_axis, **params: [
    all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)])


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Lane j receives chunk j of every lane's x along split_axis, stacked (concatenated when
    tiled) in lane order along concat_axis."""
    names = _axis_names(axis_name)
    check_axis_names(names, "all_to_all")
    groups = _groups_or_none(axis_index_groups, names, "all_to_all")
    size = len(groups[0]) if groups else _total_size(names, "all_to_all")

    def one(leaf):
        leaf = _as_array(leaf)
        shape = get_aval(leaf).shape
        sa = _check_axis("all_to_all", split_axis, len(shape))
        ca = _check_axis("all_to_all", concat_axis, len(shape))
        _check_split(shape, sa, size, tiled, _param(names))
        if groups is not None:
            return _all_to_all_lanewise(leaf, names, groups, sa, ca, tiled, size)
        return all_to_all_p.bind(_varying(leaf, names), axis_name=_param(names), split_axis=sa,
                                 concat_axis=ca, tiled=bool(tiled), axis_size=size)
    return pytree.tree_map(one, x)


def _check_split(shape, split_axis, size, tiled, name):
    n = shape[split_axis]
    if tiled and n % size:
        raise ValueError(f"all_to_all: the split_axis dimension of size {n} (operand shape "
                         f"{tuple(shape)}) must be divisible by the size {size} of axis {name!r}")
    if not tiled and n != size:
        raise ValueError(f"all_to_all requires the size of the mapped axis {name!r} ({size}) to "
                         f"equal x.shape[split_axis] ({n}); pass tiled=True to split it instead")


COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p, ppermute_p, all_to_all_p,
               axis_index_p, pvary_p, psum_invariant_p)

# ragged_all_to_all is in parallel_ragged.py (re-exported here, where the backends' rules and
# api/lax look for the family's primitives)
from .parallel_ragged import ragged_all_to_all, ragged_all_to_all_p  # noqa: E402,F401

COLLECTIVES = COLLECTIVES + (ragged_all_to_all_p,)
