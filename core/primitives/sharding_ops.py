"""sharding_constraint and device_put: identities fixing a value's layout."""
from .. import key_reuse, pytree
from ..avals import ShapedArray
from ..jaxpr import pp_name_rules
from ..sharding.mesh import UNCONSTRAINED, Mesh, axes_of
from ..sharding import device_sets
from ..sharding.device_sets import is_reshard
from ..sharding_types import is_typed, spec_of, typed_aval
from ..sharding_unreduced import sets_of
from ..sharding import (AbstractMesh, AxisType, NamedSharding, P, Sharding,
                        get_abstract_mesh, get_current_mesh, get_resource_mesh, resolve_spec)
from ..sharding.mesh import EMPTY_MESH
from ..trace import Tracer, get_aval
from ..primitive import make_primitive
from ..transforms.ad import deflinear


def _constraint(name, cotangent_params=lambda x, **params: params):
    """An identity primitive laying its operand out as its `sharding` param (None: where it
    is), with the rules both constraints share; a cotangent is constrained with the params
    `cotangent_params(primal, **params)` gives."""
    prim = make_primitive(name)
    prim.def_layout("sharding")
    prim.def_key_reuse(key_reuse.forward_rule)
    prim.def_abstract_eval(lambda x, **_: ShapedArray(x.shape, x.dtype, x.weak_type))
    deflinear(prim, lambda ct, x, **params: [prim.bind(ct, **cotangent_params(x, **params))])
    prim.def_batch(_batch)
    return prim


def _cotangent_params(x, sharding, auto=False, **recorded):
    """A reshard's cotangent is resharded to its operand's type (JAX's transpose), a
    constraint's laid out as the constraint (`_cotangent_sharding`: its sets swapped; what
    with_sharding_constraint `recorded` kept, as JAX's transpose keeps its params)."""
    primal = x.aval.sharding
    if (auto or is_reshard(sharding)) and is_typed(x.aval) and not any(sets_of(x.aval)) \
            and not (sharding.spec.reduced or sharding.spec.unreduced):
        return dict(sharding=primal)
    out = dict(sharding=_cotangent_sharding(x, sharding), **recorded)
    return dict(out, auto=True) if auto else out


def _cotangent_sharding(x, sharding):
    """Where a reshard's cotangent goes: to its operand's cotangent type (JAX's), whose
    reduced axes are unreduced and unreduced axes reduced (an untyped operand: the
    constraint's layout, summed); else (layouts on Auto axes) the constraint's own."""
    spec = getattr(x.aval.sharding, "spec", None)
    if not isinstance(sharding, NamedSharding) or not (
            sharding.spec.reduced or sharding.spec.unreduced or spec is not None and (
                spec.reduced or spec.unreduced)):
        return sharding
    spec = spec or sharding.spec.update(unreduced=frozenset(), reduced=frozenset())
    return sharding.update(spec=spec.update(unreduced=spec.reduced, reduced=spec.unreduced))


def _is_reshard(eqn):
    """A constraint on a mesh whose axes are all Explicit, or reshard's to Auto ones: JAX's
    reshard (with_sharding_constraint is an assert there), printed as JAX prints it, without
    params."""
    mesh = getattr(eqn.params["sharding"], "mesh", None)
    return eqn.params.get("auto", False) or mesh is not None and all(
        t == AxisType.Explicit for t in mesh.axis_types)


def _batch(axis_data, vals, dims, **_):
    """Under vmap the constraint is dropped: the batched value has another rank."""
    return vals[0], dims[0]


def _constraint_pp(eqn, context):
    """JAX's params: with_sharding_constraint's record the context mesh and the sharding as
    JAX holds it (`given`: a PartitionSpec's on the context's abstract mesh, the spec as the
    user wrote it), and which dimensions it leaves UNCONSTRAINED; a reshard's none."""
    p = eqn.params
    if _is_reshard(eqn):
        return []
    if "context_mesh" not in p:
        return [("sharding", p["sharding"])]
    spec = getattr(p["given"], "spec", ())
    return [("context_mesh", p["context_mesh"]), ("layout", None), ("sharding", p["given"]),
            ("unconstrained_dims",
             frozenset(i for i, e in enumerate(spec) if e is UNCONSTRAINED))]


sharding_constraint_p = _constraint("sharding_constraint", _cotangent_params)
sharding_constraint_p.def_pp(_constraint_pp)
pp_name_rules[sharding_constraint_p] = lambda eqn: "reshard" if _is_reshard(eqn) else None
# jax.device_put of a traced value: a constraint to a Sharding (JAX compares its devices
# with the computation's), nothing for a bare Device (JAX leaves the value where it is);
# `devices` is the target as given, printed as JAX prints the equation
device_put_p = _constraint("device_put")


class _ReuseInput:
    """JAX's copy semantics of a device_put inside jit, as its jaxprs print it."""

    def __repr__(self):
        return "ArrayCopySemantics.REUSE_INPUT"


_REUSE_INPUT = (_ReuseInput(),)
device_put_p.def_pp(lambda eqn, context: [
    ("copy_semantics", _REUSE_INPUT), ("devices", eqn.params["devices"]), ("srcs", (None,))])


def device_put_traced(x, target):
    """device_put of a traced value to a Sharding or a Device, staged as JAX stages it."""
    sharding = target if isinstance(target, Sharding) else None
    return device_put_p.bind(x, sharding=sharding, devices=(target,))


def with_sharding_constraint(x, shardings):
    """x (a pytree) laid out as `shardings` (a Sharding, a PartitionSpec under a mesh
    context, or a pytree prefix of them); a NamedSharding may name Auto axes only (JAX's
    ValueError: Explicit ones are reshard's) and keeps the operand's type on Explicit axes.
    Under a context mesh whose axes are all Explicit it is JAX's assert: x unchanged when
    its type is the NamedSharding's, else JAX's AssertionError pointing to reshard."""
    explicit = get_abstract_mesh().are_all_axes_explicit
    return _constrained(x, shardings, not explicit, asserting=explicit, recorded=True)


def _context_mesh():
    """The context mesh JAX's with_sharding_constraint records: the context's abstract mesh,
    else the mesh of `with mesh:`, else an empty Mesh."""
    abstract = get_abstract_mesh()
    if not abstract.empty:
        return abstract
    legacy = get_resource_mesh()
    return legacy if legacy is not None else EMPTY_MESH


def _recorded(given, resolved, context):
    """with_sharding_constraint's params beside the sharding, as JAX records them: a
    PartitionSpec's sharding on the context mesh (abstract, unless `with mesh:`'s)."""
    if isinstance(given, P):
        given = NamedSharding(context, given) if isinstance(context, AbstractMesh) else resolved
    return dict(context_mesh=context, given=given)


def _constrained(x, shardings, auto_only, asserting=False, recorded=False):
    context = _context_mesh() if recorded else None

    def resolve(s):
        s = resolve_spec(s, "with_sharding_constraint", "shardings")
        if not isinstance(s, Sharding):
            raise TypeError(f"with_sharding_constraint expects Shardings, got {s!r}")
        if auto_only and isinstance(s, NamedSharding):
            _check_auto(s)
        return s

    leaves, tree = pytree.tree_flatten(x)
    is_target = lambda s: isinstance(s, (Sharding, P))  # noqa: E731
    targets = [shardings] * len(leaves) if is_target(shardings) else \
        pytree.broadcast_prefix("with_sharding_constraint", x, shardings, is_target)
    outs = []
    for leaf, given in zip(leaves, targets):
        s = resolve(given)
        extra = _recorded(given, s, context) if recorded else {}
        if isinstance(s, NamedSharding) and not isinstance(s.mesh, AbstractMesh):
            s.devices_indices_map(get_aval(leaf).shape)
        if asserting and isinstance(s, NamedSharding):
            _assert_type(typed_aval(leaf), s)
            outs.append(leaf)
            continue
        if auto_only and isinstance(s, NamedSharding) and isinstance(leaf, Tracer):
            s = _with_typed_axes(s, get_aval(leaf))
        outs.append(sharding_constraint_p.bind(leaf, sharding=s, **extra))
    return pytree.tree_unflatten(tree, outs)


def _assert_type(aval, s):
    """JAX's with_sharding_constraint under an all-Explicit context mesh: an assert that the
    operand's type is `s` (UNCONSTRAINED entries match anything)."""
    given = s.spec._normalized_spec_for_aval(aval.ndim)
    ours = spec_of(aval)
    if any(e is not UNCONSTRAINED and (e or None) != t
           for e, t in zip(s.spec.partitions + (None,) * aval.ndim, ours)):
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
            f"`Explicit`. The array sharding: {P(*ours)} did not match the sharding provided: "
            f"{given}. Please use `jax.sharding.reshard` to shard your input to the sharding "
            "you want.")


def _with_typed_axes(s, aval):
    """A constraint on Auto axes inside a trace keeps the operand's type on the Explicit ones
    (JAX lays the value out over both: each dimension's typed axes, then the constraint's;
    eagerly JAX lays it out as the constraint says)."""
    typed = spec_of(aval)
    if not any(typed):
        return s
    wanted = s.spec._normalized_spec_for_aval(aval.ndim).partitions
    return s.update(spec=s.spec.update(partitions=[
        _merged(t, e) for t, e in zip(typed, wanted)]))


def _merged(typed, entry):
    axes = axes_of(typed) + axes_of(entry)
    return None if not axes else axes[0] if len(axes) == 1 else axes


def _check_auto(s):
    if any(s.mesh._name_to_type[axis] != AxisType.Auto
           for entry in s.spec.partitions for axis in axes_of(entry)):
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={s.spec} and mesh={s.mesh.abstract_mesh}. You "
            "probably meant to use `reshard` API?")


def constrain(x, sharding):
    """x laid out as `sharding` (a lax function's out_sharding argument: Explicit axes type
    the result), or x when None."""
    if sharding is None:
        return x
    return _constrained(x, sharding, False)


def reshard(xs, out_shardings):
    """xs (a pytree) laid out as `out_shardings` (NamedShardings, or PartitionSpecs of the
    set_mesh mesh; a pytree prefix of them), as jax.reshard: the named mesh axes must be
    Explicit, and the result's type carries the new sharding."""
    leaves, tree = pytree.tree_flatten(xs)
    is_target = lambda s: isinstance(s, (Sharding, P))  # noqa: E731
    targets = [out_shardings] * len(leaves) if is_target(out_shardings) else \
        pytree.broadcast_prefix("reshard", xs, out_shardings, is_target)
    return pytree.tree_unflatten(tree, [
        _reshard_one(x, _reshard_target(s, get_aval(x).ndim)) for x, s in zip(leaves, targets)])


def _reshard_one(x, s):
    """Inside a trace, a reshard to a mesh of Auto axes only is JAX's: a type on no Explicit
    axis, no devices asked for (its mesh's abstract one), the value left where it is (`auto`:
    the propagation names its layout on that mesh's axes). Eagerly, as JAX's (a jit of it on
    the mesh's devices), a committed value is left where it is too, named on that mesh."""
    if not isinstance(x, Tracer) and isinstance(s.mesh, Mesh):
        # JAX's eager reshard is a jit of `reshard` on the mesh's devices, as it words it
        device_sets.check("reshard", [device_sets.Place(s.mesh._flat_devices_tuple,
                                                        kind="jit's context mesh"),
                                      *device_sets.committed_places([("args[0]", x)])])
    if s.mesh.axis_names and s.mesh.are_all_axes_auto:
        if isinstance(x, Tracer):
            return sharding_constraint_p.bind(
                x, sharding=s.update(mesh=s.mesh.abstract_mesh), auto=True)
        if getattr(x, "committed", False):
            return sharding_constraint_p.bind(x, sharding=s, auto=True)
    return sharding_constraint_p.bind(x, sharding=s)


def _reshard_target(s, ndim):
    if isinstance(s, P):
        mesh = get_current_mesh()
        if mesh is None:
            raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                             "allowed. Please pass a NamedSharding instance or enter into a mesh "
                             f"context via `jax.set_mesh`. Got {s}")
        s = NamedSharding(mesh, s)
    if not isinstance(s, NamedSharding):
        raise TypeError(f"reshard expects NamedShardings or PartitionSpecs, got {s!r}")
    for entry in s.spec.partitions:
        for axis in axes_of(entry):
            if s.mesh._name_to_type[axis] != AxisType.Explicit:
                raise ValueError(
                    "PartitionSpec passed to reshard cannot contain axis names that are of type "
                    f"Auto or Manual. Got PartitionSpec: {s.spec} with axis name: {axis} of "
                    f"type: {s.mesh._name_to_type[axis]}.")
    if s.mesh.are_all_axes_auto:
        return s  # named as given, as JAX's result
    return s.update(spec=s.spec._normalized_spec_for_aval(ndim))
