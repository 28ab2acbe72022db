"""Autodiff vocabulary shared by rules: symbolic Zero, UndefinedPrimal, defjvp, deflinear."""
from ..avals import ShapedArray
from ..sharding import P
from ..sharding import NamedSharding, get_abstract_mesh
from ..sharding_types import (auto_mesh_of, concrete_sharding, cotangent_sharding, is_typed,
                              typed_aval)
from ..trace import current_trace, get_aval, set_current_trace
from .. import dtypes


class Zero:
    """A symbolic zero tangent/cotangent of the given aval (never materialised unless needed)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    @staticmethod
    def from_primal(x):
        return Zero(get_aval(x).to_tangent_aval())

    # what a custom rule with symbolic_zeros reads of it, as of JAX's SymbolicZero
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def __repr__(self):
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """A linear input of a transpose rule: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"  # as JAX's: ~float32[] when weak


def is_undefined_primal(x):
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval):
    from ..primitives import elementwise as ew
    if aval.dtype == dtypes.float0:
        return ew.float0_zeros(aval.shape)
    return full_like_aval(aval, 0)


def full_like_aval(aval, value):
    """An array of `value` of aval's shape, dtype, weak type and sharding type (JAX's zeros
    and ones of a primal's type: a scalar resharded or broadcast to the type)."""
    from ..primitives import elementwise as ew
    from ..primitives import structural as st
    sharding = _explicit_cotangent_sharding(aval)
    # placed on the context mesh's devices: a constant has no operand to say where (without
    # a context mesh it is left untyped, to be typed by what it meets)
    sharding = None if sharding is None else concrete_sharding(sharding)
    if sharding is None:
        return ew.full(aval.shape, value, aval.dtype, aval.weak_type)
    scalar = ew.full((), value, aval.dtype, aval.weak_type)
    return st.broadcast_in_dim(scalar, aval.shape, (), out_sharding=sharding)


def _explicit_cotangent_sharding(aval):
    """A cotangent's type on Explicit axes (None on Auto ones: their constants are left
    untyped, to be typed by what they meet)."""
    return cotangent_sharding(aval) if is_typed(aval) else None


def seed_one(aval):
    """grad's seed cotangent for an output of type `aval`, as JAX's `_one`: on a mesh of Auto
    axes other than the context's, the 1 is resharded to it (JAX's `reshard 1.0`)."""
    mesh = auto_mesh_of(aval)
    if mesh is None or mesh == get_abstract_mesh() or aval.shape:
        return full_like_aval(aval, 1)
    from ..primitives import elementwise as ew
    from ..primitives.sharding_ops import sharding_constraint_p
    one = ew.full((), 1, aval.dtype, aval.weak_type)
    return sharding_constraint_p.bind(one, sharding=NamedSharding(mesh, P()), auto=True)


def one_like(x):
    """The 1 of derivative rules, as JAX's `_one`: a scalar of x's dtype, on Explicit mesh
    axes typed on x's mesh (JAX stages `reshard 1.0`), else a weak constant."""
    from ..primitives import elementwise as ew
    aval = typed_aval(x)
    sharding = _explicit_cotangent_sharding(aval)
    if sharding is None:
        return ew.weak_scalar(1, aval.dtype)
    return full_like_aval(aval.update(shape=(), sharding=sharding.update(spec=P())), 1)


def zero_ref(ref_aval):
    """A new reference holding zeros of the array type `ref_aval` holds (a cotangent's)."""
    from ..primitives import state
    return state.new_ref(zeros_like_aval(ref_aval.inner_aval))


def instantiate(t):
    """A concrete (or traced) zero for a symbolic Zero; other tangents pass through."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


# Primitives whose JVP rule runs even when every tangent is zero: new_ref, whose tangent
# reference must exist for the differentiated values written into it later.
JVP_OF_ZEROS = set()

# Loop and branch primitives' evaluation step by step on the current trace: reverse mode
# runs a loop or branch using references this way (control_flow/iterations.py fills it).
LINEARIZE_BY_ITERATIONS = {}


def bind_tangent(prim, *args, **params):
    """Bind prim where tangents are computed, even with no tangent operand: under linearize,
    into the linear jaxpr (a new reference's tangent, which later writes go into)."""
    trace = current_trace()
    with set_current_trace(getattr(trace, "tangent_trace", trace)):
        return prim.bind(*args, **params)


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    if get_aval(a).dtype == dtypes.float0:  # integer values' cotangents: nothing to add
        return a
    from ..primitives.elementwise import add_any
    return add_any(a, b)


def defjvp(prim, *jvp_fns):
    """JVP from one function per argument: fn(tangent, *primals, **params) -> tangent_out.
    `None` marks an argument that does not affect the output's derivative."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        total = Zero(get_aval(out).to_tangent_aval())
        for fn, t in zip(jvp_fns, tangents):
            if fn is not None and type(t) is not Zero:
                total = add_tangents(total, fn(t, *primals, **params))
        return out, total
    prim.def_jvp(rule)
    return rule


def defjvp_with_output(prim, jvp_fn):
    """JVP that reuses the primal output: fn(tangent, out, *primals, **params) (single arg)."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t, = tangents
        if type(t) is Zero:
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, jvp_fn(t, out, *primals, **params)
    prim.def_jvp(rule)
    return rule


def deflinear(prim, transpose_fn):
    """A primitive linear in all its inputs: JVP applies it to the tangents;
    transpose_fn(ct, *args, **params) returns the cotangent of each argument."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, prim.bind(*map(instantiate, tangents), **params)

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_fn(ct, *args, **params)
    prim.def_jvp(jvp)
    prim.def_transpose(transpose)


def defbilinear(prim, transpose_lhs, transpose_rhs):
    """A primitive linear in each of its two operands (the other one fixed): the JVP binds
    it on each tangent; transposed in one operand at a time by transpose_lhs(ct, lhs_aval,
    rhs, **params) or transpose_rhs(ct, lhs, rhs_aval, **params)."""
    defjvp(prim, lambda t, lhs, rhs, **params: prim.bind(t, rhs, **params),
           lambda t, lhs, rhs, **params: prim.bind(lhs, t, **params))

    def transpose(ct, lhs, rhs, **params):
        lin_lhs, lin_rhs = is_undefined_primal(lhs), is_undefined_primal(rhs)
        if lin_lhs and lin_rhs:
            raise ValueError(f"{prim.name} is bilinear, not linear: it can be transposed with "
                             "respect to one operand only, with the other one known")
        if type(ct) is Zero:
            return [Zero(lhs.aval) if lin_lhs else None, Zero(rhs.aval) if lin_rhs else None]
        if lin_lhs:
            return [transpose_lhs(ct, lhs.aval, rhs, **params), None]
        return [None, transpose_rhs(ct, lhs, rhs.aval, **params)]
    prim.def_transpose(transpose)


def defnondiff(prim, reason=None):
    """Integer/boolean-valued primitives: output tangent is a float0 zero."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        zeros = [Zero(get_aval(o).to_tangent_aval()) for o in outs]
        return out, (zeros if prim.multiple_results else zeros[0])
    prim.def_jvp(jvp)
    prim.nondiff_reason = reason or "its output is integer- or boolean-valued"


def tangent_aval(aval):
    return aval.to_tangent_aval() if isinstance(aval, ShapedArray) else aval
