"""Unreduced arrays on numpy_ref: each device holds its own partial value (the array's value is
their sum over the unreduced mesh axes), computed device by device as JAX's SPMD program does."""
import numpy as np

from ...core import sharding as sh
from ...core.sharding.mesh import axes_of
from ...core.primitives.sharding_ops import sharding_constraint_p
from ...core.sharding.shardings import UNREDUCED_INDICES
from ...core.sharding_propagation import elementwise
from ...core.sharding_types import is_typed
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
    if looped is not None:
        return looped
    mesh = _mesh(bufs)
    if prim is sharding_constraint_p:
        return [reshard(backend, bufs[0], out_avals[0], params["sharding"], mesh)]
    _check_local(prim, bufs, out_avals)
    rule = backend.rule(prim)
    devices = list(mesh._flat_devices_tuple)
    per_device = []
    for d in devices:
        out = rule(*[_local(b, d) for b in bufs], **params)
        per_device.append(out if prim.multiple_results else (out,))
    return [_buffer(backend, mesh, a, {d: outs[i] for d, outs in zip(devices, per_device)})
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
    pieces = [(d, idx, np.asarray(data_of[d], aval.dtype))
              for d, idx, _ in sharding.unreduced_pieces(aval.shape)]
    return backend.unreduced_buffer(sharding, pieces)


def _assembled(sharding, shape, data_of):
    out = None
    for d, idx in sharding.devices_indices_map(shape).items():
        block = np.asarray(data_of[d])
        out = np.empty(shape, block.dtype) if out is None else out
        out[idx] = block
    return out


def total(buf, shape):
    """The value of an array: its partial values summed over the unreduced groups."""
    if not unreduced_axes(buf.sharding):
        return buf.value
    groups = {}
    data = {s.device: s.data for s in buf.shards}
    for d, idx, group in buf.sharding.unreduced_pieces(shape):
        out = groups.setdefault(group, np.zeros(shape, data[d].dtype))
        out[idx] = data[d]
    return sum(groups[g] for g in sorted(groups))


def reshard(backend, buf, aval, sharding, mesh=None):
    """buf laid out as `sharding`: an unreduced source is summed (the all-reduce), an
    unreduced target holds the value on its first group's devices and zeros on the others
    (as JAX places it); the same unreduced layout keeps each device's partial value."""
    shape = aval.shape
    if isinstance(sharding, sh.NamedSharding) and unreduced_axes(buf.sharding) and \
            sharding.spec == buf.sharding.spec and sharding.mesh == buf.sharding.mesh:
        return buf
    value = total(buf, shape)
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

