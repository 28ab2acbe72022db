"""numpy_ref rules: collectives (NameError if reached) and shard_map (checked nested vmap)."""
import numpy as np

from ...core.primitives import parallel as par
from ...core.transforms import shard_map as sm
from ..base import register_rule
from .backend import NumpyRefBackend, interpret_jaxpr


def _unbound(prim):
    def raise_unbound(*args, **params):
        names = params.get("axes", params.get("axis_name"))
        raise NameError(f"unbound axis name: {names!r}. {prim.name} ran outside of any vmap, "
                        "pmap or shard_map binding that axis name.")
    return raise_unbound


for _p in par.COLLECTIVES:
    register_rule(NumpyRefBackend, _p)(_unbound(_p))


@register_rule(NumpyRefBackend, sm.shard_map_p)
def _shard_map(*args, **params):
    closed, checks = sm.staged_lanes(params)
    values = interpret_jaxpr(closed, list(args))
    n = len(params["out_specs"])
    for (i, lanes, replicated), stacked in zip(checks, values[n:]):
        _check_replicated(i, lanes, replicated, np.asarray(stacked), params)
    return values[:n]


def _differs(a, b):
    if a.dtype.kind in "fc":
        return ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return a != b


def _check_replicated(i, lanes, replicated, stacked, params):
    """Every lane along a replicated axis must hold the same value as lane 0."""
    for axis in replicated:
        pos = lanes.index(axis)
        first = np.take(stacked, [0], axis=pos)
        bad = np.argwhere(_differs(stacked, first))
        if len(bad):
            raise ValueError(_replication_message(i, lanes, axis, tuple(bad[0]), stacked,
                                                  params))


def _device_of(coords, lanes, mesh):
    index = tuple(coords[lanes.index(a)] if a in lanes else 0 for a in mesh.axis_names)
    return mesh.devices[index]


def _replication_message(i, lanes, axis, where, stacked, params):
    mesh, spec = params["mesh"], params["out_specs"][i]
    where = tuple(int(i) for i in where)
    coords = where[:len(lanes)]
    base = tuple(0 if a == axis else c for a, c in zip(lanes, coords))
    elem = where[len(lanes):]
    got, ref = stacked[coords + elem].item(), stacked[base + elem].item()
    return (f"shard_map output {i} has out_specs {spec}, which says it is replicated over mesh "
            f"axis {axis!r}, but its shards differ along that axis: index "
            f"{coords[lanes.index(axis)]} of {axis!r} ({_device_of(coords, lanes, mesh)}) holds "
            f"{got!r} at per-shard index "
            f"{elem} where index 0 ({_device_of(base, lanes, mesh)}) holds {ref!r}. Name "
            f"{axis!r} in its out_specs, or make it replicated with psum/pmean/all_gather.")
