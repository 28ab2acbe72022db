"""Spec entries of the special-function primitives (core/primitives/special.py).

The oracle is scipy.special in float64, rounded once; the tolerances are what XLA's float32
algorithms need against it, measured on 2000-3000 random float32 points of each domain below
(max ulp distance, values with |v| > 1e-30; float64 agrees to about 1e-11 relative)."""
import dataclasses

from hypothesis import strategies as st

from .base import FLOAT, floats, kind, scaled_tolerance
from .elementwise import args_at, away, binary, interval, lax_fn, unary


def positive_or_edges(lo=0.05, hi=8.0):
    """Positive values with, sometimes, 0 or +inf (the domain edges whose values are fixed)."""
    def elements(name):
        if kind(name) != "f":
            return None
        return st.one_of(floats(lo, hi, name), floats(lo, hi, name),
                         st.sampled_from((0.0, float("inf"))))
    return elements


def never_weak(spec):
    """`spec` whose samples are never weakly typed (where real JAX fails on weak operands)."""
    def strong(sig):
        return sig._replace(args=tuple(a._replace(weak=False) for a in sig.args))
    return dataclasses.replace(spec, signature=lambda dtype, diff: spec.signature(dtype, diff)
                               .map(strong))


_TOL = scaled_tolerance(10)        # float32 (1e-4, 1e-5): a few hundred ulps near zeros
_BETA_TOL = scaled_tolerance(60)   # float32 (6e-4, 6e-5): XLA's betainc, 611 ulps measured
_POS = interval(0.5, 4.0)

SPECS = [
    unary("erfc", FLOAT, tol=_TOL,
          notes="XLA float32: <= 2 ulps for normal results (it flushes subnormal ones)"),
    never_weak(unary("bessel_i0e", FLOAT, tol=_TOL, domain=away(0.1, 3.0),
                     notes="XLA float32: <= 3 ulps; samples never weak: JAX 0.10.2 raises "
                           "TypeError (lax.div float64, float32) for a weak float32 under x64")),
    unary("bessel_i1e", FLOAT, tol=_TOL, domain=away(0.1, 3.0), notes="XLA float32: <= 9 ulps"),
    binary("igamma", FLOAT, elements=(positive_or_edges(),) * 2, domain=(_POS, _POS), tol=_TOL,
           fd_tol=(1e-5, 1e-5),
           notes="XLA float32: <= 65 ulps; its edge values (x = 0, inf; a = 0, inf) as XLA's"),
    binary("igammac", FLOAT, elements=(positive_or_edges(),) * 2, domain=(_POS, _POS), tol=_TOL,
           fd_tol=(1e-5, 1e-5), notes="XLA float32: <= 97 ulps"),
    binary("igamma_grad_a", FLOAT, elements=(positive_or_edges(),) * 2, nondiff="raises",
           tol=_TOL, notes="oracle: quad of d/da of the integrand (scipy lacks it); XLA "
                           "float32: <= 91 ulps"),
    binary("random_gamma_grad", FLOAT, elements=(positive_or_edges(),) * 2, nondiff="raises",
           tol=_TOL, notes="a primitive in refjax (JAX 0.10.2 inlines XLA's while loops); "
                           "XLA float32: <= 218 ulps"),
    binary("zeta", FLOAT, elements=(interval(1.1, 8.0), positive_or_edges()), nondiff="raises",
           tol=_TOL, notes="Hurwitz zeta(x, q); XLA float32: <= 5 ulps"),
    binary("regularized_incomplete_beta", FLOAT, n=3,
           elements=(interval(0.1, 8.0), interval(0.1, 8.0), interval(0.0, 1.0)),
           domain=(_POS, _POS, interval(0.1, 0.9)), diff_args=args_at(2), tol=_BETA_TOL,
           fd_tol=(1e-5, 1e-5), reference=lax_fn("betainc"),
           notes="differentiable in x only (ValueError for a and b, as JAX); XLA float32: "
                 "<= 611 ulps"),
]


def _composite_in_jax(spec):
    """JAX 0.10.2's random_gamma_grad is a composite: mismatched shapes fail in its
    broadcasting with a ValueError (refjax's primitive raises TypeError, as lax's binops)."""
    invalid = tuple(c._replace(jax_error=ValueError) if "shapes" in c.what else c
                    for c in spec.invalid)
    return dataclasses.replace(spec, invalid=invalid)


SPECS = [dataclasses.replace(_composite_in_jax(s) if s.name == "random_gamma_grad" else s,
                             family="special") for s in SPECS]
