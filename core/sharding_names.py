"""How a jit's results name their shardings on meshes of Auto axes, as JAX's: the compiler
chooses their layouts, and JAX names a chosen layout by the first argument's sharding when it
is that one, else by its canonical spec (no trailing replicated dimensions); only layouts
fixed by jit's own out_shardings keep the spec they were given."""
import weakref

from .jaxpr import Literal
from .sharding import NamedSharding, P

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
    return isinstance(out, NamedSharding) and not out.mesh.are_all_axes_explicit


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
