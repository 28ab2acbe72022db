"""Collectives over several axes or within axis_index_groups, on the lanes made explicit; a
collective over several axes is one equation (as JAX stages it) whose batching rule, on one of
its axes, is that computation."""
import math

from .. import dtypes
from ..trace import get_aval
from . import elementwise as ew
from . import reductions
from . import structural as st

# Each collective here gathers every lane's operand (row-major over the named axes, in the
# order given: JAX's device order), computes every lane's result with the lane-explicit
# helpers the single-axis batching rules use, and keeps its own lane's. It costs a gather of
# every lane's value; in exchange every rule (jvp, transpose, vmap, both backends) is that of
# all_gather, gather and the structural primitives, which are checked on their own.


def lane_count(names):
    """The number of lanes of the named axes together."""
    from .axis_env import axis_size
    return math.prod(axis_size(n, "axis_index_groups") for n in names)


def check_groups(groups, names, equal_sizes, api):
    """axis_index_groups as a tuple of tuples, with JAX's errors: they must cover the lanes
    exactly once, and (for the collectives that exchange chunks) be of one size."""
    if groups is None:
        return (tuple(range(lane_count(names))),)
    groups = tuple(tuple(int(i) for i in g) for g in groups)
    flat = [i for g in groups for i in g]
    if sorted(flat) != list(range(lane_count(names))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    if equal_sizes and len({len(g) for g in groups}) > 1:
        raise ValueError(f"{api}: Replica groups must be equally sized; got axis_index_groups "
                         f"of sizes {[len(g) for g in groups]}")
    return groups


def every_lane(x, names):
    """Every lane's x stacked at dim 0, lane (i0, i1, ...) of the named axes at the row-major
    position: the lanes of the first name vary slowest."""
    from .parallel import all_gather
    for name in reversed(names):
        x = all_gather(x, name)
    shape = get_aval(x).shape
    return st.reshape(x, (lane_count(names),) + tuple(shape[len(names):]))


def own_lane(results, names):
    """This lane's entry of `results` (every lane's, at dim 0)."""
    from .parallel import axis_index
    row = take_rows(results, st.expand_dims(axis_index(names), (0,)))
    return st.squeeze(row, (0,))


def take_rows(x, rows):
    """x[rows] along the leading axis (rows an int32 vector, in bounds)."""
    from .gather import GatherDimensionNumbers, gather
    shape = get_aval(x).shape
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))),
                                   collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather(x, st.expand_dims(rows, (1,)), dnums, (1,) + tuple(shape[1:]))


def _rows(x, rows):
    if list(rows) == list(range(get_aval(x).shape[0])):
        return x
    return st.concatenate([st.slice_in_dim(x, r, r + 1, axis=0) for r in rows], 0)


def lanewise(x, names, groups, per_group):
    """The collective whose result for the lanes of a group (the group's members' x stacked
    at dim 0, in group order) is per_group(members) (their results, in the same order)."""
    lanes = every_lane(x, names)
    out_of = {}
    for g in groups:
        out = per_group(_rows(lanes, g))
        out_of.update({lane: (out, k) for k, lane in enumerate(g)})
    pieces = [st.slice_in_dim(out_of[i][0], out_of[i][1], out_of[i][1] + 1, axis=0)
              for i in range(len(out_of))]
    return own_lane(st.concatenate(pieces, 0), names)


def reduce_in_groups(reduce):
    """per_group of an all-reduce: every member receives the reduction over the members."""
    def per_group(members):
        shape = get_aval(members).shape
        total = reduce(members, (0,))
        return st.broadcast_in_dim(total, shape, tuple(range(1, len(shape))))
    return per_group


REDUCERS = {"psum": reductions.reduce_sum, "pmax": reductions.reduce_max,
            "pmin": reductions.reduce_min}


def group_sizes(x, names, groups):
    """Each lane's group size (pmean's divisor): a Python int when the groups are of one size."""
    if len({len(g) for g in groups}) == 1:
        return len(groups[0])
    one = ew.full(get_aval(x).shape, 1, dtypes.canonicalize_dtype(dtypes.int32))
    return lanewise(one, names, groups, reduce_in_groups(reductions.reduce_sum))


def names_of(axis_name):
    """The axis names of a collective's `axis_name` param: one name, or a tuple of several."""
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def all_lanes(names):
    """The one group of every lane of the named axes."""
    return (tuple(range(lane_count(names))),)


def several_axes(single_rule, lanewise_of):
    """The batching rule of a collective whose `axis_name` may name several axes (a tuple):
    an axis it does not name is the single-axis rule's (which binds it again, batched); on
    one it names, it is `lanewise_of(x, names, **params)` (this module's lane-explicit
    computation, which names each axis on its own) run under that axis' vmap."""
    def rule(axis_data, vals, dims, *, axis_name, **params):
        if not isinstance(axis_name, tuple) or axis_data.name not in axis_name:
            return single_rule(axis_data, vals, dims, axis_name=axis_name, **params)
        from ..transforms.vmap import vmap_flat  # vmap imports the collectives' module
        out, = vmap_flat(lambda x: [lanewise_of(x, axis_name, **params)], vals, dims, axis_data)
        return out, 0
    return rule
