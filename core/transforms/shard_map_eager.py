"""Eager shard_map, as JAX 0.10 runs it outside jit: the body runs operation by operation on
per-device values (a ShardMapTracer holds every device's block; printing one shows each
device's, converting one to a Python value raises), each operation computed as nested vmap
over the mesh axes and typed by its vma rule, as the staged shard_map's are."""
import numpy as np

from .. import pytree
from ..avals import ShapedArray
from ..jaxpr import JaxprEqn, Var
from ..primitives import parallel as par
from ..primitives import structural as st
from ..primitives.debugging import inspect_sharding_p
from ..primitives.sharding_ops import sharding_constraint_p
from ..sharding import AxisType, Mesh, NamedSharding, P
from ..sharding import device_sets
from ..sharding_types import untyped
from ..trace import Trace, Tracer, as_value, current_trace, get_aval, set_current_trace
from ..sharding_unreduced import sets_of, with_manual_sets
from ..vma import eqn_vma, manual_sets_out, match_operands
from . import shard_map as sm
from .jit import jit


class ShardMapTracer(Tracer):
    """Every device's block of one value in an eager shard_map body: `val` has one leading
    dimension per mesh axis (mesh order), then the block's shape; `vma` its varying axes."""

    __slots__ = ("val", "vma", "sets")

    def __init__(self, trace, val, vma, sets=(frozenset(), frozenset())):
        self._trace, self.val, self.vma, self.sets = trace, val, frozenset(vma), sets

    @property
    def aval(self):
        """The block's type: its vma and unreduced/reduced axes shown with check_vma only, as
        JAX's (without, the vma is still tracked, to check an output claimed replicated on the
        data)."""
        return self._trace.local_aval(self.val, self.vma, self.sets)

    def __repr__(self):
        """Each device's block, as JAX prints a value inside an eager shard_map."""
        trace, value = self._trace, np.asarray(self.val)
        names = "(" + ", ".join(map(str, trace.order)) + ",)"
        return "\n".join(f"On {trace.mesh.devices[c]} at mesh coordinates {names} = {c}:\n"
                         f"{value[c]}\n" for c in np.ndindex(*trace.sizes))

    __str__ = __repr__

    def short_repr(self):
        return f"ShardMapTracer({self.aval})"


class ShardMapTrace(Trace):
    """Runs each primitive on every device's block (nested vmap over the mesh axes, with the
    parent trace current) and types its result with the primitive's vma rule."""

    def __init__(self, parent, mesh, order, check_vma):
        self.parent, self.mesh, self.order, self.check_vma = parent, mesh, order, check_vma
        self.sizes = tuple(mesh.shape[a] for a in order)
        self.bound_axes = sm._axis_sizes(mesh, order)  # collectives in the body see them
        self.inner = sm.manual_mesh_of(mesh, order)

    def local_aval(self, val, vma, sets):
        """The type of one device's block of `val` (lane dims first)."""
        aval = get_aval(val)
        local = ShapedArray(aval.shape[len(self.order):], aval.dtype, aval.weak_type,
                            vma=vma if self.check_vma else frozenset())
        return with_manual_sets(local, *sets, self.inner) if self.check_vma else local

    def lift(self, x):
        """(every device's block, vma) of a value: constants are the same on every device."""
        if type(x) is ShardMapTracer and x._trace is self:
            return x.val, x.vma
        with set_current_trace(self.parent):
            x = as_value(x)
            return self._full(x, (), get_aval(x)), frozenset()

    def process_primitive(self, prim, args, params):
        if prim is inspect_sharding_p:  # JAX's: each device's block, P() over the mesh
            params["callback"](NamedSharding(Mesh(self.mesh.devices, self.mesh.axis_names), P()))
            return []
        if self.check_vma:  # JAX's implicit pvary of operands varying over fewer axes
            matched = match_operands(prim, args, [get_aval(x) for x in args], params)
            if matched is not args:
                return self.process_primitive(prim, matched, params)
        vals, vmas = zip(*map(self.lift, args)) if args else ((), ())
        sets = [_sets(self, x) for x in args]
        local = [self.local_aval(v, m, s).update(vma=m) for v, m, s in zip(vals, vmas, sets)]
        with par.extend_axis_env(self.bound_axes, self.check_vma):
            out_avals = prim.abstract_eval(*local, **params)
        out_avals = out_avals if prim.multiple_results else [out_avals]
        eqn = JaxprEqn(prim, [Var(a) for a in local], [Var(a) for a in out_avals], params)
        out_vmas = eqn_vma(eqn, list(vmas), self.check_vma)
        out_sets = map(sets_of, manual_sets_out(prim, local, out_avals, params))
        outs = self._run(prim, vals, params, out_avals)
        tracers = [ShardMapTracer(self, o, v, s) for o, v, s in zip(outs, out_vmas, out_sets)]
        return tracers if prim.multiple_results else tracers[0]

    def _run(self, prim, vals, params, out_avals):
        def body(*xs):
            out = prim.bind(*xs, **params)
            return list(out) if prim.multiple_results else [out]
        with set_current_trace(self.parent):
            outs, lanes = sm._run_lanes(body, list(vals), [self.order] * len(vals), self.order,
                                        self.mesh)
            return [self._full(sm._as_traced_value(o, a), ls, a)
                    for o, ls, a in zip(outs, lanes, out_avals)]

    def _full(self, x, lanes, aval):
        """x (lane dims `lanes` first) with a lane dim for every mesh axis."""
        dims = tuple(self.order.index(a) for a in lanes)
        n = len(self.order)
        full = st.broadcast_in_dim(x, self.sizes + aval.shape,
                                   dims + tuple(range(n, n + aval.ndim)))
        # on the Auto axes the arguments' blocks are on (a constant, or a value made in the
        # body, under an Explicit context mesh is typed on it: an operation cannot mix them)
        return on_auto_axes(full)

    def process_custom_jvp_call(self, call, fun, jvp, args, symbolic_zeros):
        """Outside differentiation a custom_jvp function is the function itself."""
        return fun(*args)

    def process_custom_vjp_call(self, call, fun, rule, args):
        return fun(*args)


def _sets(trace, x):
    """The unreduced and reduced manual axes of an operand (a constant has none)."""
    if type(x) is ShardMapTracer and x._trace is trace:
        return x.sets
    return frozenset(), frozenset()


def runs_eagerly(mesh, order):
    """Whether shard_map runs eagerly: called outside every transformation, over all of the
    mesh's axes (as JAX 0.10 does outside jit)."""
    from ..trace import EVAL_TRACE
    return current_trace() is EVAL_TRACE and not par.AXIS_ENV.frames \
        and set(order) == set(mesh.axis_names)


def eager_shard_map(*args):
    """_eager_shard_map with its global values untyped (its mesh axes are Manual)."""
    with untyped():
        return _eager_shard_map(*args)


def _eager_shard_map(f, mesh, order, leaves, in_tree, specs, out_specs, check_vma):
    """Run f on every device's block of `leaves` (split as `specs` say) and assemble the
    outputs as `out_specs` say, laid out on the mesh."""
    # committed arguments elsewhere than the mesh's devices are refused, as JAX refuses them
    device_sets.check("shard_map", [
        device_sets.Place(mesh._flat_devices_tuple, kind="shard_map inside jit"),
        *device_sets.committed_places((f"args[{i}]", x) for i, x in enumerate(leaves))])
    trace = ShardMapTrace(current_trace(), mesh, order, bool(check_vma))
    leaves = [on_auto_axes(x) for x in leaves]
    split = [sm._split_input(x, s, mesh, order) for x, s in zip(leaves, specs)]
    tracers = [ShardMapTracer(trace, trace._full(x, ls, _local(x, ls)), sm._spec_vma(s, order),
                              (s.unreduced, s.reduced)) for (x, ls), s in zip(split, specs)]
    # the axis env frame: what jit and other staging traces in the body see of the mesh axes
    with set_current_trace(trace), sm.body_scope(mesh, order, trace.check_vma):
        out = f(*pytree.tree_unflatten(in_tree, tracers))
    out_leaves, out_tree = pytree.tree_flatten(out)
    paths = sm._paths("out", out)
    out_specs_tree, out_specs = out_specs, sm._flatten_specs("shard_map out_specs", out, out_specs)
    if trace.check_vma:  # JAX's implicit casts to the out_specs' types, eagerly too
        with set_current_trace(trace), sm.body_scope(mesh, order, True):
            out_leaves = [sm._vary_as_spec(sm._check_output(x), s, order)
                          for x, s in zip(out_leaves, out_specs)]
    outs = [_checked(trace, x, s, p) for x, s, p in zip(out_leaves, out_specs, paths)]
    if trace.check_vma:  # JAX's eager shard_map reports the first output failing
        keys = sm.spec_paths(out, out_specs_tree)
        sm.check_out_vmas(f, mesh, order, [
            (k, s, vma.union(*_sets(trace, x))) for k, x, (_, vma, s, _) in
            zip(keys, out_leaves, outs)], first_only=True)
    return pytree.tree_unflatten(out_tree, [_output(trace, *o) for o in outs])


def on_auto_axes(x):
    """An argument laid out on Explicit mesh axes, relabelled Auto (the same layout): the
    blocks are cut out of it untyped, as the body's axes are Manual (the xla backend's JAX
    would type the cutting on the Explicit axes, which its reshape rule cannot)."""
    sharding = getattr(x, "sharding", None)
    if not isinstance(sharding, NamedSharding) or not sharding.mesh.explicit_axes or \
            sharding.spec.unreduced or sharding.spec.reduced:  # (which need Explicit axes)
        return x
    auto = sharding.mesh.update(axis_types=(AxisType.Auto,) * len(sharding.mesh.axis_names))
    return sharding_constraint_p.bind(x, sharding=sharding.update(mesh=auto))


def _local(x, lanes):
    aval = get_aval(x)
    return aval.update(shape=aval.shape[len(lanes):])


def _checked(trace, x, spec, path):
    """One output's (value, the axes it varies over, out spec checked against it, aval)."""
    sm._check_output(x)
    val, vma = trace.lift(x)
    aval = get_aval(val).update(shape=get_aval(val).shape[len(trace.order):])
    return val, vma, sm._check_spec(spec, aval, trace.mesh, trace.order,
                                    f"out_specs for {path}"), aval


def _output(trace, val, vma, spec, aval):
    """One output assembled and laid out on the mesh."""
    bad = any(a in vma for a in sm._omitted(spec, trace.order))
    with set_current_trace(trace.parent):
        if bad:
            return _staged_output(trace, val, spec, aval)
        if spec.unreduced:
            return sm._assemble_unreduced(val, trace.order, spec, aval, trace.mesh, trace.order)
        out = sm._assemble(val, trace.order, spec, aval, trace.mesh, trace.order)
        return sharding_constraint_p.bind(out, sharding=NamedSharding(trace.mesh, spec))


def _staged_output(trace, val, spec, aval):
    """An output claimed replicated over axes it may vary along (check_vma=False): assembled
    by a staged shard_map of the blocks, so that each backend treats it as it treats a jitted
    shard_map's (numpy_ref checks on the data that the claim holds)."""
    blocks = P(*trace.order)
    body = sm.shard_map(lambda b: st.reshape(b, aval.shape), mesh=trace.mesh, in_specs=blocks,
                        out_specs=spec, check_vma=False)
    return jit(body)(val)
