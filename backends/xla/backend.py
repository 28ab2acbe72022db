"""The xla Backend: jax.Arrays on JAX's CPU devices, per-op cached jax.jit, one jax.jit per jaxpr."""
import collections
import contextlib

import jax
import jax.sharding as jsh
import numpy as np
from jax import lax

from ...core import dtypes
from ...core import sharding as sh
from ...core.array import Array
from ...core.config import config
from ...core.jaxpr import Literal
from ...core.transforms.jit import jit_p
from ..base import Backend
from ..numpy_ref.backend import Shard

_FLOAT0 = dtypes.float0
_X64_DTYPES = frozenset(map(np.dtype, (np.int64, np.uint64, np.float64, np.complex128)))
_MAX_CACHED = 4096


def _x64(needed=True):
    """JAX's x64 mode, scoped: refjax chooses every dtype itself, so JAX must not narrow them
    (and the user's own global JAX configuration stays untouched)."""
    return jax.enable_x64(True) if needed else contextlib.nullcontext()


def float0_zeros(shape):
    """A float0 buffer: float0 arrays stay NumPy arrays (they carry no data)."""
    return np.zeros(shape, _FLOAT0)


def _is_float0(x):
    return getattr(x, "dtype", None) == _FLOAT0


# ---------------------------------------------------------------- devices

def jax_cpu_devices(n):
    """JAX's CPU devices, n of them: configures jax_num_cpu_devices unless JAX has started."""
    if jax.config.jax_num_cpu_devices != n:
        try:
            jax.config.update("jax_num_cpu_devices", n)
        except RuntimeError:
            pass  # JAX is initialised already: whatever count it has is checked below
    devices = jax.devices("cpu")
    if len(devices) != n:
        raise RuntimeError(
            f"the xla backend needs {n} JAX CPU devices (refjax's jax_num_cpu_devices) but JAX "
            f"was already initialised with {len(devices)}. Set the count before JAX starts: "
            f"refjax.config.update('jax_num_cpu_devices', {len(devices)}) to match it, or "
            f"jax.config.update('jax_num_cpu_devices', {n}) right after `import jax`.")
    return sorted(devices, key=lambda d: d.id)


# ---------------------------------------------------------------- shardings both ways

def _jax_partition(p):
    return jsh.PartitionSpec.UNCONSTRAINED if p is sh.UNCONSTRAINED else p


def _ref_partition(p):
    return sh.UNCONSTRAINED if p is jsh.PartitionSpec.UNCONSTRAINED else p


def _spec_kwargs(spec):
    return {k: getattr(spec, k) for k in ("unreduced", "reduced") if getattr(spec, k, None)}


def jax_spec(spec):
    """jax.sharding.PartitionSpec equal to a refjax PartitionSpec."""
    return jsh.PartitionSpec(*map(_jax_partition, spec.partitions), **_spec_kwargs(spec))


def ref_spec(spec):
    """refjax PartitionSpec equal to a jax.sharding.PartitionSpec."""
    return sh.P(*map(_ref_partition, spec), **_spec_kwargs(spec))


class _DeviceMap:
    """refjax Devices <-> JAX devices, by id."""

    def __init__(self, ref_devices, jax_devices):
        self.to_jax = {d.id: j for d, j in zip(ref_devices, jax_devices)}
        self.to_ref = {j.id: d for d, j in zip(ref_devices, jax_devices)}
        self._cache = {}

    def _devices(self, table, array):
        flat = [table[d.id] for d in array.flat]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(array.shape)

    def jax_mesh(self, mesh):
        types = tuple(getattr(jsh.AxisType, t.name) for t in mesh.axis_types)
        return jsh.Mesh(self._devices(self.to_jax, mesh.devices), mesh.axis_names,
                        axis_types=types)

    def ref_mesh(self, mesh):
        types = tuple(getattr(sh.AxisType, t.name) for t in mesh.axis_types)
        return sh.Mesh(self._devices(self.to_ref, mesh.devices), mesh.axis_names, types)

    def to_jax_sharding(self, s):
        """The jax.sharding equivalent of a refjax sharding (cached)."""
        out = self._cache.get(s)
        if out is None:
            out = self._cache[s] = self._convert_to_jax(s)
        return out

    def _convert_to_jax(self, s):
        if isinstance(s, sh.SingleDeviceSharding):
            return jsh.SingleDeviceSharding(self.to_jax[s._device.id], memory_kind=s.memory_kind)
        if isinstance(s, sh.NamedSharding):
            return jsh.NamedSharding(self.jax_mesh(s.mesh), jax_spec(s.spec),
                                     memory_kind=s.memory_kind)
        if isinstance(s, jsh.Sharding):
            return s
        raise TypeError(f"the xla backend cannot lay out an array with {s!r}: expected a "
                        "refjax NamedSharding or SingleDeviceSharding")

    def to_ref_sharding(self, s):
        """The refjax equivalent of a jax.sharding of an array."""
        if isinstance(s, jsh.NamedSharding):
            return sh.NamedSharding(self.ref_mesh(s.mesh), ref_spec(s.spec),
                                    memory_kind=s.memory_kind)
        if len(s.device_set) == 1:
            return sh.SingleDeviceSharding(self.to_ref[next(iter(s.device_set)).id],
                                           memory_kind=s.memory_kind)
        raise NotImplementedError(f"the xla backend cannot express JAX's {type(s).__name__} "
                                  "as a refjax sharding")


def _sharding_tree(devmap, shardings):
    """refjax shardings (one, or a sequence with None entries) as jax.jit accepts them."""
    if shardings is None:
        return None
    if isinstance(shardings, (list, tuple)):
        return tuple(None if s is None else devmap.to_jax_sharding(s) for s in shardings)
    return devmap.to_jax_sharding(shardings)


def _hashable(shardings):
    return tuple(shardings) if isinstance(shardings, list) else shardings


# ---------------------------------------------------------------- the backend

class XlaBackend(Backend):
    """Runs primitives with jax.lax on JAX's CPU devices; buffers are jax.Arrays (float0
    buffers are NumPy arrays); `compile` evaluates a whole jaxpr inside one jax.jit."""

    name = "xla"
    install_hint = "pip install 'refjax[xla]'"

    def __init__(self, num_devices=None):
        n = num_devices or config.read("jax_num_cpu_devices")
        self._devices = sh.make_cpu_devices(n)
        self._jax_devices = jax_cpu_devices(n)
        self._devmap = _DeviceMap(self._devices, self._jax_devices)
        self._default_sharding = sh.SingleDeviceSharding(self._devices[0])
        # Uncommitted placement (mixes freely with committed arrays, as JAX's defaults do)
        # when JAX's default device is this CPU device 0; committed to it otherwise.
        self._default_target = (None if jax.devices()[0] == self._jax_devices[0]
                                else self._jax_devices[0])
        self._eager = {}
        self._compiled = collections.OrderedDict()

    def devices(self):
        return list(self._devices)

    def jax_device(self, device):
        """The jax device behind a refjax Device of this backend."""
        return self._devmap.to_jax[device.id]

    # ------------------------------------------------------------ buffers

    def put(self, value, aval, sharding=None):
        value = np.asarray(value, dtype=aval.dtype)
        if value.dtype == _FLOAT0:
            return value
        target = self._default_target if sharding is None \
            else self._devmap.to_jax_sharding(sharding)
        with _x64(value.dtype in _X64_DTYPES):
            return jax.device_put(value, target)

    def to_numpy(self, buf, aval):
        return buf if isinstance(buf, np.ndarray) else np.asarray(buf)

    def sharding_of(self, buf, aval):
        if isinstance(buf, np.ndarray):
            return self._default_sharding
        return self._devmap.to_ref_sharding(buf.sharding)

    def shards(self, buf, aval):
        if isinstance(buf, np.ndarray):
            return [Shard(self._devices[0], tuple(slice(None) for _ in buf.shape), buf)]
        by_id = {s.device.id: s for s in buf.addressable_shards}
        order = self.sharding_of(buf, aval)._device_assignment
        return [_shard(d, by_id[d.id]) for d in order]

    def block_until_ready(self, buf):
        if not isinstance(buf, np.ndarray):
            buf.block_until_ready()

    def clear_caches(self):
        self._eager.clear()
        self._compiled.clear()

    # ------------------------------------------------------------ eager execution

    def execute(self, prim, bufs, params, out_avals):
        if prim is jit_p:
            return self.compile(params["jaxpr"])(bufs)
        in_dtypes = tuple(b.dtype for b in bufs)
        try:
            key = (prim, tuple(params.items()), in_dtypes, tuple(a.dtype for a in out_avals))
            op = self._eager.get(key)
        except TypeError:  # an unhashable parameter: run uncached
            key, op = None, None
        if op is None:
            op = self._eager_op(prim, params, in_dtypes, out_avals)
            if key is not None:
                if len(self._eager) >= _MAX_CACHED:
                    self._eager.clear()
                self._eager[key] = op
        fn, x64 = op
        with _x64(x64):
            return fn(*bufs)

    def _eager_op(self, prim, params, in_dtypes, out_avals):
        """(function of the buffers, whether it needs x64): a cached jax.jit of the lowering,
        which dispatches faster than calling jax.lax eagerly; float0 bypasses JAX."""
        out_avals = list(out_avals)
        dts = set(in_dtypes) | {a.dtype for a in out_avals}
        run = lambda *xs: self.lower_eqn(prim, xs, params, out_avals)  # noqa: E731
        if _FLOAT0 in dts:
            return lambda *xs: [_as_buffer(o) for o in run(*xs)], True
        return jax.jit(run), bool(dts & _X64_DTYPES)

    # ------------------------------------------------------------ compilation

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        """`run(bufs) -> bufs` evaluating the jaxpr in one jax.jit, cached on the jaxpr's
        identity (and the shardings)."""
        key = (id(closed_jaxpr), _hashable(in_shardings), _hashable(out_shardings))
        entry = self._compiled.get(key)
        if entry is None or entry[0] is not closed_jaxpr:
            entry = (closed_jaxpr, self._build(closed_jaxpr, in_shardings, out_shardings))
            self._compiled[key] = entry
            if len(self._compiled) > _MAX_CACHED:
                self._compiled.popitem(last=False)
        else:
            self._compiled.move_to_end(key)
        return entry[1]

    def _build(self, closed, in_shardings, out_shardings):
        in_avals, out_avals = closed.in_avals, closed.out_avals
        live_in = [i for i, a in enumerate(in_avals) if a.dtype != _FLOAT0]
        live_out = [a.dtype != _FLOAT0 for a in out_avals]
        consts = [self._const_buffer(c, v.aval) for c, v in zip(closed.consts,
                                                                 closed.jaxpr.constvars)]

        def traced(const_vals, *live_args):
            args = [float0_zeros(a.shape) for a in in_avals]
            for i, x in zip(live_in, live_args):
                args[i] = x
            outs = self.interpret(closed, args, const_vals)
            return [o for o, live in zip(outs, live_out) if live]

        jitted = jax.jit(traced, **self._jit_shardings(in_shardings, out_shardings, live_in,
                                                        live_out, len(consts)))
        consts = tuple(consts)

        def run(bufs):
            with _x64():
                outs = iter(jitted(consts, *[bufs[i] for i in live_in]))
            return [next(outs) if live else float0_zeros(a.shape)
                    for a, live in zip(out_avals, live_out)]
        return run

    def _jit_shardings(self, in_shardings, out_shardings, live_in, live_out, n_consts):
        kwargs = {}
        ins = _sharding_tree(self._devmap, in_shardings)
        if ins is not None:
            per_arg = [ins[i] for i in live_in] if isinstance(ins, tuple) else [ins] * len(live_in)
            kwargs["in_shardings"] = ((None,) * n_consts, *per_arg)
        outs = _sharding_tree(self._devmap, out_shardings)
        if outs is not None:
            kwargs["out_shardings"] = ([o for o, live in zip(outs, live_out) if live]
                                       if isinstance(outs, tuple) else outs)
        return kwargs

    def _const_buffer(self, c, aval):
        if type(c) is Array and isinstance(c._backend, XlaBackend):
            return c._buf
        return self.put(np.asarray(c, dtype=aval.dtype), aval)

    # ------------------------------------------------------------ the lowering interpreter

    def interpret(self, closed, args, consts=None):
        """Evaluate a ClosedJaxpr on JAX values (inside a jax.jit trace) with the lowerings."""
        jaxpr = closed.jaxpr
        if consts is None:
            consts = [self._const_buffer(c, v.aval) for c, v in zip(closed.consts,
                                                                     jaxpr.constvars)]
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        read = lambda v: literal_value(v) if type(v) is Literal else env[v]  # noqa: E731
        for eqn in jaxpr.eqns:
            outs = self.lower_eqn(eqn.primitive, [read(v) for v in eqn.invars], eqn.params,
                                  [v.aval for v in eqn.outvars])
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    def lower_eqn(self, prim, vals, params, out_avals):
        """One primitive on JAX values, its outputs cast to out_avals' dtypes (JAX may give
        weak or wider types). float0 values never reach a rule: they carry no data."""
        if all(a.dtype == _FLOAT0 for a in out_avals):
            return [float0_zeros(a.shape) for a in out_avals]
        vals = [np.zeros(v.shape, np.bool_) if _is_float0(v) else v for v in vals]
        out = self.rule(prim)(*vals, **params)
        outs = out if prim.multiple_results else (out,)
        return [_with_dtype(o, a) for o, a in zip(outs, out_avals)]


def literal_value(lit):
    """A jaxpr Literal as a NumPy scalar of exactly its aval's dtype."""
    return np.asarray(lit.val, lit.aval.dtype)


def _with_dtype(x, aval):
    if aval.dtype == _FLOAT0:
        return float0_zeros(aval.shape)
    if x.dtype != aval.dtype:
        return lax.convert_element_type(x, aval.dtype)
    return x


def _as_buffer(x):
    return x if isinstance(x, jax.Array) or _is_float0(x) else jax.device_put(x)


def _shard(device, jax_shard):
    return Shard(device, jax_shard.index, np.asarray(jax_shard.data), jax_shard.replica_id)
