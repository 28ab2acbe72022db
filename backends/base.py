"""The Backend interface, the rule registry (multipledispatch), set_backend and discovery."""
import contextlib
import contextvars
import threading
from importlib import metadata

import numpy as np
from multipledispatch import Dispatcher

from ..core import ref_weak, runtime
from ..core import sharding as sh
from ..core.sharding import device_sets
from ..core import trace as trace_mod
from ..core.array import Array
from ..core.state import Ref, check_no_refs, is_ref_type
from ..core.config import check_transfer, config, default_device_id
from ..core.primitive import source_site
from ..core.primitives.debugging import inspect_compiled, inspect_eager, inspects
from ..core.primitives.parallel import AXIS_ENV
from ..core.primitives.sharding_ops import sharding_constraint_p
from ..core.sharding_types import is_typed, spec_of, type_outputs, typed_aval
from ..core.sharding_unreduced import check_reduced_values
from ..core.transforms import jit_devices
from ..core.transforms.jit import jit_p
from ..core.transforms.stages import arg_sharding
from ..core import dtypes

# rule(backend, primitive) -> the function computing the primitive on that backend's values.
_rules = Dispatcher("primitive_rule")


class Backend:
    """What every backend implements. Values (`buf`) are opaque to the rest of refjax."""

    name = "base"
    install_hint = ""
    # whether eager values of unreduced type hold each device's partial value (else refused)
    partial_values = False

    def devices(self):
        raise NotImplementedError(f"backend {self.name} has no devices()")

    def put(self, value, aval, sharding=None):
        """A buffer holding `value` (array-like, converted to aval.dtype) laid out by sharding.
        The buffer must not share memory with `value`, which the caller may change later:
        Arrays are immutable."""
        raise NotImplementedError(f"backend {self.name} has no put()")

    def to_numpy(self, buf, aval):
        raise NotImplementedError(f"backend {self.name} has no to_numpy()")

    def committed(self, buf):
        """Whether the buffer's placement was asked for (see Array.committed); a backend
        that does not track it places everything where it is asked to, uncommitted."""
        return False

    def is_ready(self, buf):
        """Whether the buffer's value is computed; a synchronous backend's always is."""
        return True

    def delete(self, buf):
        """Free the buffer's memory now (Array.delete); dropping the last reference, which
        the Array does, is all a backend holding plain host memory needs."""

    def shards(self, buf, aval):
        """[Shard(device, index, data)] of a buffer."""
        raise NotImplementedError(f"backend {self.name} has no shards()")

    def sharding_of(self, buf, aval):
        raise NotImplementedError(f"backend {self.name} has no sharding_of()")

    def execute(self, prim, bufs, params, out_avals):
        """Run one primitive eagerly on buffers; returns a buffer or a list of buffers."""
        raise NotImplementedError(f"backend {self.name} has no execute()")

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        """A callable from input buffers to output buffers evaluating the jaxpr."""
        raise NotImplementedError(f"backend {self.name} has no compile()")

    def fast_runner(self, closed_jaxpr):
        """None, or `run(args) -> [Array]` evaluating the jaxpr on argument Arrays exactly as
        binding jit_p would, returning None for arguments it declines (jit's steady-state
        path; a backend without one always takes the full path)."""
        return None

    def default_sharding(self):
        """The SingleDeviceSharding of the default device (jax_default_device: device 0
        unless set), where new arrays and computations on uncommitted ones are placed."""
        i = default_device_id()
        try:
            return self._default_shardings[i]
        except AttributeError:
            self._default_shardings = [sh.SingleDeviceSharding(d) for d in self.devices()]
            return self.default_sharding()
        except IndexError:
            raise ValueError(f"the default device (jax_default_device) is device {i}, but the "
                             f"{self.name} backend has {len(self._default_shardings)} "
                             "devices") from None

    def block_until_ready(self, buf):
        pass

    def clear_caches(self):
        pass

    def effects_barrier(self):
        """Wait until every callback (debug.print, debug.callback) issued so far has run."""

    def rule(self, prim):
        """This backend's implementation of `prim`; NotImplementedError names both if absent."""
        cache = self.__dict__.setdefault("_rule_cache", {})
        fn = cache.get(prim)
        if fn is None:
            try:
                fn = _rules.dispatch(type(self), type(prim))
            except NotImplementedError:
                fn = None
            if fn is None:
                fn = self._lowered_rule(prim)
            cache[prim] = fn
        return fn

    def _lowered_rule(self, prim):
        """A primitive defined outside refjax runs, under jit, the jaxpr its lowering
        (refjax.interpreters.mlir.register_lowering) traces to, as this backend's jit."""
        if prim.lowering is None:
            if prim.impl is not None:  # defined outside refjax: JAX's words
                raise NotImplementedError(f"MLIR translation rule for primitive "
                                          f"'{prim.name}' not found for platform cpu")
            raise NotImplementedError(
                f"primitive '{prim.name}' has no rule on the {self.name} backend")
        call = self.rule(jit_p)

        def lowered(*values, **params):
            outs = call(*values, jaxpr=prim.lowering(values, params), name=prim.name)
            return outs if prim.multiple_results else outs[0]
        return lowered


# (backend class, primitive) -> "path:line" where the rule was registered (spec/PRIMITIVES.md).
rule_sites = {}


def register_rule(backend_cls, *prims):
    """Decorator: register `fn(*values, **params)` as backend_cls's rule for prims."""
    def register(fn):
        site = source_site()
        for prim in prims:
            _rules.add((backend_cls, type(prim)), fn)
            rule_sites[backend_cls, prim] = site
        return fn
    return register


# ---------------------------------------------------------------- registry and selection

_factories = {}
_instances = {}
_current = contextvars.ContextVar("refjax_backend", default=None)
_default_name = ["numpy_ref"]


def register_backend(name, factory):
    """Make a backend available under `name`; factory() builds it on first use."""
    _factories[name] = factory


def _discover():
    try:
        eps = metadata.entry_points(group="refjax.backends")
    except Exception:  # pragma: no cover - broken metadata must not break import
        return
    for ep in eps:
        if ep.name not in _factories:
            _factories[ep.name] = ep.load


_build_lock = threading.Lock()


def get_backend(name=None):
    """The backend object called `name` (default: the current one). Built once, even when
    several threads ask at the same time (a second instance would orphan the first's arrays)."""
    name = name or current_backend_name()
    backend = _instances.get(name)
    if backend is None:
        with _build_lock:
            backend = _instances.get(name)
            if backend is None:
                backend = _instances[name] = _build(name)
    return backend


def _build(name):
    if name not in _factories:
        _discover()
    if name not in _factories:
        raise ValueError(f"Unknown backend {name!r}; available: {sorted(_factories)}")
    factory = _factories[name]
    obj = factory()
    return obj() if isinstance(obj, type) else obj


def current_backend_name():
    return _current.get() or _default_name[0]


def current_backend():
    return get_backend(_current.get() or _default_name[0])


def set_backend(name):
    """Select the backend used from now on ('numpy_ref' or 'xla')."""
    get_backend(name)  # raises now if it cannot be built
    _default_name[0] = name


def effects_barrier():
    """Wait until the effects (debug prints, callbacks) of every computation so far have run,
    as jax.effects_barrier(); the NumPy oracle runs them synchronously."""
    for built in list(_instances.values()):
        built.effects_barrier()


def default_backend():
    """The name of the current backend's platform, as jax.default_backend() ('cpu')."""
    return "cpu"


@contextlib.contextmanager
def backend(name):
    """`with refjax.backend("xla"):` runs the block on that backend."""
    get_backend(name)
    token = _current.set(name)
    try:
        yield get_backend(name)
    finally:
        _current.reset(token)


def clear_backend_caches():
    for b in list(_instances.values()):
        b.clear_caches()


def _check_device_count(name, value):
    """jax_num_cpu_devices fixes the devices every Array lives on: as in JAX, it can change
    only before the backends start (RuntimeError afterwards; the same value is a no-op)."""
    if name != "jax_num_cpu_devices" or not _instances or value == config.read(name):
        return
    raise RuntimeError(
        "jax_num_cpu_devices config should be updated before backends are initialized i.e. "
        "before any JAX operation is executed. You should initialize this config immediately "
        f"after `import refjax` (it is {config.read(name)} and the backends "
        f"{sorted(_instances)} already hold arrays on that many devices; asked: {value}).")


config.on_validate(_check_device_count)


# ---------------------------------------------------------------- eager execution

def to_buffer(backend, x, aval):
    """The backend buffer of an argument: Arrays of this backend pass through."""
    if type(x) is Array or type(x) is Ref:
        if x._backend is backend:
            return x._live_buf() if type(x) is Array else x._buf
        raise ValueError(
            f"an Array on the {x._backend.name} backend was passed to an operation running on "
            f"the {backend.name} backend; move it explicitly with refjax.device_put(x) first")
    if isinstance(x, trace_mod.Tracer):
        raise trace_mod_leak_error(x)
    guard_transfer("host_to_device", aval, None, backend)
    return backend.put(x, aval)


def guard_transfer(direction, aval, sharding, backend):
    """The transfer guard on a transfer of `aval` to `sharding` (None: the default device).
    A constant made while tracing is none: JAX embeds it in the program."""
    if trace_mod.current_trace() is trace_mod.EVAL_TRACE:
        check_transfer(direction, lambda: f"aval={aval!r}, dst_sharding="
                       f"{sharding or backend.default_sharding()}")


def trace_mod_leak_error(x):
    from ..core.errors import UnexpectedTracerError
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer {x!r}: a value from a transformation that has "
        "already finished (or an inner one) was used outside of it. Return it from the "
        "transformed function instead of storing it in a side channel.")


def eval_primitive(prim, args, params):
    """EvalTrace's hook: abstract-eval the primitive, then run the backend's rule. Under a
    context mesh (set_mesh) the computation runs on the mesh, as JAX's: committed arguments
    must be on its devices, and results not laid out otherwise are replicated over it."""
    backend = current_backend()
    avals = [trace_mod.get_aval(x) for x in args]
    check_no_refs(prim, avals, params)
    out = prim.abstract_eval(*avals, **params)
    _check_devices(prim, args, params)
    if prim is jit_p and inspects(params["jaxpr"]):  # JAX calls back as it compiles
        inspect_compiled(params["jaxpr"], list(map(arg_sharding, args)))
    inspect_eager(prim, params, list(map(arg_sharding, args)))
    mesh = sh.get_current_mesh()
    bufs = [to_buffer(backend, x, a) for x, a in zip(args, avals)]
    outs = out if prim.multiple_results else [out]
    typed_outs = _eager_types(prim, args, avals, outs, params)
    weak_refs = ref_weak.before_eager(args, params)
    results = backend.execute(prim, bufs, params, typed_outs)
    ref_weak.after_eager(prim, params, args, avals, weak_refs)
    arrays = [(Ref if is_ref_type(a) else Array)(a, b, backend) for a, b in zip(outs, results)]
    if mesh is not None:
        arrays = [_on_mesh(x, mesh, t) for x, t in zip(arrays, typed_outs)]
    return arrays if prim.multiple_results else arrays[0]


def _eager_types(prim, args, avals, outs, params):
    """The outputs' sharding types (Explicit mesh axes), as tracing computes them: JAX types
    eager operations too, refusing what it refuses under jit. Layouts follow them; the
    Arrays' own avals stay untyped (their layout is their type). Under a named axis (an
    eager shard_map's body, whose mesh axes are Manual) values are not typed."""
    if AXIS_ENV.frames:
        return outs
    typed = [typed_aval(x) if type(x) is Array else a for x, a in zip(args, avals)]
    outs = type_outputs(prim, typed, outs, params)
    return outs if current_backend().partial_values else check_reduced_values(prim, outs)


def _check_devices(prim, args, params):
    """JAX's refusal of committed arguments on different device assignments (or off the
    context mesh's): nothing moves them, so the computation would have no devices to run on.
    Arguments are named as JAX's dispatch of a primitive names them (`args[0]`)."""
    # references are committed where they are, as JAX's
    committed = [i for i, x in enumerate(args) if type(x) is Ref or type(x) is Array
                 and x.committed]
    if prim is jit_p:
        used = jit_devices.used_inputs(params["jaxpr"])
        committed = [i for i in committed if used[i]]
    elif len(committed) < 2 and prim is not sharding_constraint_p \
            and sh.get_current_mesh() is None:
        return  # (the common eager op: nothing to compare its one assignment with)
    name, arg_names, inner = _dispatch_names(prim, params, len(args))
    places = [device_sets.Place(_assignment(args[i]), arg_names[i], typed_aval(args[i]))
              for i in committed]
    device_sets.check(name, [*device_sets.context_places(), *places, *inner], named=False)


def _assignment(x):
    return x._backend.sharding_of(x._buf, x.aval)._device_assignment


def _dispatch_names(prim, params, n):
    """How JAX's eager dispatch names a primitive, its arguments and the shardings it asks
    for: a jit by its function; a sharding constraint (the eager with_sharding_constraint)
    as a jit of `_identity_fn(x)` with an explicit output sharding."""
    if prim is jit_p:
        return params["name"], [f"args[{i}]" for i in range(n)], \
            jit_devices.inner_places(params["jaxpr"])
    if prim is sharding_constraint_p and (device_sets.is_reshard(params["sharding"])
                                          or params.get("auto")):
        # JAX's eager reshard: a jit of `reshard` under its target's mesh as context mesh
        return "reshard", ["args[0]"], [device_sets.sharding_place(
            params["sharding"], "jit's context mesh")]
    if prim is sharding_constraint_p:
        return "_identity_fn", ["x"], [device_sets.sharding_place(
            params["sharding"], "explicit output sharding")]
    return prim.name, [f"args[{i}]" for i in range(n)], ()


def _on_mesh(x, mesh, typed):
    """x laid out over the context mesh as its type says (else replicated) when the
    computation left it on one device (a result typed by an out_sharding= param, made from
    values on one device)."""
    if not isinstance(x.sharding, sh.SingleDeviceSharding):
        return x
    backend = x._backend
    spec = sh.P(*spec_of(typed)) if is_typed(typed) else sh.P()
    buf = backend.put(x._value(), x.aval, sh.NamedSharding(mesh, spec))
    return Array(x.aval, buf, backend)


def make_array(value, aval, backend=None, sharding=None, transfer="host_to_device"):
    """Wrap a NumPy value as an Array on the (current) backend, a transfer in direction
    `transfer` for the transfer guard (None: not a transfer JAX guards)."""
    backend = backend or current_backend()
    if transfer is not None:
        guard_transfer(transfer, aval, sharding, backend)
    return Array(aval, backend.put(value, aval, sharding), backend)


def _device_count():
    return len(current_backend().devices())


runtime.install(eval_primitive=eval_primitive, make_array=make_array,
                current_backend_name=current_backend_name, get_backend=get_backend,
                clear_backend_caches=clear_backend_caches, device_count=_device_count)


def float0_zeros(shape):
    return np.zeros(shape, dtype=dtypes.float0)


def _load_xla():
    try:
        import jax  # noqa: F401
    except ImportError:
        raise ImportError("the xla backend needs JAX: install refjax with the `xla` extra "
                          "(pip install 'refjax[xla]')") from None
    from .xla import XlaBackend
    return XlaBackend()


register_backend("xla", _load_xla)
