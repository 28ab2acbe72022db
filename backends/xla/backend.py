"""The xla Backend: jax.Arrays on JAX's CPU devices, a cached jax.jit per op and per jaxpr."""
import contextlib

import jax
import jax.sharding as jsh
import numpy as np
from jax import lax

from ...core import dtypes, source_info, tracebacks
from ...core import sharding as sh
from ...core.array import Array
from ...core.state import REF_PRIMITIVES, Ref
from ...core.avals import ShapedArray
from ...core.config import config, default_device_id
from ...core.errors import JaxRuntimeError
from ...core.jaxpr import ClosedJaxpr, eval_jaxpr, subjaxprs
from ...core.primitives.sharding_ops import device_put_p
from ...core.transforms.jit import jit_p
from ...core.sharding_propagation import (constraint_sharding, param_meshes, propagate_eager,
                                          propagate_jaxpr, sets_layout, single_device)
from ...core.sharding_types import is_typed, spec_of
from ...core.sharding_names import named_by_type
from ..base import Backend
from ..numpy_ref.backend import Shard
from ...core.lru import LRU
from .caches import PerJaxpr, Shared, jaxpr_key
from . import unreduced

_FLOAT0 = dtypes.float0
_X64_DTYPES = frozenset(map(np.dtype, (np.int64, np.uint64, np.float64, np.complex128)))
# Eager ops cached (a jax.jit each, which compiles per shape); structures of jaxprs whose
# program stays compiled after nothing uses it any more (see caches.Shared).
_MAX_EAGER = 1024
_RECENT_PROGRAMS = 32
_NO_SCOPE = contextlib.nullcontext()


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
    return sh.P(*map(_ref_partition, spec.partitions), **_spec_kwargs(spec))


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
        """The refjax equivalent of a jax.sharding of an array (cached)."""
        out = self._cache.get(s)
        if out is None:
            out = self._cache[s] = self._convert_to_ref(s)
        return out

    def _convert_to_ref(self, s):
        if isinstance(s, jsh.NamedSharding):
            return sh.NamedSharding(self.ref_mesh(s.mesh), ref_spec(s.spec),
                                    memory_kind=s.memory_kind)
        if len(s.device_set) == 1:
            return sh.SingleDeviceSharding(self.to_ref[next(iter(s.device_set)).id],
                                           memory_kind=s.memory_kind)
        raise NotImplementedError(f"the xla backend cannot express JAX's {type(s).__name__} "
                                  "as a refjax sharding")


def _hashable(shardings):
    return tuple(shardings) if isinstance(shardings, list) else shardings


# ---------------------------------------------------------------- the backend

def _record_stacks_natively():
    """Arrays record where they are made with jaxlib's native stack recorder (JAX's own
    Array.traceback's), when jaxlib has one and records: cheaper than the Python walk."""
    try:
        from jaxlib import _jax
        enabled, get_traceback = _jax.tracebacks_enabled(), _jax.Traceback.get_traceback
    except (ImportError, AttributeError):
        return
    if enabled:
        tracebacks.use_native(get_traceback)


class XlaBackend(Backend):
    """Runs primitives with jax.lax on JAX's CPU devices; buffers are jax.Arrays (float0
    buffers are NumPy arrays); `compile` evaluates a whole jaxpr inside one jax.jit.
    Outputs are laid out as refjax's sharding propagation rules say, like numpy_ref."""

    name = "xla"
    partial_values = True
    install_hint = "pip install 'refjax[xla]'"

    def __init__(self, num_devices=None):
        _record_stacks_natively()
        n = num_devices or config.read("jax_num_cpu_devices")
        self._devices = sh.make_cpu_devices(n)
        self._jax_devices = jax_cpu_devices(n)
        self._devmap = _DeviceMap(self._devices, self._jax_devices)
        # Uncommitted placement on device 0 (mixes freely with committed arrays, as JAX's
        # defaults do) when JAX's default device is this CPU device 0; committed otherwise.
        self._default_target = (None if jax.devices()[0] == self._jax_devices[0] else
                                self._devmap.to_jax_sharding(
                                    sh.SingleDeviceSharding(self._devices[0])))
        self._eager = LRU(_MAX_EAGER)
        self._compiled = PerJaxpr()
        self._programs = Shared(_RECENT_PROGRAMS)

    def devices(self):
        return list(self._devices)

    def jax_device(self, device):
        """The jax device behind a refjax Device of this backend."""
        return self._devmap.to_jax[device.id]

    def jax_sharding(self, sharding):
        """The jax.sharding equivalent of a refjax sharding (None: the default device)."""
        return self._devmap.to_jax_sharding(sharding or self.default_sharding())

    def jax_default_device(self):
        """JAX's default device set to refjax's (jax.default_device) while JAX places
        uncommitted values and runs computations on them; nothing to do on device 0."""
        return _jax_default_device(self._jax_default())

    def _jax_default(self):
        """The JAX device of refjax's default device; None for device 0 (JAX's own)."""
        i = default_device_id()
        return self._jax_devices[i] if i else None

    def _put_default(self, value):
        """value on the default device, uncommitted (as JAX's device_put without a device)."""
        device = self._jax_default()
        if device is None:
            return jax.device_put(value, self._default_target)
        with jax.default_device(device):
            return jax.device_put(value)

    # ------------------------------------------------------------ buffers

    def put(self, value, aval, sharding=None):
        # A private copy: JAX on CPU may alias NumPy memory (even with may_alias=False), and
        # a later in-place write by the caller must not change an immutable Array.
        value = np.array(value, dtype=aval.dtype)
        if value.dtype == _FLOAT0:
            return _read_only(value)
        with _x64(value.dtype in _X64_DTYPES):
            if sharding is None:
                return self._put_default(value)
            return jax.device_put(value, self.jax_sharding(sharding))

    def to_numpy(self, buf, aval):
        if isinstance(buf, np.ndarray):
            return _read_only(buf)
        if buf.size == 0:
            # XLA on CPU leaves every shard of a sharded zero-size jit output at the global
            # shape, so np.asarray fails to assemble it; there are no values to fetch anyway.
            return _read_only(np.zeros(buf.shape, buf.dtype))
        return np.asarray(buf)

    def committed(self, buf):
        return _committed(buf)

    def delete(self, buf):
        if not isinstance(buf, np.ndarray):
            buf.delete()

    def is_ready(self, buf):
        return isinstance(buf, np.ndarray) or buf.is_ready()

    def sharding_of(self, buf, aval=None):
        if isinstance(buf, np.ndarray):
            return self.default_sharding()
        return named_by_type(self._devmap.to_ref_sharding(buf.sharding), aval)

    def shards(self, buf, aval):
        if isinstance(buf, np.ndarray):
            return [Shard(self.default_sharding()._device, tuple(slice(None) for _ in buf.shape), buf)]
        by_id = {s.device.id: s for s in buf.addressable_shards}
        order = self.sharding_of(buf, aval)._device_assignment
        if unreduced.unreduced_axes(buf.sharding):  # no index: JAX refuses to give one
            return [Shard(d, None, np.asarray(by_id[d.id].data), None) for d in order]
        return [_shard(d, by_id[d.id]) for d in order]

    def block_until_ready(self, buf):
        if not isinstance(buf, np.ndarray):  # float0 buffers (NumPy) run nothing async
            buf.block_until_ready()

    def effects_barrier(self):
        jax.effects_barrier()  # XLA runs unordered callbacks on its own threads

    def clear_caches(self):
        self._eager.clear()
        self._compiled.clear()
        self._programs.clear()

    def on_default_device(self, bufs):
        """Whether every buffer is uncommitted or on the default device (then layouts need
        no rules)."""
        if not any([_committed(b) for b in bufs]):
            return True
        default = self.jax_sharding(None)
        return all(not _committed(b) or b.sharding == default for b in bufs)

    def placement(self, buf):
        """What a buffer asks of a computation's layout: its sharding if committed; None (the
        default device) if not, wherever it is, as JAX's uncommitted arrays."""
        return self.sharding_of(buf) if _committed(buf) else None

    # ------------------------------------------------------------ eager execution

    def execute(self, prim, bufs, params, out_avals):
        if unreduced.involved(bufs, out_avals, prim):
            return unreduced.execute(self, prim, bufs, params, out_avals)
        if prim in REF_PRIMITIVES:  # a jax.jit cannot return JAX's references: run as is
            return self.lower_eqn(prim, bufs, params, out_avals)
        inner = prim.call_jaxpr(params)
        if inner is not None:  # call-like primitives run through `compile` even when eager
            return self.compile(inner)(bufs)
        target = constraint_sharding(prim, params)
        if target is not None and params.get("auto"):  # a reshard to Auto axes: named
            target = self._eager_layout(prim, bufs, params, out_avals)[0]
        if target is not None:  # eagerly, a move (between any devices)
            return self._constrained(prim, bufs[0], target)
        layout = None
        if prim.layout_param is not None or any([_committed(b) for b in bufs]) \
                and not self.on_default_device(bufs) or any(map(is_typed, out_avals)):
            layout = self._eager_layout(prim, bufs, params, out_avals)
        in_dtypes = tuple([b.dtype for b in bufs])
        try:  # out dtypes follow from the primitive, its params and the input dtypes
            # the output count too: unstack's depends on the operand's shape
            key = (prim, tuple(params.items()), in_dtypes, layout, len(out_avals))
            op = self._eager.get(key)
        except TypeError:  # an unhashable parameter: run uncached
            key, op = None, None
        if op is None:
            op = self._eager_op(prim, params, in_dtypes, out_avals, layout)
            if key is not None:
                self._eager.put(key, op)
        outs = self._run_eager(op, prim, bufs, params, out_avals)
        return outs if layout is None else self.place(outs, layout)

    def _run_eager(self, op, prim, bufs, params, out_avals):
        fn, x64 = op
        if fn is None:  # float0 involved: no JAX dispatch, shapes from this call's avals
            return [self._float0_path_buffer(o) for o in
                    self.lower_eqn(prim, bufs, params, out_avals)]
        with self.jax_default_device():
            if not x64:
                return fn(*bufs)
            with _x64():
                return fn(*bufs)

    def _constrained(self, prim, buf, target):
        """A constraint run eagerly: a transfer; but an empty array constrained is, as in JAX,
        a program's result, whose pieces XLA leaves whole."""
        if prim is device_put_p or buf.size or isinstance(buf, np.ndarray):
            return self.place([buf], (target,))
        return [jax.jit(lambda x: x, out_shardings=self.jax_sharding(target))(buf)]

    def place(self, bufs, layout):
        """Buffers moved to the layout's shardings where JAX chose another one."""
        return [b if s is None or isinstance(b, np.ndarray) else self._placed(b, s)
                for b, s in zip(bufs, layout)]

    def _placed(self, buf, sharding):
        target = self.jax_sharding(sharding)
        return buf if buf.sharding == target else jax.device_put(buf, target)

    def computation_target(self, layout, shardings=()):
        """Where a computation laid out as `layout` (whose jaxpr also uses `shardings`) runs:
        a replicated sharding on its mesh, or its single device (its committed inputs agree
        with it: eval_primitive and jit refuse them otherwise, as JAX)."""
        named = [s for s in (*layout, *shardings) if isinstance(s, sh.NamedSharding)]
        if named:
            return sh.NamedSharding(named[0].mesh, sh.P())
        return single_device(layout) or self.default_sharding()

    def constants_to(self, consts, target, committed):
        """A jaxpr's closed-over constants where its computation runs (JAX moves them: they
        decide nothing): to `target` when an input or the jaxpr commits the results, else,
        uncommitted, to the default device."""
        jax_target = self.jax_sharding(target)
        # (a reference stays where it is, as JAX's: its writes must reach it there)
        return [c if isinstance(c, (np.ndarray, jax.Ref)) or not _committed(c)
                or c.sharding == jax_target
                else jax.device_put(c, jax_target) if committed else self._put_default(np.asarray(c))
                for c in consts]

    def _eager_layout(self, prim, bufs, params, out_avals):
        """Output shardings by refjax's propagation rules (numpy_ref's eager layouts)."""
        in_shardings = list(map(self.placement, bufs))
        in_avals = [ShapedArray(b.shape, b.dtype) for b in bufs]
        out = propagate_eager(prim, in_shardings, in_avals, out_avals, params)
        default = self.default_sharding()
        return tuple(_by_type(s, a) or default for s, a in zip(out, out_avals))

    def _eager_op(self, prim, params, in_dtypes, out_avals, layout):
        """(jax.jit of the lowering, whether it needs x64), or (None, True) when float0 is
        involved. Jitting each op dispatches faster than calling jax.lax eagerly (measured:
        about 6 us against 13-18 us for a small add). Only out_avals' dtypes are used, which
        follow from the key (prim, params, input dtypes)."""
        out_avals = list(out_avals)
        dts = set(in_dtypes) | {a.dtype for a in out_avals}
        if _FLOAT0 in dts:
            return None, True
        run = lambda *xs: self.lower_eqn(prim, xs, params, out_avals)  # noqa: E731
        return jax.jit(run, **self.out_shardings_kwargs(layout)), bool(dts & _X64_DTYPES)

    def out_shardings_kwargs(self, layout):
        """jax.jit's out_shardings for a layout on one mesh (the partitioner then produces it
        directly); otherwise none: `place` moves what JAX put elsewhere."""
        if layout is None or not all(isinstance(s, sh.NamedSharding) for s in layout):
            return {}
        return {"out_shardings": [self.jax_sharding(s) for s in layout]}

    def _float0_path_buffer(self, x):
        if _is_float0(x) or isinstance(x, jax.Array):
            return x
        with _x64():
            return self._put_default(x)

    # ------------------------------------------------------------ compilation

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        """`run(bufs) -> bufs` evaluating the jaxpr in one jax.jit. Cached for as long as the
        ClosedJaxpr lives; the jax.jit itself is shared by structurally equal jaxprs
        (transformations stage new but equal jaxprs on every call), whose constants are its
        arguments."""
        if self._in_program(closed_jaxpr):
            return self._compiled.get_or_make(closed_jaxpr, "unreduced", lambda: (
                unreduced.whole_program(self, closed_jaxpr, self._scope(closed_jaxpr))))

        def make():
            program = self._program(closed_jaxpr, in_shardings)
            return _Compiled(self, program, closed_jaxpr, out_shardings)
        detail = (_hashable(in_shardings), _hashable(out_shardings))
        return self._compiled.get_or_make(closed_jaxpr, detail, make)

    def fast_runner(self, closed_jaxpr):
        """The compiled program called directly, for arguments all uncommitted or on the
        default device and a jaxpr that sets no layout and has no float0 values (the default
        device is read once here: jit's fast path keys its runners on the config's version
        and is off under scoped overrides)."""
        if self._in_program(closed_jaxpr):
            return None
        entry = self.compile(closed_jaxpr)
        program = entry.program
        if program.constrained or len(program.live_in) < len(closed_jaxpr.in_avals) \
                or not all(program.live_out):
            return None
        jitted, consts = program.variant(None), entry.consts
        device = self._jax_default()
        if program.x64 or device is not None:
            plain, x64 = jitted, program.x64

            def jitted(*args):
                with _jax_default_device(device), _x64(x64):
                    return plain(*args)
        return self._runner(jitted, consts, closed_jaxpr.out_avals)

    def _runner(self, jitted, consts, out_avals):
        default = self.jax_sharding(None)

        def buffers(args):
            # loops, not comprehensions: this is the whole per-call cost on top of JAX's
            bufs = []
            for a in args:
                if type(a) is not Array or a._backend is not self:
                    return None
                b = a._buf
                if b.committed and b.sharding != default:
                    return None
                bufs.append(b)
            return bufs

        if len(out_avals) == 1:
            out_aval, = out_avals

            def run_one(args):
                bufs = buffers(args)
                return None if bufs is None else [Array(out_aval, jitted(consts, *bufs)[0], self)]
            return run_one

        def run(args):
            bufs = buffers(args)
            if bufs is None:
                return None
            return [Array(a, o, self) for a, o in zip(out_avals, jitted(consts, *bufs))]
        return run

    def jax_lowered(self, closed_jaxpr, arg_shardings, as_user_function, out_shardings):
        """JAX's Lowered of the program running this jaxpr, for jax.stages' texts and
        analyses: a jax.jit (with the options it gives) of the function
        `as_user_function(flat, flat_args)` gives, with the user's name and trees (so JAX
        names the module, arguments, results and ops as for the user's function), its
        constants embedded, lowered for arguments laid out by `arg_shardings` (one per input;
        None: uncommitted), its results by `out_shardings` (one per output; None: left to
        XLA's partitioner, as JAX leaves them, or typed on Explicit axes). None for a program
        run op by op or with float0 values (which JAX's programs do not carry)."""
        program = self._program(closed_jaxpr, None)
        partial = unreduced.in_program(closed_jaxpr.jaxpr)
        if len(program.live_in) < len(arg_shardings) or not all(program.live_out):
            return None
        if program.typed and not partial:
            out_shardings = [given or (typed if isinstance(typed, sh.NamedSharding) else None)
                             for given, typed in zip(out_shardings, program.layout_of(
                                 tuple(arg_shardings)))]
        structs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=self._stage_sharding(s))
                   for a, s in zip(closed_jaxpr.in_avals, arg_shardings)]
        consts = [self.const_buffer(c, v.aval)
                  for c, v in zip(closed_jaxpr.consts, closed_jaxpr.jaxpr.constvars)]
        fun, (args, kwargs), out_tree, options = as_user_function(program.flat(consts), structs)
        if any(s is not None for s in out_shardings):
            options["out_shardings"] = out_tree(list(map(self._stage_sharding, out_shardings)))
        jitted, scope = jax.jit(fun, **options), self._scope(closed_jaxpr)
        if partial:  # on JAX's Explicit mesh, as its runner (None where JAX refuses it)
            return unreduced.lowered(jitted, unreduced.jax_mesh(self, arg_shardings), scope,
                                     args, kwargs)
        with scope():
            return jitted.lower(*args, **kwargs)

    def _in_program(self, closed_jaxpr):
        """unreduced.in_program, once per jaxpr (it walks the loops' and calls' jaxprs too)."""
        return self._compiled.get_or_make(closed_jaxpr, "in_program", lambda: (
            unreduced.in_program(closed_jaxpr.jaxpr)))

    def _scope(self, closed_jaxpr):
        """The JAX configuration a program runs under: x64 where it needs it, refjax's default
        device as JAX's."""
        x64 = _uses_x64(closed_jaxpr.jaxpr)
        return lambda: _scoped(self.jax_default_device(), _x64(x64))

    def jax_compile(self, lowered, compiler_options):
        """JAX's Compiled of a jax_lowered program, with XLA's `compiler_options`; XLA's
        refusal of one as refjax's JaxRuntimeError (jax.errors'), with XLA's message."""
        try:
            return lowered.compile(compiler_options)
        except jax.errors.JaxRuntimeError as e:
            raise JaxRuntimeError(str(e)) from None

    def _stage_sharding(self, sharding):
        return None if sharding is None else self.jax_sharding(sharding)

    def _program(self, closed, in_shardings):
        key = (jaxpr_key(closed.jaxpr), _hashable(in_shardings))
        return self._programs.get_or_make(key, lambda: _Program(self, closed, in_shardings))

    def const_buffer(self, c, aval):
        """A ClosedJaxpr constant as a buffer of this backend."""
        if type(c) is Array and isinstance(c._backend, XlaBackend) or type(c) is Ref:
            return c._buf
        return self.put(c, aval)

    # ------------------------------------------------------------ the lowering interpreter

    def interpret(self, closed, args, consts=None):
        """Evaluate a ClosedJaxpr on JAX values (inside a jax.jit trace) with the lowerings."""
        jaxpr = closed.jaxpr
        if consts is None:
            consts = [self.const_buffer(c, v.aval) for c, v in zip(closed.consts,
                                                                    jaxpr.constvars)]
        return eval_jaxpr(jaxpr, consts, *args, read_literal=_literal_array,
                          apply=self._lower_scoped)

    def _lower_scoped(self, eqn, ins):
        with _named_scopes(eqn):
            return self.lower_eqn(eqn.primitive, ins, eqn.params, [v.aval for v in eqn.outvars])

    def lower_eqn(self, prim, vals, params, out_avals):
        """One primitive on JAX values, its outputs cast to out_avals' dtypes (JAX may give
        weak or wider types). float0 values never reach a rule: they carry no data."""
        if out_avals and all(a.dtype == _FLOAT0 for a in out_avals):
            return [float0_zeros(a.shape) for a in out_avals]
        vals = [np.zeros(v.shape, np.bool_) if _is_float0(v) else v for v in vals]
        out = self.rule(prim)(*vals, **params)
        outs = out if prim.multiple_results else (out,)
        return [_with_dtype(o, a) for o, a in zip(outs, out_avals)]


def _by_type(sharding, aval):
    """A result typed on Explicit axes (an out_sharding= param) made from values on one
    device: laid out as its type over the context mesh, as JAX lays it out."""
    mesh = sh.get_current_mesh()
    if isinstance(sharding, sh.NamedSharding) or mesh is None or not is_typed(aval):
        return sharding
    return sh.NamedSharding(mesh, sh.P(*spec_of(aval)))


class _Program:
    """The jax.jit of a jaxpr's structure: one per output layout, constants as arguments,
    float0 values kept outside JAX."""

    def __init__(self, backend, closed, in_shardings):
        # the jaxpr without its constants (arguments of the program): holding the ClosedJaxpr
        # itself would keep alive the jaxpr that the compiled cache is weakly keyed on
        self.backend, self.closed = backend, ClosedJaxpr(closed.jaxpr, ())
        self.live_in = [i for i, a in enumerate(closed.in_avals) if a.dtype != _FLOAT0]
        self.live_out = [a.dtype != _FLOAT0 for a in closed.out_avals]
        self.in_shardings = _per_input(backend, in_shardings, self.live_in)
        self.constrained = sets_layout(closed.jaxpr)
        self.typed = any(map(is_typed, closed.out_avals))  # results laid out by their types
        self.meshes = tuple(sh.NamedSharding(m, sh.P()) for m in param_meshes(closed.jaxpr))
        self.x64 = _uses_x64(closed.jaxpr)
        self._layouts, self._variants = {}, {}

    def __call__(self, consts, bufs, layout):
        if layout is not None:
            committed = self.constrained or self.typed or any([_committed(b) for b in bufs])
            consts = self.backend.constants_to(
                consts, self.backend.computation_target(layout, self.meshes), committed)
        jitted = self.variant(layout)
        with self.backend.jax_default_device(), _x64(self.x64):
            outs = iter(jitted(consts, *[bufs[i] for i in self.live_in]))
        outs = [next(outs) if live else float0_zeros(a.shape)
                for a, live in zip(self.closed.out_avals, self.live_out)]
        return outs if layout is None else self.backend.place(outs, layout)

    def variant(self, layout):
        """The jax.jit for one output layout, made on first use."""
        jitted = self._variants.get(layout)
        if jitted is None:
            jitted = self._variants[layout] = self._jit(layout)
        return jitted

    def layout(self, bufs, consts=()):
        """Output shardings by the propagation rules (numpy_ref's layouts); None when every
        input and constant is on the default device and nothing in the jaxpr constrains a
        layout (a constant laid out on a mesh would leave JAX free to pick any layout)."""
        if not (self.constrained or self.typed) and \
                self.backend.on_default_device((*bufs, *consts)):
            return None
        return self.layout_of(tuple(map(self.backend.placement, bufs)))

    def layout_of(self, in_shardings):
        """Output shardings by the propagation rules for inputs laid out so (None: the
        default device)."""
        default = self.backend.default_sharding()
        key = (default, in_shardings, sh.get_current_mesh() if self.typed else None)
        layout = self._layouts.get(key)
        if layout is None:
            out = propagate_jaxpr(self.closed, list(in_shardings))
            layout = self._layouts[key] = tuple(
                _by_type(s, a) or default for s, a in zip(out, self.closed.out_avals))
        return layout

    def _jit(self, layout):
        """The jax.jit of `(consts, *live arguments)` for one output layout."""
        kwargs = self._out_kwargs(layout)
        if self.in_shardings is not None:
            kwargs["in_shardings"] = ((None,) * len(self.closed.jaxpr.constvars),
                                      *self.in_shardings)
        return jax.jit(_body(self.backend, self.closed, self.live_in, self.live_out), **kwargs)

    def flat(self, consts):
        """The program as a function of all its inputs, `consts` closed over (JAX embeds
        them in its program as it does a function's constants)."""
        body = _body(self.backend, self.closed, self.live_in, self.live_out)
        return lambda *args: body(consts, *[args[i] for i in self.live_in])

    def _out_kwargs(self, layout):
        """jax.jit's out_shardings for an output layout of the live outputs."""
        if layout is None:
            return {}
        return self.backend.out_shardings_kwargs(
            [s for s, live in zip(layout, self.live_out) if live])


def _body(backend, closed, live_in, live_out):
    """The function a program's jax.jit traces: the jaxpr on `(consts, *live arguments)`,
    float0 values made outside JAX."""
    def traced(consts, *live_args):
        args = [float0_zeros(a.shape) for a in closed.in_avals]
        for i, x in zip(live_in, live_args):
            args[i] = x
        outs = backend.interpret(closed, args, consts)
        return [o for o, live in zip(outs, live_out) if live]
    return traced


class _Compiled:
    """A ClosedJaxpr ready to run: its program and its constants as buffers."""

    def __init__(self, backend, program, closed, out_shardings):
        self.program = program  # not `closed`: this entry lives as long as `closed` does
        self.consts = tuple(backend.const_buffer(c, v.aval)
                            for c, v in zip(closed.consts, closed.jaxpr.constvars))
        self.fixed_layout = None if out_shardings is None else \
            _per_output(out_shardings, len(closed.out_avals))

    def __call__(self, bufs):
        layout = self.fixed_layout or self.program.layout(bufs, self.consts)
        return self.program(self.consts, bufs, layout)


def _per_input(backend, shardings, live_in):
    """jax.jit in_shardings for the live inputs from refjax ones (one, or one per input)."""
    if shardings is None:
        return None
    if not isinstance(shardings, (list, tuple)):
        return [backend.jax_sharding(shardings)] * len(live_in)
    return [None if shardings[i] is None else backend.jax_sharding(shardings[i])
            for i in live_in]


def _per_output(shardings, n):
    if not isinstance(shardings, (list, tuple)):
        return (shardings,) * n
    return tuple(shardings)


def _uses_x64(jaxpr):
    """Whether a 64-bit value appears anywhere in the jaxpr (nested jaxprs included), a
    literal output too: a body that only returns a float64 constant still needs x64."""
    binders = list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars) + [
        v for eqn in jaxpr.eqns for v in list(eqn.invars) + list(eqn.outvars)]
    return any(v.aval.dtype in _X64_DTYPES for v in binders) or any(
        _uses_x64(inner) for eqn in jaxpr.eqns for inner in subjaxprs(eqn.params.values()))


@contextlib.contextmanager
def _scoped(*contexts):
    """All these contexts entered, in order."""
    with contextlib.ExitStack() as stack:
        for c in contexts:
            stack.enter_context(c)
        yield


def _named_scopes(eqn):
    """The names an equation was staged in (relative to its jaxpr, as JAX's), opened around
    its lowering as JAX's named scopes, a transformation wrapping the name after it as JAX
    prints it (`jvp(outer)`, `transpose(jvp())`): JAX names its ops as it names the user's
    (`jit(f)/transpose(jvp())/while/body/...`), inner jaxprs' names nested in their
    equation's; a nested jit's ops under `jit(name)` (`jvp(jit(g))/cos`)."""
    info = eqn.source_info
    stack = () if info is None else info.name_stack
    if eqn.primitive is jit_p:
        stack += (f"jit({eqn.params['name']})",)
    names = source_info.render(stack)
    if not names:
        return _NO_SCOPE
    stack = contextlib.ExitStack()
    for name in names:
        stack.enter_context(jax.named_scope(name))
    return stack


def _jax_default_device(device):
    """JAX's default device set to `device` in a block (None: left as it is)."""
    return _NO_SCOPE if device is None else jax.default_device(device)


def _literal_array(lit):
    """A jaxpr Literal as a NumPy scalar of exactly its aval's dtype."""
    return np.asarray(lit.val, lit.aval.dtype)


def _with_dtype(x, aval):
    if aval.dtype == _FLOAT0:
        return float0_zeros(aval.shape)
    if x.dtype != aval.dtype:
        return lax.convert_element_type(x, aval.dtype)
    return x


def _read_only(value):
    value.flags.writeable = False
    return value


def _committed(buf):
    return getattr(buf, "committed", False)


def _shard(device, jax_shard):
    return Shard(device, jax_shard.index, np.asarray(jax_shard.data), jax_shard.replica_id)
