"""NumPy rules of the call-like primitives of core/transforms: jit, the custom_* calls,
stop_gradient and shard_map (a checked nested vmap), each interpreting its sub-jaxpr."""
import numpy as np

from ....core.transforms import checkpoint, composite, custom, custom_vjp, custom_vmap, jit as jit_mod
from ....core.transforms import jvp as jvp_mod
from ....core.transforms.linear_call import linear_call_p
from ....core.transforms import shard_map as sm
from ..backend import interpret_jaxpr
from ._common import rule


@rule(jit_mod.jit_p, checkpoint.remat_p)
def _jit(*args, jaxpr, **_):
    return interpret_jaxpr(jaxpr, args)


@rule(custom.custom_jvp_call_p, custom_vjp.custom_vjp_call_p)
def _custom_call(*args, call_jaxpr, **_):
    return interpret_jaxpr(call_jaxpr, args)


@rule(custom_vmap.custom_vmap_call_p)
def _custom_vmap_call(*args, call, **_):
    return interpret_jaxpr(call, args)


@rule(composite.composite_p)
def _composite(*args, jaxpr, **_):
    return interpret_jaxpr(jaxpr, args)


@rule(custom_vjp.custom_lin_p)
def _custom_lin(*args, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


@rule(checkpoint.name_p)
def _name(x, *, name):
    return x


@rule(jvp_mod.stop_gradient_p)
def _stop_gradient(x):
    return x


@rule(sm.shard_map_p)
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


@rule(linear_call_p)
def _linear_call(*args, callee, **_):
    return interpret_jaxpr(callee, args)
