"""Spec entries of cond, while and scan, whose bodies are random programs staged to jaxprs."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, UNCHECKED, Arg, Invalid, PrimitiveSpec, Signature, args_from,
                   float_args, kind, np_dtype, shapes)
from .programs import program_fn, programs, smooth_elements, unary_ops
from .transforms import jaxpr_reference

ANY = ALL + COMPLEX
_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5),
        "complex64": (1e-4, 1e-5)}


def _stage(fn, avals):
    """ClosedJaxpr of fn at the given (shape, dtype name) avals."""
    import refjax
    from refjax.core.avals import ShapeDtypeStruct
    return refjax.make_jaxpr(fn)(*[ShapeDtypeStruct(s, np_dtype(d)) for s, d in avals])


def _apply_unary(name, x):
    from .primitives import SPECS
    return SPECS[name].bind(x)


def _bind_binary(name, x, y):
    from .primitives import SPECS
    return SPECS[name].bind(x, y)


def _elements(dtype, diff):
    return smooth_elements(dtype) if diff and kind(dtype) == "f" else None


def _ops(draw, dtype, diff, n):
    """n unary ops (or copies) applicable to values of dtype."""
    return [draw(st.sampled_from(unary_ops(dtype, smooth=diff) + ("copy",))) for _ in range(n)]


# ---------------------------------------------------------------- cond

def _cond_signature(dtype, diff):
    @st.composite
    def sig(draw):
        program = draw(programs(dtype, smooth=diff, max_eqns=4))
        body = program_fn(program)
        n_out = len(program.outs)
        tails = [_ops(draw, dtype, diff, n_out) for _ in range(draw(st.integers(1, 3)))]

        def branch(ops):
            return lambda *xs: [_apply_unary(op, o) for op, o in zip(ops, body(*xs))]
        branches = tuple(_stage(branch(ops), program.inputs) for ops in tails)
        index = Arg((), "int32", False, st.integers(-1, len(branches)))
        return Signature((index,) + program.in_args(_elements(dtype, diff)),
                         {"branches": branches})
    return sig()


def _cond_reference(jax, index, *ops, branches):
    funs = [lambda *xs, c=c: jaxpr_reference(jax, c, xs) for c in branches]
    return jax.lax.switch(index, funs, *ops)


_I32 = np.zeros((), np.int32)
_F = np.ones((2,), np.float32)

COND = PrimitiveSpec(
    name="cond", dtypes=ANY, family="control_flow", signature=_cond_signature,
    reference=_cond_reference, tol=_TOL, diff_args=args_from(1), linear_args=args_from(1),
    invalid=lambda: _cond_invalid(),
    notes="branches[clamp(index, 0, n - 1)](*operands); index is an int32 scalar")


def _cond_invalid():
    """Invalid cases need a staged branch: built lazily (jaxprs need the backend loaded)."""
    branch = _stage(lambda x: [x], [((2,), "float32")])
    return (Invalid("a float index", (np.zeros((), np.float32), _F), {"branches": (branch,)},
                    TypeError),
            Invalid("operands not matching the branches", (_I32, np.ones((3,), np.float32)),
                    {"branches": (branch,)}, TypeError, UNCHECKED))


# ---------------------------------------------------------------- while

def _while_signature(dtype, diff):
    @st.composite
    def sig(draw):
        xs = [(draw(shapes(max_rank=2)), dtype) for _ in range(draw(st.integers(1, 2)))]
        ops = _ops(draw, dtype, diff, len(xs))
        use_const = kind(dtype) in "iufc" and draw(st.booleans())

        def body(*args):
            consts, (counter, *carry) = args[:use_const], args[use_const:]
            carry = [_apply_unary(op, x) for op, x in zip(ops, carry)]
            if consts:
                carry[0] = _bind_binary("add", carry[0], consts[0])
            return [_bind_binary("add", counter, np.int32(1))] + carry

        def cond(limit, counter, *carry):
            return [_bind_binary("lt", counter, limit)]
        carry_avals = [((), "int32")] + xs
        body_jaxpr = _stage(body, [((), dtype)] * use_const + carry_avals)
        cond_jaxpr = _stage(cond, [((), "int32")] + carry_avals)
        elems = _elements(dtype, diff)
        args = ((Arg((), "int32", False, st.integers(0, 3)),)
                + (Arg((), dtype, False, elems),) * use_const
                + (Arg((), "int32", False, st.integers(0, 1)),)
                + tuple(Arg(s, d, False, elems) for s, d in xs))
        return Signature(args, {"body_jaxpr": body_jaxpr, "body_nconsts": int(use_const),
                                "cond_jaxpr": cond_jaxpr, "cond_nconsts": 1})
    return sig()


def _while_reference(jax, *args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    init = args[cond_nconsts + body_nconsts:]
    out = jax.lax.while_loop(
        lambda c: jaxpr_reference(jax, cond_jaxpr, (*cconsts, *c))[0],
        lambda c: tuple(jaxpr_reference(jax, body_jaxpr, (*bconsts, *c))), tuple(init))
    return list(out)


WHILE = PrimitiveSpec(
    name="while", dtypes=ANY, family="control_flow", signature=_while_signature,
    reference=_while_reference, tol=_TOL, diff_args=float_args, reverse="raises",
    notes="samples count a trip counter up to a limit (a cond const) while updating the other "
          "carries elementwise; reverse mode raises ValueError, as in JAX")


# ---------------------------------------------------------------- scan

def _scan_signature(dtype, diff):
    @st.composite
    def sig(draw):
        length = draw(st.sampled_from((0, 1, 2, 3)))
        carry = [(draw(shapes(max_rank=2)), dtype) for _ in range(draw(st.integers(1, 2)))]
        xs = [(draw(shapes(max_rank=2)), dtype) for _ in range(draw(st.integers(0, 2)))]
        n_consts = int(kind(dtype) in "iufc" and draw(st.booleans()))
        ops = _ops(draw, dtype, diff, len(carry) + len(xs))
        mix = [next((j for j, (s, _) in enumerate(xs) if s == c[0]), None) for c in carry]

        def body(*args):
            consts, c, x = args[:n_consts], args[n_consts:n_consts + len(carry)], \
                args[n_consts + len(carry):]
            new = [_apply_unary(op, v) for op, v in zip(ops, c)]
            new = [v if j is None else _bind_binary("add", v, x[j]) if kind(dtype) in "iufc"
                   else v for v, j in zip(new, mix)]
            if consts:
                new[0] = _bind_binary("mul", new[0], consts[0])
            ys = [_apply_unary(op, v) for op, v in zip(ops[len(carry):], x)]
            return new + ys + list(c[:1])
        jaxpr = _stage(body, [((), dtype)] * n_consts + carry + xs)
        elems = _elements(dtype, diff)
        args = ((Arg((), dtype, False, elems),) * n_consts
                + tuple(Arg(s, d, False, elems) for s, d in carry)
                + tuple(Arg((length,) + s, d, False, elems) for s, d in xs))
        return Signature(args, {"jaxpr": jaxpr, "length": length, "num_carry": len(carry),
                                "num_consts": n_consts, "reverse": draw(st.booleans()),
                                "unroll": 1})
    return sig()


def _scan_reference(jax, *args, jaxpr, length, num_carry, num_consts, reverse, unroll):
    consts, init = args[:num_consts], args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]

    def f(carry, x):
        out = jaxpr_reference(jax, jaxpr, (*consts, *carry, *x))
        return tuple(out[:num_carry]), tuple(out[num_carry:])
    carry, ys = jax.lax.scan(f, tuple(init), tuple(xs), length=length, reverse=reverse)
    return list(carry) + list(ys)


SCAN = PrimitiveSpec(
    name="scan", dtypes=ANY, family="control_flow", signature=_scan_signature,
    reference=_scan_reference, tol=_TOL, diff_args=float_args, linear_args=float_args,
    notes="samples: consts, carries updated elementwise (plus an x slice of their shape), "
          "ys from the x slices and the first carry; length 0 included")

SPECS = [COND, WHILE, SCAN]
