"""The numpy_ref Backend: per-device NumPy buffers and a jaxpr interpreter as `compile`."""
import sys
from typing import NamedTuple

import numpy as np

from ...core import sharding as sh
from ...core.array import Array
from ...core.state import Ref
from ...core.config import config
from ...core.avals import ShapedArray
from ...core.jaxpr import ClosedJaxpr, Literal, eval_jaxpr, last_uses
from ...core.primitives.callbacks import pure_callback_p
from ...core.primitives.sharding_ops import device_put_p
from ...core.sharding_propagation import (may_change_layout, propagate_eager, propagate_jaxpr,
                                          sets_layout)
from ..base import Backend, register_backend
from . import unreduced


class Shard(NamedTuple):
    """One device's piece of an array: `data` is global_array[index]."""
    device: object
    index: tuple
    data: np.ndarray
    replica_id: int = 0


class NumpyBuffer:
    """An array on numpy_ref: one NumPy buffer per device holding a shard, plus the layout."""

    __slots__ = ("sharding", "shards", "_value", "committed")

    def __init__(self, sharding, shards, value=None, committed=False):
        self.sharding = sharding
        self.shards = shards
        self._value = value
        self.committed = committed

    @property
    def value(self):
        """The global array, assembled from the shards (an unreduced array's partial values
        are no value: JAX refuses to read them so)."""
        if self._value is None:
            if unreduced.unreduced_axes(self.sharding):
                unreduced.refuse_value()
            first = self.shards[0].data
            shape = unreduced.global_shape(self.shards)
            out = np.empty(shape, first.dtype)
            for s in self.shards:
                out[s.index] = s.data
            self._value = frozen(out)
        return self._value


class RefBox:
    """A reference on numpy_ref: a mutable box holding an immutable (read-only) array."""

    __slots__ = ("array", "layout", "committed")

    def __init__(self, array):
        self.array = array
        self.layout, self.committed = None, False  # set by execute: its operand's

    @property
    def sharding(self):
        """The layout of the array the reference was made from (JAX's), else the default
        device."""
        return self.layout or _the_backend().default_sharding()

    def read(self):
        if self.array is None:
            raise ValueError("this reference was freed (jax.free_ref) and cannot be used")
        return self.array

    @property
    def value(self):
        """What rules receive: the box itself (they read and replace its array)."""
        return self


def _placed_box(box, sharding, committed):
    """A reference made by this operation, with the layout the propagation gave it."""
    if sharding is not None and box.layout is None:
        box.layout, box.committed = sharding, committed
    return box


def _any_committed(bufs):
    return any([b.committed for b in bufs])


def placement(buf):
    """What a buffer asks of a computation's layout: its sharding if committed; None (the
    default device) if not, wherever it is, as JAX's uncommitted arrays."""
    return buf.sharding if buf.committed else None


def frozen(value):
    """value, made read-only: every buffer an Array holds is private and immutable, so NumPy
    views of it (np.asarray(x), shard data) cannot change it."""
    value.flags.writeable = False
    return value


class NumpyRefBackend(Backend):
    """Evaluates every primitive with NumPy; `compile` returns a jaxpr interpreter. It lowers
    to no compiler IR (no `jax_lowered`): jax.stages' texts of its programs are the jaxprs
    it interprets, and it has no cost or memory analyses (None)."""

    name = "numpy_ref"
    partial_values = True

    def __init__(self, num_devices=None):
        n = num_devices or config.read("jax_num_cpu_devices")
        self._devices = sh.make_cpu_devices(n)

    def devices(self):
        return list(self._devices)

    def put(self, value, aval, sharding=None):
        """A buffer holding a private copy of `value` (memory from outside refjax: the caller
        may change it later)."""
        return self.own(np.array(value, dtype=aval.dtype), aval, sharding)

    def own(self, value, aval, sharding=None, committed=None, whole=False):
        """A buffer of `value`, which nothing outside this backend holds (a rule's result, a
        copy): it is made read-only, not copied. Shards of other devices are copies. It is
        committed when asked (by default: when a sharding is given). `whole`: a program's
        result, whose pieces, when it is empty, are each the whole (empty) array, as XLA
        leaves them (their indices are still the layout's)."""
        value = frozen(np.asarray(value, dtype=aval.dtype))
        committed = sharding is not None if committed is None else committed
        sharding = sharding or self.default_sharding()
        if isinstance(sharding, sh.SingleDeviceSharding):
            dev = sharding._device_assignment[0]
            idx = tuple(slice(None) for _ in value.shape)
            return NumpyBuffer(sharding, (Shard(dev, idx, value),), value, committed)
        shards, seen = [], {}
        for dev, idx in sharding.devices_indices_map(value.shape).items():
            key = tuple(s.indices(d) for s, d in zip(idx, value.shape))
            piece = value if whole and not value.size else value[idx]
            shards.append(Shard(dev, idx, frozen(np.array(piece)), seen.setdefault(key, 0)))
            seen[key] += 1
        return NumpyBuffer(sharding, tuple(shards), value, committed)

    def to_numpy(self, buf, aval):
        return buf.value

    def shards(self, buf, aval):
        if unreduced.unreduced_axes(buf.sharding):  # no index: JAX refuses to give one
            return [s._replace(index=None, replica_id=None) for s in buf.shards]
        return list(buf.shards)

    def sharding_of(self, buf, aval):
        return buf.sharding

    def committed(self, buf):
        return buf.committed

    def unreduced_buffer(self, sharding, pieces):
        """A buffer of an unreduced layout from (device, slices, data) per device: each
        device's partial value (the slices are those the partitions give it)."""
        shards = tuple(Shard(d, idx, frozen(np.array(data))) for d, idx, data in pieces)
        return NumpyBuffer(sharding, shards, None, True)

    def execute(self, prim, bufs, params, out_avals):
        if unreduced.involved(bufs, out_avals, params):
            return unreduced.execute(self, prim, bufs, params, out_avals)
        out = self.rule(prim)(*[b.value for b in bufs], **params)
        outs = out if prim.multiple_results else (out,)
        default = self.default_sharding()
        shardings = self._out_shardings(prim, bufs, params, out_avals, default)
        committed = _any_committed(bufs)
        whole = prim is not device_put_p  # a transfer splits an empty array; XLA's programs not
        return [_placed_box(o, s, committed) if type(o) is RefBox else
                self.own(o, a, s or default, committed or s is not None, whole)
                for o, a, s in zip(outs, out_avals, shardings)]

    def _out_shardings(self, prim, bufs, params, out_avals, default):
        """Layouts by the propagation rules; inputs uncommitted or on the default device keep
        the fast path (unless the primitive sets layouts itself)."""
        device = default._device
        if not may_change_layout(prim) and all(
                not b.committed or type(b.sharding) is sh.SingleDeviceSharding
                and b.sharding._device is device for b in bufs):
            return [None] * len(out_avals)
        in_avals = [ShapedArray(b.read().shape, b.read().dtype) if type(b) is RefBox else
                    ShapedArray(b.value.shape, b.value.dtype) for b in bufs]
        return propagate_eager(prim, list(map(placement, bufs)), in_avals, out_avals, params)

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        closed_jaxpr = without_unused_pure_callbacks(closed_jaxpr)
        if unreduced.in_program(closed_jaxpr.jaxpr):
            return unreduced.op_by_op(self, closed_jaxpr)
        drops = last_uses(closed_jaxpr.jaxpr)

        def run(bufs):
            outs = interpret_jaxpr(closed_jaxpr, [b.value for b in bufs], drops)
            shardings = propagate_jaxpr(closed_jaxpr, list(map(placement, bufs)))
            # as in JAX: a program that sets layouts commits its results
            committed = sets_layout(closed_jaxpr.jaxpr) or _any_committed(bufs)
            return [self.own(o, a, s, committed, whole=True)
                    for o, a, s in zip(outs, closed_jaxpr.out_avals, shardings)]
        return run

    def fast_runner(self, closed_jaxpr):
        """The interpreter on uncommitted single-device arguments, for a jaxpr that sets no
        layout: its outputs go to the default device, read once here (jit's fast path keys
        its runners on the config's version and is off under scoped overrides)."""
        if sets_layout(closed_jaxpr.jaxpr) or unreduced.in_program(closed_jaxpr.jaxpr):
            return None
        default, out_avals = self.default_sharding(), closed_jaxpr.out_avals
        closed_jaxpr = without_unused_pure_callbacks(closed_jaxpr)
        drops = last_uses(closed_jaxpr.jaxpr)

        def run(args):
            values = []
            for a in args:
                if type(a) is not Array or a._backend is not self or a._buf.committed \
                        or type(a._buf.sharding) is not sh.SingleDeviceSharding:
                    return None
                values.append(a._buf.value)
            outs = interpret_jaxpr(closed_jaxpr, values, drops)
            return [Array(a, self.own(o, a, default, False), self)
                    for o, a in zip(outs, out_avals)]
        return run


# prim -> fn(out, *values, **params): the primitive computed into `out`, an input buffer the
# interpreter may overwrite (see _donor); registered by rules/ with `rule_in_place`.
in_place_rules = {}


def _donor(ins, aval):
    """The position of an input whose memory the equation's output may take: an array of the
    output's shape and dtype that owns its data, is writeable (so neither an Array's buffer
    nor a constant: those are read-only) and is referenced by nothing but `ins` (the
    interpreter dropped it from its environment: this is its last use; a view of it or a
    second variable bound to it would hold another reference). Elementwise rules may write
    over an operand they read, even one passed twice (x * x)."""
    for i in range(len(ins)):
        x = ins[i]
        if type(x) is np.ndarray and x.flags.writeable and x.base is None and \
                x.flags.c_contiguous and x.shape == aval.shape and x.dtype == aval.dtype:
            uses = sum(y is x for y in ins)
            if sys.getrefcount(x) == uses + 2:  # `ins`, `x` and getrefcount's argument
                return i
    return None


def interpret_jaxpr(closed, args, drops=None):
    """Evaluate a ClosedJaxpr on NumPy values: core's interpreter, each equation computed by
    this backend's NumPy rule (outputs cast to the dtypes the jaxpr gives them); `drops`:
    the jaxpr's `last_uses`, when already known."""
    rule = _the_backend().rule

    def apply(eqn, ins):
        into = in_place_rules.get(eqn.primitive)
        if into is not None:
            i = _donor(ins, eqn.outvars[0].aval)
            out = None if i is None else into(ins[i], *ins, **eqn.params)
            if out is not None:
                return [out]
        out = rule(eqn.primitive)(*ins, **eqn.params)
        outs = out if eqn.primitive.multiple_results else (out,)
        return [o if type(o) is RefBox else np.asarray(o, v.aval.dtype)
                for v, o in zip(eqn.outvars, outs)]

    if drops is None:
        closed = without_unused_pure_callbacks(closed)
    return eval_jaxpr(closed.jaxpr, [_const(c) for c in closed.consts], *args,
                      read_literal=_literal_array, apply=apply, drops=drops)


def without_unused_pure_callbacks(closed):
    """closed without the pure_callbacks whose results nothing reads: a pure callback is only
    observable through its results, and JAX's compiler drops such calls, so under jit the
    callable does not run (as in JAX)."""
    jaxpr = closed.jaxpr
    if not any(e.primitive is pure_callback_p for e in jaxpr.eqns):
        return closed
    live, kept = {v for v in jaxpr.outvars if type(v) is not Literal}, []
    for eqn in reversed(jaxpr.eqns):
        if eqn.primitive is pure_callback_p and not any(v in live for v in eqn.outvars):
            continue
        kept.append(eqn)
        live.update(v for v in eqn.invars if type(v) is not Literal)
    return ClosedJaxpr(jaxpr._replace(eqns=kept[::-1]), closed.consts)


def _const(c):
    """A jaxpr's constant as rules read it (a captured reference: its box)."""
    return c._buf if type(c) is Ref else np.asarray(c)


def _literal_array(lit):
    """Literals reach rules as 0-d arrays, as values from any other source (rules may copy)."""
    return np.asarray(lit.val)


def _the_backend():
    from ..base import get_backend
    return get_backend("numpy_ref")


register_backend("numpy_ref", NumpyRefBackend)
