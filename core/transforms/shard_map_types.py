"""The manual-axis types of shard_map's values: which mesh axes a spec names, splits, leaves
unreduced or reduced; the body's input types; JAX's checks of specs and of outputs against
out_specs; unreduced values split into, and assembled from, each device's partial value."""
import contextlib

import numpy as np

from .. import pytree
from ..primitives import elementwise as ew
from ..primitives import parallel as par
from ..primitives import structural as st
from ..primitives.linalg import dot_general
from ..primitives.sharding_ops import sharding_constraint_p
from ..sharding import AbstractMesh, AxisType, NamedSharding, P
from ..sharding.abstract_mesh import manual_view
from ..sharding_types import drop_dim, typed_aval, untyped
from ..sharding_unreduced import sets_of, with_manual_sets
from ..trace import Tracer, as_value, get_aval
from .shard_map_vma import omitted as _omitted  # noqa: F401  (shard_map's name for it)
from .shard_map_vma import spec_axes as _spec_axes


def check_spec_sets(mesh, manual, in_specs, out_specs):
    """JAX's checks of the unreduced and reduced axes specs name, before the body is traced
    (in_specs first, then out_specs): only a shard_map over every mesh axis may name them
    (NotImplementedError, JAX's text), on Explicit axes only (ValueError). An axis of no mesh
    is refjax's ValueError naming the mesh's axes (JAX's is a bare KeyError)."""
    for prefix, specs in (("in", in_specs), ("out", out_specs)):
        for spec in pytree.tree_leaves(specs, is_leaf=lambda x: isinstance(x, P)):
            if isinstance(spec, P):
                _check_sets(spec, mesh, manual, f"{prefix}_specs")


def _check_sets(spec, mesh, manual, what):
    if not (spec.unreduced or spec.reduced):
        return
    prefix = what.split("_")[0]
    if set(manual) != set(mesh.axis_names):
        raise NotImplementedError(
            f"unreduced/reduced can only be passed to {prefix}_specs when shard_map is in full "
            f"manual mode. Got mesh axis names {mesh.axis_names}, manual_axes: "
            f"{frozenset(manual)}, specs: {spec}. Please file a bug at "
            "https://github.com/jax-ml/jax/issues.")
    for a in sorted(spec.unreduced | spec.reduced):
        _check_name(a, spec, mesh, manual, what)
    for kind, axes in (("unreduced", spec.unreduced), ("reduced", spec.reduced)):
        if any(a not in mesh.explicit_axes for a in axes):
            raise ValueError(f"{kind} in {prefix}_specs {spec} can only be used when the mesh "
                             "passed to shard_map contains axis names all of type `Explicit`. "
                             f"Got mesh {mesh}")


def check_arg_sets(leaves, specs):
    """An argument's unreduced and reduced axes are its spec's, as JAX checks them (where its
    type does not fix its whole spec: a shard_map leaving some axes automatic)."""
    for x, spec in zip(leaves, specs):
        aval = type_of(x)
        for kind, have in zip(("unreduced", "reduced"), sets_of(aval)):
            if getattr(spec, kind) != have:
                raise ValueError(
                    f"in_specs containing {kind} {spec} passed to shard_map should be equal to "
                    f"the {kind} present on the in_aval {aval.str_short(True)}")


def type_of(x):
    """x's type as jax.typeof gives it: a grad or vmap tracer of concrete arrays staged
    with no sharding takes its primal's or batched value's type (less the mapped dimension)."""
    if not isinstance(x, Tracer):
        return typed_aval(x)
    aval = get_aval(x)
    if aval.sharding is None and hasattr(x, "primal"):
        return aval.update(sharding=type_of(x.primal).sharding)
    if aval.sharding is None and isinstance(getattr(x, "bdim", None), int):
        return aval.update(sharding=drop_dim(type_of(x.val), x.bdim))
    return aval


def _check_name(a, spec, mesh, manual, what):
    if a not in mesh.shape:
        raise ValueError(f"shard_map {what}: spec {spec} names mesh axis {a!r}, which is not an "
                         f"axis of {mesh} (axes {tuple(mesh.axis_names)})")
    if a not in manual:
        raise ValueError(f"shard_map {what}: spec {spec} names mesh axis {a!r}, which is not "
                         f"one of the manual axes axis_names={manual}")


def _spec_vma(spec, manual):
    return frozenset(_spec_axes(spec) & set(manual))


def _body_avals(avals, specs, manual, check_vma, mesh, outer):
    """A check_vma body's inputs are typed with the manual axes their specs split them over
    and, in a shard_map nested in another's body, those the arguments vary over (`outer`);
    and with the unreduced and reduced axes their specs name."""
    if not check_vma:
        return list(avals)
    inner = manual_mesh_of(mesh, manual)
    return [with_manual_sets(a.update(vma=v | _spec_vma(s, manual)), s.unreduced, s.reduced,
                             inner) for a, s, v in zip(avals, specs, outer)]


@contextlib.contextmanager
def body_scope(mesh, manual, check_vma):
    """What a shard_map body is traced or run under: its manual axes bound (collectives see
    their sizes), values typed with their varying axes or not, and get_abstract_mesh showing
    the axes Manual."""
    sizes = {a: mesh.shape[a] for a in manual}
    with par.extend_axis_env(sizes, check_vma), manual_view(mesh, manual):
        yield


def manual_mesh_of(mesh, manual):
    """The abstract mesh of a body's manual axes (as `manual_mesh()` sees them inside)."""
    return AbstractMesh(tuple(mesh.shape[a] for a in manual), tuple(manual),
                        (AxisType.Manual,) * len(manual))


def not_replicated(aval):
    """The manual axes a body's value is not known to be replicated over: those it varies
    over, is a partial sum over or is reduced over."""
    return aval.vma.union(*sets_of(aval))


def _unreduced_lanes(x, spec, mesh, order):
    """An unreduced argument's lanes over its unreduced and split axes: each device's block of
    its partial value, read from a concrete Array's shards (a traced one has none to read)."""
    axes = tuple(a for a in order if a in spec.unreduced or a in _spec_axes(spec))
    if isinstance(x, Tracer):
        raise NotImplementedError(
            f"shard_map in_specs {spec}: refjax splits only concrete unreduced arguments "
            "(outside jit, or in a jit run op by op)")
    data = {s.device: s.data for s in x.addressable_shards}
    names = tuple(mesh.axis_names)
    blocks = [data[mesh.devices[tuple(c[axes.index(a)] if a in axes else 0 for a in names)]]
              for c in np.ndindex(*(mesh.shape[a] for a in axes))]
    lanes = np.stack([np.asarray(b) for b in blocks])
    return as_value(lanes.reshape(tuple(mesh.shape[a] for a in axes) + lanes.shape[1:])), axes


def _drop_lanes(x, lanes, keep):
    """Lane 0 of the lane dims whose axis is not in `keep` (replicated: any lane will do)."""
    for pos in reversed([i for i, a in enumerate(lanes) if a not in keep]):
        x = st.squeeze(st.slice_in_dim(x, 0, 1, axis=pos), (pos,))
    return x, tuple(a for a in lanes if a in keep)


def contract_partials(x, axes, spec, mesh):
    """x (one leading lane dim per unreduced axis in `axes`, then the global value) -> the
    unreduced value holding each device's lane as its partial value: a contraction of the
    lanes with ones, each device contracting its own lane (a dot_general whose out_sharding
    is unreduced over `axes` and split as spec is)."""
    sizes = tuple(mesh.shape[a] for a in axes)
    dims = tuple(range(len(axes)))
    with untyped(False):
        x = sharding_constraint_p.bind(x, sharding=NamedSharding(mesh, P(*axes,
                                                                          *spec.partitions)))
        ones = sharding_constraint_p.bind(ew.full(sizes, 1, get_aval(x).dtype),
                                          sharding=NamedSharding(mesh, P(*axes)))
        out = NamedSharding(mesh, P(*spec.partitions, unreduced=set(axes)))
        return dot_general(x, ones, ((dims, dims), ((), ())), out_sharding=out)
