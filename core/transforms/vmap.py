"""Batching: BatchTrace and BatchTracer (value, batch dim); vmap with in_axes/out_axes pytrees."""
import collections
import contextlib
import functools

from .. import dtypes, errors, leaks, pytree, source_info
from ..config import config
from .. import jaxpr as jx
from ..avals import ShapedArray
from ..primitives.parallel import extend_axis_env
from ..sharding_types import drop_dim, vmapped_mesh_axes
from ..state import AbstractRef, is_ref_type
from ..trace import Trace, Tracer, as_value, current_trace, get_aval, set_current_trace
from .batching import BATCH_OF_UNBATCHED, AxisData, bdim_at_front, moveaxis, not_mapped
from .staging import stage_closed


class BatchTracer(Tracer):
    """A batch of values: `val` carries the batch along dimension `bdim` (None: unbatched)."""

    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        aval = get_aval(self.val)
        if self.bdim is not_mapped:
            return aval
        shape = aval.shape[:self.bdim] + aval.shape[self.bdim + 1:]
        out = ShapedArray(shape, aval.dtype, aval.weak_type, sharding=drop_dim(aval, self.bdim),
                          vma=aval.vma)  # in a check_vma body, its type's (JAX's)
        return AbstractRef.of(out) if is_ref_type(aval) else out

    def short_repr(self):
        return f"VmapTracer(aval={self.aval}, batched={get_aval(self.val)})"

    def to_concrete_value(self):
        if self.bdim is not_mapped and hasattr(self.val, "to_concrete_value"):
            return self.val.to_concrete_value()
        return None


class BatchTrace(Trace):
    """Runs batching rules with the parent trace current."""

    def __init__(self, parent, axis_data):
        self.parent = parent
        self.axis_data = axis_data

    def lift(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, not_mapped

    def process_primitive(self, prim, args, params):
        vals, dims = zip(*map(self.lift, args)) if args else ((), ())
        if all(d is not_mapped for d in dims) and not getattr(prim, "uses_axis_env", False) \
                and prim not in BATCH_OF_UNBATCHED:
            with set_current_trace(self.parent):
                return prim.bind(*vals, **params)
        if prim.batch is None:
            raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
        with set_current_trace(self.parent):
            out, out_dim = prim.batch(self.axis_data, vals, dims, **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


def vmap_flat(fun, args, in_dims, axis_data, out_dims_wanted=None):
    """Run fun on a batch; outputs are moved to `out_dims_wanted` (default 0)."""
    outs, dims = vmap_flat_dims(fun, args, in_dims, axis_data)
    wanted = out_dims_wanted or [0] * len(outs)
    return [_move_out(v, d, w, axis_data.size) for v, d, w in zip(outs, dims, wanted)]


def vmap_flat_dims(fun, args, in_dims, axis_data):
    """Run fun on a batch; outputs keep their natural batch dims: returns (outs, out_dims)."""
    trace = BatchTrace(current_trace(), axis_data)
    tracers = [x if d is not_mapped else BatchTracer(trace, x, d) for x, d in zip(args, in_dims)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    pairs = [trace.lift(o) for o in outs]
    values, dims = [v for v, _ in pairs], [d for _, d in pairs]
    if config.read("jax_check_tracer_leaks"):
        del tracers, outs, pairs  # the tracers still alive past here have leaked
        leaks.report(trace)
    return values, dims


def batch_jaxpr(closed, axis_data, in_batched, instantiate):
    """closed vmapped along axis 0 of its batched inputs, as a closed jaxpr; an output is
    batched (at 0) where the body makes it so or `instantiate` (a bool or one per output)
    asks. Returns (ClosedJaxpr, out_batched)."""
    size = axis_data.size
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.out_avals)
    in_avals = [_stacked(a, size) if b else a for a, b in zip(closed.in_avals, in_batched)]
    box = []

    def fun(*args):
        in_dims = [0 if b else None for b in in_batched]
        body = jx.jaxpr_as_fun(closed, jx.literal_array)
        outs, dims = vmap_flat_dims(body, args, in_dims, axis_data)
        out_b = [d is not None or bool(inst) for d, inst in zip(dims, instantiate)]
        box.append(out_b)
        return [bdim_at_front(_as_array(o), d, size) if b else o
                for o, d, b in zip(outs, dims, out_b)]

    return stage_closed(fun, in_avals), box[0]


def _stacked(aval, n):
    return ShapedArray((n,) + tuple(aval.shape), aval.dtype, aval.weak_type)


def _as_array(x):
    """Python scalars (how literal outputs come back) as weakly-typed arrays."""
    return as_value(x) if dtypes.is_python_scalar(x) else x


def _move_out(val, bdim, want, size, axis_name=None):
    if want is None:
        if bdim is not not_mapped and axis_name is not None:
            raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but out_axes is "
                             "None")
        if bdim is not not_mapped:
            raise ValueError(f"at vmap out_axes, got axis spec None but output was batched on "
                             f"axis {bdim}")
        return val
    if bdim is not_mapped:
        val = bdim_at_front(val, not_mapped, size)
        bdim = 0
    nd = len(get_aval(val).shape)
    if not -nd <= want < nd:
        raise ValueError(f"vmap out_axes specification {want} is out of bounds for an output "
                         f"of rank {nd}")
    return moveaxis(val, bdim, want % nd)


def _flatten_axes(what, tree, axes):
    """Broadcast an in_axes/out_axes prefix over the leaves of `tree` (None is a leaf there)."""
    return pytree.broadcast_prefix(what, tree, axes, lambda x: x is None)


def _canonical_in_dim(x, d, i):
    if d is None:
        return None
    nd = len(get_aval(x).shape)
    if not -nd <= d < nd:
        raise ValueError(f"vmap was requested to map its argument along axis {d}, which implies "
                         f"that its rank should be at least {d + 1 if d >= 0 else -d}, but is "
                         f"only {nd} (its shape is {get_aval(x).shape})")
    return d % nd


def _axis_size(fun, args, kwargs, leaves, dims, axis_size):
    """The size of the mapped axis: the one size of every mapped axis (and axis_size)."""
    if not leaves and axis_size is None:
        raise ValueError("vmap wrapped function must be passed at least one argument containing "
                         f"an array or axis_size must be specified, got empty *args={args} and "
                         f"**kwargs={kwargs}")
    sizes = [None if d is None else get_aval(x).shape[d] for x, d in zip(leaves, dims)]
    present = {s for s in sizes if s is not None} | ({axis_size} - {None})
    if not present:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if len(present) > 1:
        _raise_inconsistent(_leaf_names(fun, args, kwargs, leaves), sizes, dims, axis_size)
    return present.pop()


def _leaf_names(fun, args, kwargs, leaves):
    """Each leaf as JAX names it: "argument b[0] of type float32[10,2]"."""
    names = errors.arg_names(fun, args, kwargs)
    return [f"{n} of type {_type_name(x)}" for n, x in zip(names, leaves)]


def _value_or_passthrough(x):
    """An unmapped leaf as a JAX value, or as it is when it is none (a function, say), which
    JAX passes through to the function too."""
    try:
        return as_value(x)
    except TypeError as err:
        if isinstance(err, errors.JAXTypeError):
            raise
        return x


def _type_name(x):
    try:
        return get_aval(x).str_short(short_dtypes=False)
    except TypeError:  # an unmapped non-array leaf, as JAX names it
        return "unknown"


def _raise_inconsistent(names, sizes, dims, axis_size):
    """JAX's report: the commonest size with an example, then each other size."""
    lines = [] if axis_size is None else [f"the `axis_size` argument was {axis_size}"]
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    for rank, (size, count) in enumerate(counts):
        i = sizes.index(size)
        example = f"axis {dims[i]} of {names[i]}"
        if count == 1:
            lines.append(f"one axis had size {size}: {example}")
        else:
            lines.append(f"{'most' if rank == 0 else 'some'} axes ({count} of them) had size "
                         f"{size}, e.g. {example}")
    raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                     + ";\n".join(f"  * {line}" for line in lines))


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizing map: fun applied to slices along in_axes, results stacked along out_axes."""
    if not callable(fun):
        raise TypeError(f"vmap requires a callable, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes}.")
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                f"len(args)={len(args)}")
        spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        flat_specs = _flatten_axes("vmap in_axes", args, spec) + \
            _flatten_axes("vmap in_axes", kwargs, 0 if kwargs else {})
        leaves, in_tree = pytree.tree_flatten((args, kwargs))
        leaves = [as_value(x) if d is not None else _value_or_passthrough(x)
                  for x, d in zip(leaves, flat_specs)]
        dims = [_canonical_in_dim(x, d, i) for i, (x, d) in enumerate(zip(leaves, flat_specs))]
        size = _axis_size(fun, args, kwargs, leaves, dims, axis_size)
        vmapped_mesh_axes(leaves, dims, spmd_axis_name)
        axis_data = AxisData(axis_name, size, spmd_axis_name)
        out_tree_box = []

        def flat_fun(*flat):
            a, k = pytree.tree_unflatten(in_tree, flat)
            out = fun(*a, **k)
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_tree_box.append((out, out_tree))
            return out_leaves

        parent = current_trace()
        trace = BatchTrace(parent, axis_data)
        tracers = [x if d is None else BatchTracer(trace, x, d) for x, d in zip(leaves, dims)]
        with set_current_trace(trace), _bind_axis_name(axis_name, size), \
                source_info.transformed("vmap"):  # as JAX names the user's function's ops
            outs = flat_fun(*tracers)
        out, out_tree = out_tree_box[0]
        out_specs = _flatten_axes("vmap out_axes", out, out_axes)
        pairs = [trace.lift(o) for o in outs]
        with set_current_trace(parent):
            results = [_move_out(v, d, w, size, axis_name)
                       for (v, d), w in zip(pairs, out_specs)]
        if config.read("jax_check_tracer_leaks"):
            del tracers, outs, pairs, out, out_tree_box  # what is still alive has leaked
            leaks.report(trace)
        return pytree.tree_unflatten(out_tree, results)

    try:
        batched = functools.wraps(fun)(batched)
    except (AttributeError, TypeError):
        pass
    return batched


def _bind_axis_name(axis_name, size):
    """The body runs with its axis name bound in the axis env, as a shard_map body does (pmap
    runs through here): a jit traced inside it stages with no BatchTrace above it, and its
    collectives (all_gather, ppermute, ...) need the axis size when they are staged."""
    if axis_name is None:
        return contextlib.nullcontext()
    return extend_axis_env({axis_name: size})


def _check_axes_spec(name, spec):
    for leaf in pytree.tree_leaves(spec):
        if not isinstance(leaf, int) or isinstance(leaf, bool):
            raise TypeError(f"vmap {name} must be an int, None, or (nested) container with those "
                            f"types as leaves, but got {leaf!r}.")
