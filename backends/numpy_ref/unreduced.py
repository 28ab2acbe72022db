"""Unreduced arrays on numpy_ref: each device holds its own partial value (the array's value is
their sum over the unreduced mesh axes), computed device by device as JAX's SPMD program does."""
import numpy as np

from ...core import sharding as sh
from ...core.sharding.mesh import axes_of
from ...core.sharding.shardings import UNREDUCED_INDICES
from ...core.sharding_propagation import constraint_sharding, elementwise
from ...core.sharding_types import is_typed
from ...core.sharding_unreduced import sets_of
from ..partial_values import by_iterations, in_program, splits_partials, unreduced_axes
from ..partial_values import involved as _involved
from ..partial_values import op_by_op as _op_by_op

__all__ = ["execute", "in_program", "involved", "op_by_op", "refuse_value", "unreduced_axes"]


def involved(bufs, out_avals, params):
    """Whether an operation reads or makes an unreduced value, or holds a program splitting
    one into each device's partial value (a shard_map's unreduced in_spec, in a jit, loop or
    branch): those run device by device, iteration by iteration or equation by equation."""
    return _involved(bufs, out_avals) or splits_partials(params.values())


def op_by_op(backend, closed_jaxpr):
    """partial_values.op_by_op, its results named by their types as a jit's results are
    (`P(None, None)` where the eager operation that made one names `P()`, as JAX's)."""
    run = _op_by_op(backend, closed_jaxpr)
    return lambda bufs: [_named(backend, b, a)
                         for b, a in zip(run(bufs), closed_jaxpr.out_avals)]


def _named(backend, buf, aval):
    """buf laid out and named by aval's type, as a compiled jit's results are (a shard_map
    run lane by lane leaves its results replicated): renamed where the layouts agree."""
    own = getattr(buf, "sharding", None)
    if not (is_typed(aval) and isinstance(own, sh.NamedSharding)):
        return buf
    spec, want = own.spec, aval.sharding.spec
    target = sh.NamedSharding(own.mesh, want)
    if (spec.unreduced, spec.reduced) == (want.unreduced, want.reduced) and \
            _entries(spec, aval.ndim) == _entries(want, aval.ndim):
        return type(buf)(target, buf.shards, buf._value, buf.committed)
    if spec.unreduced or want.unreduced or want.reduced:
        return buf
    return backend.own(buf.value, aval, target, True)


def _on_own_mesh(buf, mesh):
    """A shard_map's result, which its lanes leave on its mesh relabelled Auto, named on the
    shard_map's own mesh (the same devices and layout; an Explicit mesh's axes, as JAX's)."""
    own = getattr(buf, "sharding", None)
    if not (isinstance(mesh, sh.Mesh) and isinstance(own, sh.NamedSharding)) or \
            own.mesh == mesh or own.mesh.axis_names != mesh.axis_names or \
            _ids(own.mesh) != _ids(mesh):
        return buf
    return type(buf)(sh.NamedSharding(mesh, own.spec), buf.shards, buf._value, buf.committed)


def _ids(mesh):
    return [d.id for d in mesh._flat_devices_tuple]


def _entries(spec, ndim):
    return tuple(spec.partitions) + (None,) * (ndim - len(spec.partitions))


def refuse_value():
    """JAX's error for reading an unreduced array's value on the host (np.asarray, tolist)."""
    raise NotImplementedError(UNREDUCED_INDICES)


def execute(backend, prim, bufs, params, out_avals):
    """prim on each device's own data (its block, or its partial value), as JAX's partitioned
    program computes it: the types allow only operations that need no communication (a
    contraction over the unreduced axes leaves each device's partial sum); reshard sums."""
    if prim.call_param is not None:  # a call: its equations, each as above
        return op_by_op(backend, params[prim.call_param])(bufs)
    looped = by_iterations(backend, prim, bufs, params)
    if looped is not None:  # laid out and named by their types, as a compiled program's
        looped = [_on_own_mesh(b, params.get("mesh")) for b in looped]
        return [_named(backend, b, a) for b, a in zip(looped, out_avals)]
    mesh = _mesh(bufs)
    target = constraint_sharding(prim, params)  # reshard, with_sharding_constraint, device_put
    if target is not None:
        return [reshard(backend, bufs[0], out_avals[0], target, mesh)]
    if _same_sets(bufs, out_avals):
        return _by_groups(backend, prim, bufs, params, out_avals, mesh)
    _check_local(prim, bufs, out_avals)
    rule = backend.rule(prim)
    devices = list(mesh._flat_devices_tuple)
    per_device = []
    for d in devices:
        out = rule(*[_local(b, d) for b in bufs], **params)
        per_device.append(out if prim.multiple_results else (out,))
    return [_buffer(backend, mesh, a, {d: outs[i] for d, outs in zip(devices, per_device)})
            for i, a in enumerate(out_avals)]


def _same_sets(bufs, out_avals):
    """Whether the operation maps values unreduced over some axes to values unreduced over the
    same ones: it is linear in them (the types allow no other), so it maps each group's partial
    value (the one its devices hold together) to the result's."""
    sets = {unreduced_axes(getattr(b, "sharding", None)) for b in bufs} - {frozenset()}
    return len(sets) == 1 and all(sets_of(a)[0] in sets for a in out_avals)


def _by_groups(backend, prim, bufs, params, out_avals, mesh):
    """prim on each group's partial value, whole (a slice, a sum over a split dimension or a
    concatenation is one of the whole value, which no device holds alone); each device then
    holds its block of its group's result, as JAX's SPMD program leaves it."""
    values = [_group_values(b) if unreduced_axes(getattr(b, "sharding", None)) else None
              for b in bufs]
    groups = sorted(next(v for v in values if v is not None))
    rule, outs = backend.rule(prim), {}
    for g in groups:
        out = rule(*[b.value if v is None else v[g] for b, v in zip(bufs, values)], **params)
        outs[g] = out if prim.multiple_results else (out,)
    return [_from_groups(backend, _target(mesh, a), a, {g: o[i] for g, o in outs.items()})
            for i, a in enumerate(out_avals)]


# primitives whose params name no global shape or index: run on each device's block as on
# the whole array (elementwise ones too)
_SHAPE_FREE = {"transpose", "dot_general", "reduce_sum", "convert_element_type", "squeeze"}


def _check_local(prim, bufs, out_avals):
    """Refuse what the device-by-device rule cannot compute: an operation whose params are
    global shapes or indices (slice, pad, concatenate, broadcast_in_dim) on blocks of values
    partitioned over other mesh axes (a wrong result otherwise)."""
    if prim.name in _SHAPE_FREE or prim.sharding is elementwise:
        return
    specs = [getattr(b.sharding, "spec", None) for b in bufs]
    specs += [a.sharding.spec for a in out_avals if hasattr(a.sharding, "spec")]
    if any(e is not None for spec in specs if spec is not None for e in spec.partitions):
        raise NotImplementedError(
            f"{prim.name} of unreduced values partitioned over other mesh axes: numpy_ref "
            "computes unreduced values device by device, and this operation's params are "
            "global shapes or indices; reshard to a replicated unreduced spec first")


def _mesh(bufs):
    for b in bufs:
        if isinstance(getattr(b, "sharding", None), sh.NamedSharding):
            return b.sharding.mesh
    return sh.get_current_mesh()


def _local(buf, device):
    """What `device` holds of buf: its shard, or the whole value of an array on one device
    (an uncommitted operand is broadcast to the mesh, as in JAX)."""
    for s in buf.shards:
        if s.device == device:
            return s.data
    return buf.value


def _target(mesh, aval):
    spec = aval.sharding.spec
    return sh.NamedSharding(mesh, spec)


def _buffer(backend, mesh, aval, data_of):
    """The buffer of per-device results `data_of` laid out as aval's type says."""
    sharding = _target(mesh, aval)
    if not unreduced_axes(sharding):
        return backend.own(_assembled(sharding, aval.shape, data_of), aval, sharding, True)
    pieces = [(d, idx, _piece(np.asarray(data_of[d], aval.dtype), idx, aval.shape))
              for d, idx, _ in sharding.unreduced_pieces(aval.shape)]
    return backend.unreduced_buffer(sharding, pieces)


def _piece(data, idx, shape):
    """A device's piece of a result: its block, which a result computed from operands not
    split along a dimension its type splits (a contraction into P('X', None, unreduced={'Y'})
    of unsplit rows) holds whole, each device keeping its own rows."""
    if data.shape == shape and np.empty(shape, np.bool_)[idx].shape != shape:
        return data[idx]
    return data


def _assembled(sharding, shape, data_of):
    out = None
    for d, idx in sharding.devices_indices_map(shape).items():
        block = np.asarray(data_of[d])
        out = np.empty(shape, block.dtype) if out is None else out
        out[idx] = block
    return out


def global_shape(shards):
    """The shape of the array whose shards these are (each `data` at its `index`)."""
    dims = []
    for axis in range(shards[0].data.ndim):
        dims.append(max(s.index[axis].indices(10**18)[1] if s.index[axis].stop is not None
                        else s.data.shape[axis] for s in shards))
    return tuple(dims)


def _group_values(buf):
    """{group: the partial value its devices hold together} of an unreduced buffer (a group:
    the devices at one position along the unreduced axes, each holding its block)."""
    groups, shape = {}, global_shape(buf.shards)
    data = {s.device: s.data for s in buf.shards}
    for d, idx, group in buf.sharding.unreduced_pieces(shape):
        out = groups.setdefault(group, np.zeros(shape, data[d].dtype))
        out[idx] = data[d]
    return groups


def _from_groups(backend, sharding, aval, values):
    """The unreduced buffer laid out as `sharding` whose group g holds values[g]."""
    return backend.unreduced_buffer(sharding, [
        (d, idx, np.asarray(values[g], aval.dtype)[idx])
        for d, idx, g in sharding.unreduced_pieces(aval.shape)])


def total(buf):
    """The value of an array: its partial values summed over the unreduced groups."""
    if not unreduced_axes(buf.sharding):
        return buf.value
    groups = _group_values(buf)
    return sum(groups[g] for g in sorted(groups))


def reshard(backend, buf, aval, sharding, mesh=None):
    """buf laid out as `sharding`: an unreduced source is summed (the all-reduce), an
    unreduced target holds the value on its first group's devices and zeros on the others
    (as JAX places it); a layout unreduced over the same axes keeps each group's partial
    value (each device its block of it)."""
    shape = aval.shape
    if isinstance(sharding, sh.NamedSharding) and unreduced_axes(buf.sharding) and \
            unreduced_axes(sharding) == unreduced_axes(buf.sharding) and \
            sharding.mesh == buf.sharding.mesh:
        same = sharding.spec == buf.sharding.spec
        return buf if same else _from_groups(backend, sharding, aval, _group_values(buf))
    value = total(buf)
    if not unreduced_axes(sharding):
        return backend.own(value, aval, sharding, True)
    source = buf.sharding if isinstance(buf.sharding, sh.NamedSharding) and \
        not unreduced_axes(buf.sharding) else None
    owned = _owned(source, sharding, shape)
    pieces = []
    for d, idx, _ in sharding.unreduced_pieces(shape):
        partial = np.zeros_like(value)
        if owned[d] is not None:
            partial[owned[d]] = value[owned[d]]
        pieces.append((d, idx, partial[idx]))
    return backend.unreduced_buffer(sharding, pieces)


def _owned(source, target, shape):
    """Per device, the slices of the value it keeps when the value becomes unreduced over
    the target's axes (None: nothing, zeros), without communication, as JAX: its own block
    along the dimensions the source shards over those axes, and along an unreduced axis the
    source does not shard over, the first device's all."""
    axes = unreduced_axes(target)
    mesh = target.mesh
    entries = [] if source is None else source.spec._normalized_spec_for_aval(len(shape))
    kept = [tuple(a for a in axes_of(e) if a in axes) or None for e in entries]
    used = {a for e in kept for a in (e or ())}
    blocks = sh.NamedSharding(mesh, sh.P(*kept)).devices_indices_map(shape)
    rest = sh.NamedSharding(mesh, sh.P(unreduced=axes - used)).unreduced_pieces(())
    return {d: blocks[d] if group == 0 else None for d, _, group in rest}

