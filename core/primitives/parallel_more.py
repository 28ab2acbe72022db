"""pshuffle and pswapaxes (JAX's wrappers of ppermute and all_to_all) and pbroadcast."""
from .. import pytree
from ..trace import get_aval
from ..transforms.ad import deflinear
from ..transforms.batching import bdim_at_front
from . import elementwise as ew
from . import parallel_lanes as lanes
from . import structural as st
from .axis_env import _axis_names, check_axis_names
from .parallel import _as_array, _collective, _same_aval, all_to_all, axis_index, ppermute, psum


def pshuffle(x, axis_name, perm):
    """Lane i receives x from lane perm[i] (perm a permutation of the lanes): ppermute with
    the permutation given by its sources."""
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """The named axis swapped with the positional `axis` (whose size must be the axis's, or
    its groups'): all_to_all(x, axis_name, axis, axis)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# ---------------------------------------------------------------- pbroadcast

pbroadcast_p = _collective("pbroadcast")
pbroadcast_p.def_abstract_eval(_same_aval)


def _source_lane(x, source, size):
    """x (lanes at dim 0) with every lane replaced by lane `source`."""
    shape = get_aval(x).shape
    row = st.slice_in_dim(x, source, source + 1, axis=0)
    return st.broadcast_in_dim(st.squeeze(row, (0,)), shape, tuple(range(1, len(shape))))


def _pbroadcast_batch(axis_data, vals, dims, *, axis_name, source):
    (x,), (d,) = vals, dims
    if axis_data.name != axis_name:
        return pbroadcast_p.bind(x, axis_name=axis_name, source=source), d
    if d is None:
        return x, None
    return _source_lane(bdim_at_front(x, d, axis_data.size), source, axis_data.size), 0


def _pbroadcast_transpose(ct, x, *, axis_name, source):
    """Every lane's cotangent flows back to the source lane; the others get zeros."""
    total = psum(ct, axis_name)
    zero = ew.full(get_aval(ct).shape, 0, get_aval(ct).dtype)
    at_source = ew.eq(axis_index(axis_name), source)
    pick = st.broadcast_in_dim(at_source, get_aval(ct).shape, ())
    return [ew.select_n(pick, zero, total)]


pbroadcast_p.def_batch(_pbroadcast_batch)
deflinear(pbroadcast_p, _pbroadcast_transpose)


def _check_source(source, size, names):
    if not 0 <= source < size:
        # JAX's vmap rule asserts this (AssertionError) and its CPU lowering does not exist.
        raise ValueError(f"pbroadcast: source {source} is outside the axes {names} of size "
                         f"{size}")


def pbroadcast(x, axis_name, source):
    """Every lane receives lane `source`'s x (JAX's CollectiveBroadcast). Over several axes,
    `source` is the row-major lane index over them."""
    names = _axis_names(axis_name)
    check_axis_names(names, "pbroadcast")
    size, source = lanes.lane_count(names), int(source)
    _check_source(source, size, names)

    def one(leaf):
        leaf = _as_array(leaf)
        if len(names) == 1:
            return pbroadcast_p.bind(leaf, axis_name=names[0], source=source)
        return lanes.lanewise(leaf, names, (tuple(range(size)),),
                              lambda members: _source_lane(members, source, size))
    return pytree.tree_map(one, x)
