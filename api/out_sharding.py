"""out_sharding= and device= of the jnp creation functions and jax.random samplers: JAX 0.10's
canonicalisation and errors, and the layout applied through jax.reshard / jax.device_put."""
import functools
import inspect
import math

from ..core import source_info
from ..core.primitives import elementwise as ew
from ..core.primitives import structural as st
from ..core.primitives.sharding_ops import constrain, reshard
from ..core.sharding import AxisType, Device, NamedSharding, P, Sharding, SingleDeviceSharding
from ..core.sharding import get_abstract_mesh
from ..core.sharding.mesh import concrete_mesh
from ..core.sharding.mesh import axes_of
from ..core.array import Array
from ..core.sharding_types import concrete_sharding, is_typed
from ..core.trace import EvalTrace, Tracer, current_trace, get_aval


def _at_source():
    site = source_info.current()
    return "" if site is None else f" This error occurs at source:  {site.summarize()}"


def canonicalize_sharding(sharding, api_name):
    """The NamedSharding an `out_sharding` argument names (None for none), as JAX's
    canonicalize_sharding: a PartitionSpec needs jax.set_mesh's mesh, a NamedSharding's mesh
    must be that mesh, and only Explicit axes may be named (ValueError, TypeError as JAX's)."""
    if sharding is None or (isinstance(sharding, NamedSharding) and sharding.mesh.empty):
        return None
    if not isinstance(sharding, (NamedSharding, P)):
        raise TypeError(f"`out_sharding` argument of {api_name} only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: "
                        f"{type(sharding)}")
    current = get_abstract_mesh()
    sharding = _on_context_mesh(sharding, current, api_name)
    _check_explicit(sharding, api_name)
    return sharding


def _on_context_mesh(sharding, current, api_name):
    if isinstance(sharding, P):
        if current.empty:
            raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                             "allowed. Please pass a NamedSharding instance or enter into a mesh "
                             f"context via `jax.set_mesh`. Got {sharding}")
        return NamedSharding(concrete_mesh(), sharding)
    mine = sharding.mesh.abstract_mesh
    both_auto = mine.are_all_axes_auto and current.are_all_axes_auto
    if not both_auto and not current.empty and mine != current:
        raise ValueError(f"Context mesh {current} should match the mesh of sharding {mine} "
                         f"passed to {api_name}.{_at_source()}")
    return sharding


def _check_explicit(sharding, api_name):
    spec, types = sharding.spec, sharding.mesh._name_to_type
    named = [a for entry in spec.partitions for a in axes_of(entry)]
    for axis in [*named, *sorted(spec.unreduced), *sorted(spec.reduced)]:
        if types[axis] in (AxisType.Auto, AxisType.Manual):
            raise ValueError(f"PartitionSpec passed to {api_name} cannot contain axis names "
                             f"that are of type Auto or Manual. Got PartitionSpec: {spec} with "
                             f"axis name: {axis} of type: {types[axis]}.{_at_source()}")


def choose_device_or_out_sharding(device, out_sharding, api_name):
    """(device's Sharding, out_sharding's NamedSharding): at most one of them is set (ValueError,
    as JAX's, for both)."""
    if device is not None and out_sharding is not None:
        raise ValueError(f"Only one of `device` or `out_sharding` can be set. Got "
                         f"device={device!r} and out_sharding={out_sharding!r}")
    if isinstance(device, Device):
        device = SingleDeviceSharding(device)
    _check_device(device)
    return device, canonicalize_sharding(out_sharding, api_name)


def _check_device(device):
    # JAX fails later with an AttributeError ('P' object has no attribute '_is_concrete')
    if device is not None and not isinstance(device, Sharding):
        raise TypeError(f"device= expects a Device or a Sharding, got {device!r}")


def with_out_sharding(x, sharding):
    """x laid out as the canonical out_sharding `sharding` (None: x itself), through
    jax.reshard, so the result's type carries the sharding (JAX refuses an Explicit layout
    with no jax.set_mesh mesh to place it on: ValueError)."""
    if sharding is None:
        return x
    _check_divisible(get_aval(x).shape, sharding)
    if get_abstract_mesh().empty:
        if sharding.mesh.explicit_axes:
            raise ValueError(f"Length of device assignment 1 is not equal to the size of the "
                             f"mesh {sharding.mesh.size} of the requested layout {sharding.spec}."
                             f" Please enter your `jit` into a mesh context via `jax.set_mesh`.")
        return x
    return reshard(x, sharding)


def _check_divisible(shape, sharding):
    spec = sharding.spec._normalized_spec_for_aval(len(shape))
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_sizes))
    for dim, (size, entry) in enumerate(zip(shape, spec.partitions)):
        axes = axes_of(entry)
        parts = math.prod(sizes[a] for a in axes)
        if size % parts:
            raise ValueError(f"Sharding spec {tuple(axes)} implies that array axis {dim} is "
                             f"partitioned {parts} times, but does not evenly divide the "
                             f"dimension size {size}. Got shape: {tuple(shape)} and sharding "
                             f"NamedSharding(mesh={sharding.mesh.abstract_mesh}, spec={spec})")


def _eager(x):
    """True outside any trace (x concrete, nothing staging it)."""
    return not isinstance(x, Tracer) and isinstance(current_trace(), EvalTrace)


def on_device(x, device, under_jit=False):
    """x placed as device= asks (a Sharding): eagerly by jax.device_put; under a trace by
    with_sharding_constraint where JAX honours device= there (`under_jit`: jnp.array, asarray,
    linspace, arange), else left to the compiled computation, as JAX leaves it."""
    if device is None:
        return x
    _check_device(device)
    if not _eager(x):
        return constrain(x, device) if under_jit else x
    from .devices import device_put
    return device_put(x, device)


def placed_like(out, x):
    """A *_like function's result laid out as x is, as JAX's lax.full_like lays it: when x is
    a committed concrete Array, the result not weakly typed, and of x's shape (or x
    replicated). (A traced x's layout is its type's: the `explicit` work.)"""
    if not isinstance(x, Array) or not x.committed or not _eager(out) or \
            get_aval(out).weak_type:
        return out
    if tuple(get_aval(out).shape) != tuple(x.shape) and not x.sharding.is_fully_replicated:
        return out
    from .devices import device_put
    return device_put(out, x.sharding)


def like_type(x, shape):
    """The sharding type a *_like result of x takes, as JAX's lax.full_like types it: a traced
    x's own type when no shape is given (None: untyped)."""
    if shape is not None or not isinstance(x, Tracer):
        return None
    aval = get_aval(x)
    return concrete_sharding(aval.sharding) if is_typed(aval) else None


def filled_like(fill, shape, x, like_shape, device, out_sharding):
    """The scalar `fill` broadcast to `shape` as JAX's lax.full_like makes it: placed by
    device= (untyped under a trace), else under a trace one broadcast typed by out_sharding
    or by a traced x (`like_type`), eagerly laid out as x is or as out_sharding says."""
    if device is not None:
        return strong_on_device(_broadcast(fill, shape), device)
    typed = out_sharding if out_sharding is not None else like_type(x, like_shape)
    if typed is not None and not _eager(fill):
        return st.broadcast_in_dim(fill, shape, (), out_sharding=typed)
    out = _broadcast(fill, shape)
    return placed_like(out, x) if out_sharding is None else with_out_sharding(out, out_sharding)


def _broadcast(scalar, shape):
    return st.broadcast_in_dim(scalar, shape, ()) if shape else scalar


def strong_on_device(x, device):
    """A lax.full-like result committed to `device`: eagerly JAX builds it shard by shard from
    the converted fill value, so it is not weakly typed; under jit it is left alone."""
    if not _eager(x):
        return x
    return on_device(ew.convert_element_type(x, x.dtype, weak_type=False), device)


def placed(x, device, out_sharding, under_jit=False):
    """x laid out by the (already chosen) device= or out_sharding= of a creation function."""
    return on_device(with_out_sharding(x, out_sharding), device, under_jit)


def place_as(api_name, x, device, out_sharding):
    """x laid out by jnp.array's raw device= and out_sharding= arguments."""
    return placed(x, *choose_device_or_out_sharding(device, out_sharding, api_name), True)


def takes_placement(api_name, out_sharding=True, device=True, under_jit=False, fills=False,
                    passes_out=False):
    """Decorator: the function's `device=` and `out_sharding=` keywords (those enabled)
    handled as JAX's creation functions and samplers do, named `api_name` in errors; the
    function itself computes the value and ignores them (`passes_out`: it gets the chosen
    device and canonical out_sharding and applies them itself). `under_jit`: see on_device;
    `fills`: a lax.full-like function, whose eager result placed by device= is not weakly
    typed in JAX (it is built shard by shard from the converted fill value)."""
    def wrap(f):
        @functools.wraps(f)
        def with_placement(*args, **kwargs):
            place = kwargs.pop("device", None) if device else None
            out = kwargs.pop("out_sharding", None) if out_sharding else None
            place, out = choose_device_or_out_sharding(place, out, api_name)
            if passes_out:
                given = {"out_sharding": out} if out_sharding else {}
                return f(*args, device=place, **given, **kwargs)
            result = f(*args, **kwargs)
            if fills and place is not None:
                return strong_on_device(result, place)
            if isinstance(result, tuple):  # linspace's (samples, step): the samples are placed
                return (placed(result[0], place, out, under_jit), *result[1:])
            return placed(result, place, out, under_jit)
        return with_placement
    return wrap


def samples_placed(name):
    """Decorator for a jax.random sampler: a keyword-only `out_sharding=` (as JAX 0.10's
    samplers have, shown in its signature) laying out the samples; their values do not
    depend on it (threefry is partitionable)."""
    def wrap(f):
        out = takes_placement(name, device=False)(f)
        sig = inspect.signature(f)
        keyword = inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)
        out.__signature__ = sig.replace(parameters=[*sig.parameters.values(), keyword])
        return out
    return wrap
