"""What cond, while and scan share: list helpers for their operand groups, avals of stacked
values, tracing a user's function, and the typing errors of branches and carries."""
import inspect

from ... import dtypes, pytree
from ... import jaxpr as jx
from ... import sharding_propagation as sp
from ...avals import ShapedArray, same_type
from ...avals import mismatch_extra as why  # noqa: F401  (cond's and loops' name for it)
from ...sharding_types import UnknownSharding, drop_dim, spec_of
from ...sharding_unreduced import sets_of
from ...trace import Tracer, as_value, get_aval
from ...transforms import staging
from ...transforms.ad import Zero
from .. import structural as st
from . import trace_cache


# ---------------------------------------------------------------- operand groups

def check_arity(api_name, funs, names, operands):
    """TypeError naming the primitive and the branch when a branch cannot take the operands
    (JAX lets the branch's own TypeError through, naming neither)."""
    for fun, name in zip(funs, names):
        try:
            signature = inspect.signature(fun)
        except (TypeError, ValueError):  # builtins and the like: let the call tell
            continue
        try:
            signature.bind(*operands)
        except TypeError as e:
            raise TypeError(f"{api_name}: {name} ({getattr(fun, '__qualname__', fun)}) cannot be "
                            f"called with the {len(operands)} operand(s) given: {e}") from None


def split(xs, sizes):
    """xs cut into consecutive pieces of the given sizes, plus the rest as a last piece."""
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    return out + [list(xs[start:])]


def pick(xs, flags, want=True):
    return [x for x, f in zip(xs, flags) if bool(f) == want]


def merge(flags, trues, falses):
    """Interleave two lists back into one: position i comes from `trues` where flags[i]."""
    trues, falses = iter(trues), iter(falses)
    return [next(trues) if f else next(falses) for f in flags]


def or_(xs, ys):
    """Elementwise union: `or` of flags, `|` of sets of axes."""
    return [x | y for x, y in zip(xs, ys)]


def any_columns(rows):
    return [any(col) for col in zip(*rows)]


def fixpoint(step, flags):
    """Grow `flags` (which carries are nonzero / unknown / batched, or the axes they vary over)
    until one more pass of the loop body adds nothing: a carry is flagged if its initial value
    or its update is."""
    while True:
        grown = or_(flags, step(flags))
        if grown == flags:
            return flags
        flags = grown


# ---------------------------------------------------------------- avals and values

def stacked(aval, n):
    return ShapedArray((n,) + tuple(aval.shape), aval.dtype, aval.weak_type)


def unstacked(aval):
    """The type of one slice of a scanned value (its sharding type without the leading dim)."""
    return ShapedArray(tuple(aval.shape[1:]), aval.dtype, aval.weak_type,
                       sharding=drop_dim(aval, 0) if aval.ndim else aval.sharding,
                       vma=aval.vma)


def as_array(x):
    """Python scalars (how jaxpr literals come back) as weakly-typed arrays, for shape ops."""
    return as_value(x) if dtypes.is_python_scalar(x) else x


def nonzero(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def tangents_out(primals_out, out_nz, nz_tangents):
    nz_tangents = iter(nz_tangents)
    return [next(nz_tangents) if nz else Zero.from_primal(p) for p, nz in zip(primals_out, out_nz)]


def broadcast_pred(which, like):
    """A per-lane predicate or index (shape (n,)) broadcast to the batched value `like`."""
    shape = get_aval(like).shape
    return st.broadcast_in_dim(which, shape, (0,)) if len(shape) > 1 else which


def is_concrete(x):
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


# ---------------------------------------------------------------- jaxprs

def fun_of(closed):
    """closed as a function on the current trace, its literals read as arrays (batching rules
    need their shapes)."""
    return jx.jaxpr_as_fun(closed, jx.literal_array)


def trace_fun(fun, in_tree, in_avals):
    """Stage fun(value) for a value of structure in_tree: (ClosedJaxpr taking the captured
    values and then the leaves, the captured values, the output tree); at the top level
    once per function and types (trace_cache.py)."""
    return trace_cache.cached((fun,), (in_tree, tuple(in_avals)),
                              lambda: _trace_fun(fun, in_tree, in_avals),
                              lambda traced: traced[1])


def _trace_fun(fun, in_tree, in_avals):
    box = []

    def flat(*leaves):
        out_leaves, out_tree = pytree.tree_flatten(fun(pytree.tree_unflatten(in_tree, leaves)))
        box.append(out_tree)
        return out_leaves

    closed, consts = staging.stage_with_const_inputs(flat, in_avals)
    return closed, consts, box[0]


# ---------------------------------------------------------------- typing errors

def short(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def check_inputs(what, expected, got):
    if len(expected) != len(got) or not all(same_type(a, b) for a, b in zip(expected, got)):
        raise jx.JaxprTypeError(f"{what} takes inputs of types {short(expected)} but is "
                                f"applied to {short(got)}")


def type_str(aval):
    """`float32[8@X,4]`: a type as JAX's branch and carry errors print it (with its sharding
    type on Explicit mesh axes)."""
    return aval.str_short(short_dtypes=False)


def same_typed(a, b):
    """Equal shape and dtype and, on Explicit mesh axes, sharding type (what JAX requires of
    cond's branches and of loop carries; an unknown type, made by a primitive without a
    sharding rule, is not held against the program)."""
    unknown = any(isinstance(x.sharding, UnknownSharding) for x in (a, b))
    return same_type(a, b) and a.vma == b.vma and (unknown or _same_sharding(a, b))


def _same_sharding(a, b):
    """JAX compares sharding types only when both are on a mesh (a Python scalar or a value
    on one device, on none, matches any)."""
    meshes = [getattr(x.sharding, "mesh", None) for x in (a, b)]
    if any(m is None or m.empty for m in meshes):
        return True
    return spec_of(a) == spec_of(b) and sets_of(a) == sets_of(b)


def typed_as(out_avals_of, layouts):
    """A sharding rule typing a control-flow primitive's results as its jaxpr's outputs
    (`out_avals_of(**params)`; their types were given when the jaxpr was traced), and
    laying them out on Auto axes as `layouts` propagates them through its jaxprs."""
    def types(in_specs, in_avals, out_avals, **params):
        return [spec_of(a) for a in out_avals_of(**params)]
    rule = sp.typed_or(types, layouts)
    rule.types_from_jaxprs = True  # its abstract eval gives them, on their meshes
    return rule


def cond_layouts(in_specs, in_avals, out_avals, *, branches, **_):
    """cond on Auto axes: its branches' layouts merged."""
    outs = zip(*(sp.jaxpr_specs(b, in_specs[1:]) for b in branches))
    return [sp.merged(o, a.ndim) for o, a in zip(outs, out_avals)]


def carried_layouts(run, consts, init):
    """A loop on Auto axes: the carries' layouts merged with what one more pass of the body
    (`run(consts, carries)`: its outputs' specs, carries first) makes of them, until stable;
    then the body's outputs."""
    carry = list(init)
    for _ in range(len(carry) + 1):  # each pass can only drop axes
        outs = run(consts, carry)
        grown = [sp.merged((c, o), len(c)) for c, o in zip(carry, outs)]
        if grown == carry:
            break
        carry = grown
    return carry + list(run(consts, carry)[len(carry):])


def while_layouts(in_specs, in_avals, out_avals, *, body_jaxpr, body_nconsts, cond_nconsts,
                  **_):
    consts, init = split(in_specs[cond_nconsts:], [body_nconsts])
    return carried_layouts(lambda k, c: sp.jaxpr_specs(body_jaxpr, k + c), consts, init)


def scan_layouts(in_specs, in_avals, out_avals, *, jaxpr, num_consts, num_carry, **_):
    """scan on Auto axes: a body's x is its xs' spec without the scanned dimension, the
    stacked ys are the body's ys, replicated along it."""
    consts, init, xs = split(in_specs, [num_consts, num_carry])
    xs = [s[1:] for s in xs]
    out = carried_layouts(lambda k, c: sp.jaxpr_specs(jaxpr, k + c + xs), consts, init)
    return out[:num_carry] + [(None,) + tuple(y or ()) for y in out[num_carry:]]


def _scan_types(in_specs, in_avals, out_avals, *, jaxpr, num_carry, **_):
    """scan's results: its carries typed as the body's, its stacked ys as the body's ys with
    a replicated leading dimension (JAX's)."""
    carry, ys = jaxpr.out_avals[:num_carry], jaxpr.out_avals[num_carry:]
    return [spec_of(a) for a in carry] + [(None,) + spec_of(y) for y in ys]


scan_types = sp.typed_or(_scan_types, scan_layouts)


def pcast_hint(applications, loop):
    """JAX's hint after a vma mismatch in a cond's branches or a loop's carry: the pcasts
    that might fix it (bulleted as each of JAX's two messages does)."""
    if not applications:
        return ""
    if len(applications) == 1:
        hint = f"This might be fixed by {applications[0]}.\n"
    else:
        bullets = "\n".join(f"  * {d};" + "\n" * loop for d in applications[:-1])
        hint = (f"This might be fixed by:\n{bullets}" + "\n" * (not loop)
                + f"  * {applications[-1]}.\n")
    return hint + ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma "
                   "for more information.\n\n")


def leaf_path(tree, i):
    """The key path ("[1]['a']") of leaf i of a tree (empty for a single leaf)."""
    if tree.num_leaves == 1 and pytree.treedef_is_leaf(tree):
        return ""
    paths = pytree.tree_flatten_with_path(pytree.tree_unflatten(tree, range(tree.num_leaves)))[0]
    return pytree.keystr(paths[i][0])


def path_str(tree, i):
    """' at path ...' naming leaf i of a tree (empty for a single leaf)."""
    path = leaf_path(tree, i)
    return f" at path {path}" if path else ""


def listed(diffs, loop=False):
    """The differences as JAX lists them: one as a sentence, several as bullets (a loop's
    with JAX's blank line between the first bullets when there are three or more)."""
    if len(diffs) == 1:
        return f"{diffs[0][:1].upper()}{diffs[0][1:]}.\n"
    sep = "\n" if loop else ""
    return sep.join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
