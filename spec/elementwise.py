"""Spec entries of the elementwise primitives, select_n, clamp and convert_element_type."""
import dataclasses

import numpy as np
from hypothesis import strategies as st

from .base import (ALL, BOOL, COMPLEX, FLOAT, INT, NUM, SIGNED, Arg, Invalid, PrimitiveSpec,
                   Signature, all_args, args_at, args_from, floats, kind, no_args, np_dtype,
                   scaled_tolerance, shapes, weak_flag)

FLOATC = FLOAT + COMPLEX
NUMC = NUM + COMPLEX


# ---------------------------------------------------------------- value domains

def interval(lo, hi):
    """Values in [lo, hi] for float dtypes (real and imaginary parts for complex)."""
    def elements(name):
        if kind(name) == "c":
            part = floats(lo, hi, name)
            return st.builds(complex, part, part)
        return floats(lo, hi, name) if kind(name) == "f" else None
    return elements


def away(lo, hi):
    """Values with lo <= |v| <= hi, of either sign (away from a kink or pole at 0)."""
    def elements(name):
        if kind(name) != "f":
            return None
        mag = floats(lo, hi, name)
        return st.tuples(mag, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])
    return elements


def away_from_grid(offset, lo=-3.0, hi=3.0, margin=0.1):
    """Values at least `margin` from every k + offset (integers, or halves for round)."""
    def elements(name):
        if kind(name) != "f":
            return None
        return floats(lo, hi, name).filter(
            lambda v: abs((v - offset) - np.round(v - offset)) > margin)
    return elements


def integers_as_float(lo, hi):
    """Integer values stored in a float dtype (polygamma's order m)."""
    def elements(name):
        return st.integers(lo, hi).map(float) if kind(name) == "f" else None
    return elements


SMOOTH = interval(-3.0, 3.0)


def complex_only(elements):
    """`elements` for complex dtypes, the default values for the others."""
    return lambda name: elements(name) if kind(name) == "c" else None


def _call(elements, name):
    return elements(name) if elements is not None else None


# ---------------------------------------------------------------- signatures

def nary(n, elements=(), domain=(), scalars=True, params=None):
    """Signature builder of an n-ary elementwise primitive: operands of one shape and dtype,
    some of them rank-0 (which broadcast); `elements`/`domain` give per-argument values for
    the eager resp. derivative samples; `params` is a strategy of param dicts."""
    elements = tuple(elements) + (None,) * (n - len(elements))
    domain = tuple(domain) + (SMOOTH,) * (n - len(domain))

    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape = draw(shapes())
            args = []
            for i in range(n):
                full = not scalars or n == 1 or draw(st.sampled_from((True, True, True, False)))
                elems = _call(domain[i] if diff else elements[i], dtype)
                arg_shape = _some_dims_one(draw, shape) if full and scalars and n > 1 else shape
                args.append(Arg(arg_shape if full else (), dtype, draw(weak_flag(dtype)), elems))
            return Signature(tuple(args), draw(params) if params is not None else {})
        return sig()
    return signature


def _some_dims_one(draw, shape):
    """shape, or (one time in four) shape with some dimensions 1: lax broadcasts size-1
    dimensions of operands of equal rank."""
    if not shape or draw(st.sampled_from((False, False, False, True))) is False:
        return shape
    return tuple(1 if draw(st.booleans()) else d for d in shape)


def lax_fn(name, *param_names):
    """Reference through the public jax.lax function `name`, params passed positionally."""
    def reference(jax, *args, **params):
        return getattr(jax.lax, name)(*args, *[params[p] for p in param_names])
    reference.__name__ = f"lax.{name}"
    return reference


def _typical(dtypes):
    """A representative accepted dtype (float32 when accepted) for invalid-input cases."""
    return "float32" if "float32" in dtypes else next(d for d in dtypes if d != "bool")


def _mismatched_dtypes(n):
    args = [np.ones((2,), np.float32)] * (n - 1) + [np.ones((2,), np.int32)]
    return Invalid("operands of different dtypes", tuple(args), {})


def _mismatched_shapes(n, dtype):
    d = np_dtype(dtype)
    args = [np.ones((2,), d)] * (n - 1) + [np.ones((3,), d)]
    return Invalid("operands of incompatible shapes", tuple(args), {})


# ---------------------------------------------------------------- unary

def unary(name, dtypes, *, domain=SMOOTH, elements=None, nondiff=None, linear=False,
          params=None, reference=None, tol=None, exact=False, fd_tol=(1e-6, 1e-6), notes=""):
    """The entry of a unary elementwise primitive."""
    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="elementwise",
        signature=nary(1, (elements,), (domain,), params=params),
        reference=reference or lax_fn(name), tol=tol or {}, exact=exact,
        diff_args=no_args if nondiff else all_args, nondiff=nondiff,
        linear_args=all_args if linear else no_args, fd_tol=fd_tol, notes=notes)


def _integer_pow(spec):
    """integer_pow of integers takes only y >= 0: restrict the exponent for integer dtypes."""
    base = spec.signature

    def signature(dtype, diff):
        if kind(dtype) in "iu":
            return base(dtype, diff).map(lambda s: s._replace(params={"y": abs(s.params["y"])}))
        return base(dtype, diff)
    negative = Invalid("an integer to a negative power", (np.ones((2,), np.int32),), {"y": -1})
    return dataclasses.replace(spec, signature=signature, invalid=(negative,))


_SPECIAL_TOL = scaled_tolerance(10)
_TRANSCENDENTAL_TOL = {"float32": (2e-5, 2e-6), "complex64": (1e-4, 1e-5)}

_UNARY = [
    unary("neg", NUMC, linear=True, exact=True),
    unary("sign", NUMC, domain=away(0.1, 3.0)),
    unary("floor", FLOAT, domain=away_from_grid(0.0), exact=True),
    unary("ceil", FLOAT, domain=away_from_grid(0.0), exact=True),
    unary("round", FLOAT, domain=away_from_grid(0.5), exact=True,
          params=st.fixed_dictionaries({"rounding_method": st.sampled_from((0, 1))}),
          reference=lax_fn("round", "rounding_method")),
    unary("is_finite", FLOAT, nondiff="zero", exact=True),
    unary("exp", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("exp2", FLOATC, tol={**_TRANSCENDENTAL_TOL, "float16": (5e-3, 5e-3),
                               "bfloat16": (4e-2, 4e-2)},
          notes="XLA float16: 4 ulps (exp2(6.5) = 90.75 for 90.5); bfloat16: 3 ulps (74.5 for "
                "76.0)"),
    unary("log", FLOATC, domain=interval(0.1, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("log1p", FLOATC, domain=interval(-0.8, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("expm1", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("tanh", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("logistic", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("sin", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("cos", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("tan", FLOATC, domain=interval(-1.3, 1.3), elements=interval(-1.5, 1.5),
          tol=_TRANSCENDENTAL_TOL),
    unary("asin", FLOATC, domain=interval(-0.9, 0.9), tol=_TRANSCENDENTAL_TOL),
    unary("acos", FLOATC, domain=interval(-0.9, 0.9), tol=_TRANSCENDENTAL_TOL),
    unary("atan", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("sinh", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("cosh", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("asinh", FLOATC, tol=_TRANSCENDENTAL_TOL),
    unary("acosh", FLOATC, domain=interval(1.2, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("atanh", FLOATC, domain=interval(-0.9, 0.9), tol=_TRANSCENDENTAL_TOL),
    unary("sqrt", FLOATC, domain=interval(0.1, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("rsqrt", FLOATC, domain=interval(0.1, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("cbrt", FLOAT, domain=away(0.1, 5.0), tol=_TRANSCENDENTAL_TOL),
    unary("abs", SIGNED + FLOATC, domain=away(0.1, 3.0)),
    unary("not", BOOL + INT, nondiff="zero", exact=True, reference=lax_fn("bitwise_not")),
    _integer_pow(unary("integer_pow", NUMC, domain=away(0.2, 2.0), tol=_TRANSCENDENTAL_TOL,
                       params=st.fixed_dictionaries({"y": st.integers(-3, 3)}),
                       reference=lax_fn("integer_pow", "y"),
                       notes="integer dtypes take only y >= 0 (JAX raises TypeError otherwise)")),
    unary("square", NUMC, tol=_TRANSCENDENTAL_TOL),
    unary("erf", FLOAT, tol=_TRANSCENDENTAL_TOL,
          notes="oracle: scipy.special.erf in float64; XLA float32: <= 4 ulps"),
    unary("erf_inv", FLOAT, domain=interval(-0.9, 0.9), elements=interval(-1.0, 1.0),
          tol=_SPECIAL_TOL, notes="oracle: scipy.special.erfinv in float64; XLA float32: "
                                   "<= 61 ulps (near +-1)"),
    unary("lgamma", FLOAT, domain=interval(0.5, 5.0), elements=interval(0.05, 8.0),
          tol=_SPECIAL_TOL, fd_tol=(1e-5, 1e-5),
          notes="oracle: scipy.special.gammaln (+inf at -inf, as XLA); XLA float32: 1e-5 "
                "absolute near the zeros at 1 and 2 (3741 ulps of the tiny values there; "
                "19146 near the zeros of x < 0)"),
    unary("digamma", FLOAT, domain=interval(0.5, 5.0), elements=interval(0.05, 8.0),
          tol=_SPECIAL_TOL, fd_tol=(1e-5, 1e-5),
          notes="oracle: scipy.special.psi (nan at +-0, as XLA); XLA float32: <= 517 ulps "
                "(near the root 1.4616), 1035 for x < 0"),
    unary("real", COMPLEX, linear=True, exact=True),
    unary("imag", COMPLEX, linear=True, exact=True),
    unary("conj", ("float32",) + COMPLEX, linear=True, exact=True,
          notes="the result is complex for a real operand, as in JAX"),
]




# ---------------------------------------------------------------- binary

def binary(name, dtypes, *, elements=(), domain=(), nondiff=None, diff_args=None, linear=None,
           reference=None, tol=None, exact=False, n=2, fd_tol=(1e-6, 1e-6), notes=""):
    """The entry of an n-ary (default binary) elementwise primitive."""
    diff = diff_args or (no_args if nondiff else all_args)
    invalid = (_mismatched_dtypes(n), _mismatched_shapes(n, _typical(dtypes)))
    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="elementwise",
        signature=nary(n, elements, domain), reference=reference or lax_fn(name),
        tol=tol or {}, exact=exact, diff_args=diff, nondiff=nondiff,
        linear_args=linear or no_args, invalid=invalid, fd_tol=fd_tol, notes=notes)


def _pow(spec):
    """pow also takes an integer exponent; an integer base is invalid."""
    base = spec.signature

    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            s = draw(base(dtype, diff))
            if diff or not draw(st.sampled_from((False, False, True))):
                return s
            y = Arg(s.args[1].shape, draw(st.sampled_from(("int32", "int8"))), False,
                    st.integers(-3, 3))
            return s._replace(args=(s.args[0], y))
        return sig()
    ints = np.ones((2,), np.int32)
    return dataclasses.replace(spec, signature=signature, invalid=(
        Invalid("an integer base", (ints, ints), {}), spec.invalid[1]))


def _maxmin_domain():
    """max/min: |x| <= 1 < 1.5 <= |y|, so the larger one depends on y's sign and never ties."""
    return (away(0.1, 1.0), away(1.5, 3.0))


_COMPARE = ALL + ("float32",)
_BINARY = [
    binary("add", NUMC, linear=all_args, exact=False),
    binary("add_any", NUMC, linear=all_args, reference=lax_fn("add"),
           notes="the tangent accumulation primitive (JAX's add_jaxvals); reference: lax.add"),
    binary("sub", NUMC, linear=all_args),
    binary("mul", NUMC, linear=all_args),
    binary("div", NUMC, domain=(SMOOTH, away(0.5, 3.0)), linear=args_at(0),
           tol=_TRANSCENDENTAL_TOL),
    binary("rem", NUM, domain=(away(1.6, 2.1), away(1.1, 1.4)), tol=_TRANSCENDENTAL_TOL),
    _pow(binary("pow", FLOATC, domain=(interval(0.5, 3.0), interval(-2.0, 2.0)),
                elements=(interval(0.0, 4.0), interval(-3.0, 3.0)), tol=scaled_tolerance(5),
                notes="the exponent may also be of an integer dtype (float ** int)")),
    binary("max", ALL + COMPLEX, domain=_maxmin_domain(), exact=True),
    binary("min", ALL + COMPLEX, domain=_maxmin_domain(), exact=True),
    binary("atan2", FLOATC, domain=(away(0.5, 3.0), away(0.5, 3.0)), tol=_TRANSCENDENTAL_TOL,
           elements=(complex_only(interval(0.1, 8.0)),) * 2,
           notes="complex operands: -i log((y + i x) / sqrt(x**2 + y**2)) as XLA; the samples "
                 "keep off log's branch cut, where XLA's sign of pi depends on rounding"),
    binary("nextafter", FLOAT, nondiff="raises", exact=True),
    binary("and", BOOL + INT, nondiff="zero", exact=True, reference=lax_fn("bitwise_and")),
    binary("or", BOOL + INT, nondiff="zero", exact=True, reference=lax_fn("bitwise_or")),
    binary("xor", BOOL + INT, nondiff="zero", exact=True, reference=lax_fn("bitwise_xor")),
    binary("shift_left", INT, nondiff="zero", exact=True),
    binary("shift_right_logical", INT, nondiff="zero", exact=True),
    binary("shift_right_arithmetic", INT, nondiff="zero", exact=True),
    binary("eq", ALL + COMPLEX, nondiff="zero", exact=True),
    binary("ne", ALL + COMPLEX, nondiff="zero", exact=True),
    binary("lt", ALL, nondiff="zero", exact=True),
    binary("le", ALL, nondiff="zero", exact=True),
    binary("gt", ALL, nondiff="zero", exact=True),
    binary("ge", ALL, nondiff="zero", exact=True),
    binary("polygamma", FLOAT, elements=(integers_as_float(0, 3), interval(0.05, 8.0)),
           domain=(integers_as_float(0, 2), interval(0.5, 4.0)), diff_args=args_at(1),
           tol=_SPECIAL_TOL, fd_tol=(1e-5, 1e-5),
           notes="m (the order) must hold integers; only x is differentiable (ValueError for m, "
                 "as JAX); oracle: scipy.special.polygamma with XLA's nan at +inf and, for "
                 "even m, at the poles; XLA float32: <= 3 ulps for x > 0"),
]


# ---------------------------------------------------------------- select_n, clamp

def _select_n_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        which_dtype = draw(st.sampled_from(("bool", "int32")))
        n = 2 if which_dtype == "bool" else draw(st.integers(1, 3))
        which_shape = draw(st.sampled_from((shape, shape, ())))
        which_elems = st.booleans() if which_dtype == "bool" else st.integers(0, n - 1)
        weak = draw(weak_flag(dtype))
        cases = [Arg(shape, dtype, weak, _call(SMOOTH if diff else None, dtype)) for _ in range(n)]
        return Signature((Arg(which_shape, which_dtype, False, which_elems), *cases), {})
    return sig()


def _select_n_invalid():
    f = np.ones((2,), np.float32)
    return (Invalid("a float predicate", (f, f, f), {}),
            Invalid("cases of different dtypes", (np.ones((2,), bool), f, f.astype(np.int32)), {}),
            Invalid("a predicate of another shape", (np.ones((3,), bool), f, f), {}))


_SELECT_N = PrimitiveSpec(
    name="select_n", dtypes=ALL + COMPLEX, family="elementwise", signature=_select_n_signature,
    reference=lambda jax, which, *cases: jax.lax.select_n(which, *cases), exact=True,
    diff_args=args_from(1), linear_args=args_from(1), invalid=_select_n_invalid(),
    notes="which: bool (at most 2 cases) or int32 in [0, #cases), scalar or of the cases' shape")


def _clamp_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        lo_shape, hi_shape = (draw(st.sampled_from((shape, ()))) for _ in range(2))
        if diff:
            inner = st.one_of(floats(-1.5, 1.5, dtype), floats(3.5, 4.0, dtype),
                              floats(-4.0, -3.5, dtype))
            elems = (floats(-3.0, -2.5, dtype), inner, floats(2.5, 3.0, dtype))
        else:
            elems = (None, None, None)
        shapes_ = (lo_shape, shape, hi_shape)
        return Signature(tuple(Arg(s, dtype, False, e) for s, e in zip(shapes_, elems)), {})
    return sig()


_CLAMP = PrimitiveSpec(
    name="clamp", dtypes=ALL + COMPLEX, family="elementwise", signature=_clamp_signature,
    reference=lambda jax, lo, x, hi: jax.lax.clamp(lo, x, hi), exact=True, diff_args=all_args,
    invalid=(Invalid("a bound of another shape", (np.zeros((3,), np.float32),
                                                   np.ones((2,), np.float32),
                                                   np.ones((2,), np.float32)), {}),
             Invalid("bounds of another dtype", (np.zeros((), np.int32), np.ones((2,), np.float32),
                                                 np.ones((), np.float32)), {})),
    notes="min and max are scalars or of the operand's shape; min(max(x, lo), hi)")


# ---------------------------------------------------------------- convert_element_type

def _convert_signature(dtype, diff):
    from .base import CANDIDATES
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        new = dtype if diff else draw(st.sampled_from(CANDIDATES))
        weak = draw(st.booleans()) if new in ("int32", "float32") else False
        elems = _call(SMOOTH if diff else None, dtype)
        return Signature((Arg(shape, dtype, draw(weak_flag(dtype)), elems),),
                         {"new_dtype": np_dtype(new), "weak_type": weak, "sharding": None})
    return sig()


def _convert_reference(jax, x, *, new_dtype, weak_type, sharding):
    return jax.lax.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type,
                                               sharding=sharding)


_CONVERT = PrimitiveSpec(
    name="convert_element_type", dtypes=ALL + COMPLEX, family="elementwise",
    signature=_convert_signature, reference=_convert_reference, exact=True,
    diff_args=all_args, linear_args=all_args,
    notes="float to int truncates toward zero, saturating; NaN becomes 0 (XLA's semantics)")


SPECS = _UNARY + _BINARY + [_SELECT_N, _CLAMP, _CONVERT]
