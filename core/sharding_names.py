"""How a jit's results name their shardings on meshes of Auto axes, as JAX's: the compiler
chooses their layouts, and JAX names a chosen layout by the first argument's sharding when it
is that one, else by its canonical spec (no trailing replicated dimensions); only layouts
fixed by jit's own out_shardings keep the spec they were given."""
import math
import weakref

from .jaxpr import Literal
from .sharding import NamedSharding, P
from .sharding.mesh import axes_of

# The jaxpr outputs laid out by jit's out_shardings (their constraint's sharding is kept).
_FIXED = weakref.WeakSet()


def fix_outputs(outvars):
    """Mark jaxpr outputs as laid out by jit's out_shardings."""
    _FIXED.update(v for v in outvars if type(v) is not Literal)


def is_fixed(var):
    """Whether a jaxpr output is laid out by jit's out_shardings (its sharding keeps its
    spec; programs are told apart by it)."""
    return type(var) is not Literal and var in _FIXED


def named_as_jax(jaxpr, in_shardings, outs):
    """The output shardings `outs` of a jaxpr run on arguments laid out as `in_shardings`
    (None: uncommitted), named as JAX names a compiled program's results."""
    if not any(map(_renamed, outs)):  # the common case, without walking the jaxpr
        return outs
    first = _first_live_input(jaxpr, in_shardings)
    return [o if is_fixed(v) or not _renamed(o) else _named(_chosen(o, v.aval), v.aval, first)
            for v, o in zip(jaxpr.outvars, outs)]


def named_as_jax_eqn(in_shardings, in_avals, outs, out_avals):
    """The output shardings of one primitive applied eagerly, named as JAX names them: JAX
    runs the primitive as a jit of that one equation, which reads all its arguments."""
    if not any(map(_renamed, outs)):
        return outs
    first = next(((s, a.ndim) for s, a in zip(in_shardings, in_avals) if s is not None), None)
    if first is not None and not isinstance(first[0], NamedSharding):
        first = None
    return [_named(_chosen(o, a), a, first) if _renamed(o) else o
            for o, a in zip(outs, out_avals)]


def _chosen(out, aval):
    """The layout the compiler gives a result: XLA replicates an array with no elements
    (each device's block is empty either way)."""
    return NamedSharding(out.mesh, P()) if 0 in tuple(aval.shape) else out


def _renamed(out):
    """Whether JAX names this layout itself (on Explicit axes the type's spec is kept)."""
    return isinstance(out, NamedSharding) and not out.mesh.are_all_axes_explicit \
        and not isinstance(out, GSPMDSharding)


class GSPMDSharding(NamedSharding):
    """A layout JAX names by its HLO sharding (its internal GSPMDSharding, not in
    jax.sharding): a value a reshard to a mesh of Auto axes of another size than the
    computation's left where it was. Laid out as the NamedSharding it extends; its type is
    its aval's (the reshard's mesh), not its layout's. Its spec has an entry per dimension
    (the HLO sharding's rank)."""

    __slots__ = ()

    @classmethod
    def of(cls, sharding, ndim):
        """The GSPMDSharding laid out as `sharding` for an array of `ndim` dimensions."""
        spec = sharding.spec._normalized_spec_for_aval(ndim)
        return cls(sharding.mesh, spec, memory_kind=sharding.memory_kind)

    def __repr__(self):
        return f"GSPMDSharding({hlo_sharding_text(self)}, memory_kind={self.memory_kind})"

    def __eq__(self, other):
        return type(other) is GSPMDSharding and NamedSharding.__eq__(self, other)

    def __hash__(self):
        return hash(("gspmd", NamedSharding.__hash__(self)))


def named_by_type(sharding, aval):
    """An Array's layout as JAX names it: a GSPMDSharding when its type is on a mesh of Auto
    axes of another size than the devices it is laid out on (a reshard left it there)."""
    mesh = getattr(getattr(aval, "sharding", None), "mesh", None)
    if type(sharding) is not NamedSharding or mesh is None or mesh.empty or \
            not mesh.are_all_axes_auto or mesh.size == sharding.mesh.size:
        return sharding
    return GSPMDSharding.of(sharding, aval.ndim)


def hlo_sharding_text(sharding):
    """XLA's text of a NamedSharding's HLO sharding over its mesh's devices in order:
    `{replicated}`, or the tiles per dimension (a replicated remainder last) and the
    devices as an iota over the mesh's axes, transposed to the order the spec uses them."""
    mesh = sharding.mesh
    axes = [a for a in mesh.axis_names if mesh.shape[a] > 1]
    used = [a for e in sharding.spec.partitions for a in axes_of(e) if a in axes]
    tiles = [math.prod(mesh.shape[a] for a in axes_of(e)) for e in sharding.spec.partitions]
    if math.prod(tiles) == 1:
        return "{replicated}"
    rest = mesh.size // math.prod(tiles)
    dims = ",".join(map(str, tiles + [rest] * (rest > 1)))
    last = " last_tile_dim_replicate" if rest > 1 else ""
    order = [axes.index(a) for a in used + [a for a in axes if a not in used]]
    return f"{{devices=[{dims}]{_iota(order, [mesh.shape[a] for a in axes])}{last}}}"


def _iota(order, sizes):
    """`<=[n]`, or `<=[dims]T(perm)`: the iota over `sizes` transposed to `order`, runs of
    consecutive axes merged (XLA's canonical form)."""
    runs = []
    for i in order:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    if len(runs) == 1:
        return f"<=[{math.prod(sizes)}]"
    ranked = sorted(runs)
    dims = ",".join(str(math.prod(sizes[i] for i in r)) for r in ranked)
    perm = ",".join(str(ranked.index(r)) for r in runs)
    return f"<=[{dims}]T({perm})"


def _named(out, aval, first):
    ndim = aval.ndim
    typed = _as_typed(out, aval)
    if typed is not None:
        return typed
    if first is not None and first[1] == ndim and first[0].mesh == out.mesh \
            and out.is_equivalent_to(first[0], ndim):
        return first[0]
    return canonical(out)


def _as_typed(out, aval):
    """On a mesh with Explicit and Auto axes, a layout that is the result's type (nothing
    laid over the Auto axes) is named by the type's spec, one entry per dimension (JAX's)."""
    spec = getattr(aval.sharding, "spec", None)
    if spec is None or not out.mesh.explicit_axes:
        return None
    named = NamedSharding(out.mesh, spec._normalized_spec_for_aval(aval.ndim),
                          memory_kind=out.memory_kind)
    return named if out.is_equivalent_to(named, aval.ndim) else None


def canonical(sharding):
    """The NamedSharding with its spec as JAX rebuilds it from a compiled layout: single
    axis names unwrapped from tuples, trailing replicated dimensions dropped."""
    entries = [e[0] if isinstance(e, tuple) and len(e) == 1 else e
               for e in sharding.spec.partitions]
    while entries and entries[-1] is None:
        entries.pop()
    spec = P(*entries, unreduced=sharding.spec.unreduced, reduced=sharding.spec.reduced)
    return NamedSharding(sharding.mesh, spec, memory_kind=sharding.memory_kind)


def _first_live_input(jaxpr, in_shardings):
    """(sharding, ndim) of the first argument the program reads that has a NamedSharding
    (JAX drops the unread ones before compiling), or None."""
    live = _live_vars(jaxpr)
    for v, s in zip(jaxpr.invars, in_shardings):
        if v in live and s is not None:
            return (s, v.aval.ndim) if isinstance(s, NamedSharding) else None
    return None


def _live_vars(jaxpr):
    """The variables the outputs depend on (equations without outputs count as used)."""
    live = {v for v in jaxpr.outvars if type(v) is not Literal}
    for eqn in reversed(jaxpr.eqns):
        if not eqn.outvars or any(v in live for v in eqn.outvars):
            live.update(v for v in eqn.invars if type(v) is not Literal)
    return live
