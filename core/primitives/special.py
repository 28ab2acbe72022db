"""Special-function primitives (erfc, incomplete gamma and beta, Bessel i0e/i1e, Hurwitz zeta,
random_gamma_grad) with their abstract-eval, JVP and batching rules, and the lax functions."""
import math

from .. import dtypes
from ..trace import get_aval
from ..transforms.ad import defjvp, defjvp_with_output
from .elementwise import (_FLOAT, _const, _lax_binary, _lax_unary, abs, add, binop, div, exp,
                          full_like, gt, lgamma, lift_scalars, log, log1p, mul, neg, select_n,
                          sign, square, sub, unop)

erfc_p = unop("erfc", _FLOAT)
erfc = _lax_unary(erfc_p)
bessel_i0e_p = unop("bessel_i0e", _FLOAT)
bessel_i0e = _lax_unary(bessel_i0e_p)
bessel_i1e_p = unop("bessel_i1e", _FLOAT)
bessel_i1e = _lax_unary(bessel_i1e_p)
igamma_p = binop("igamma", _FLOAT)
igamma = _lax_binary(igamma_p)
igammac_p = binop("igammac", _FLOAT)
igammac = _lax_binary(igammac_p)
igamma_grad_a_p = binop("igamma_grad_a", _FLOAT)
igamma_grad_a = _lax_binary(igamma_grad_a_p)
zeta_p = binop("zeta", _FLOAT)
zeta = _lax_binary(zeta_p)
# JAX 0.10.2 inlines lax.random_gamma_grad as two while loops (XLA's series and continued
# fraction); refjax keeps it one primitive so that the oracle computes it exactly.
random_gamma_grad_p = binop("random_gamma_grad", _FLOAT)
random_gamma_grad = _lax_binary(random_gamma_grad_p)
_weak_random_gamma_grad = random_gamma_grad_p.abstract_eval


@random_gamma_grad_p.def_abstract_eval
def _random_gamma_grad_abstract_eval(a, x):
    """Never weakly typed: JAX's while loops give a strong result for weak operands."""
    return _weak_random_gamma_grad(a, x).update(weak_type=False)
regularized_incomplete_beta_p = binop("regularized_incomplete_beta", _FLOAT)

for _p in (igamma_grad_a_p, zeta_p, random_gamma_grad_p):
    _p.nondiff_reason = f"{_p.name} has no derivative rule (as in JAX)"


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), elementwise (binds
    `regularized_incomplete_beta`)."""
    a, b, x = lift_scalars("regularized_incomplete_beta", (a, b, x))
    return regularized_incomplete_beta_p.bind(a, b, x)


def _gaussian_jvp(scale):
    """t * scale * exp(-x**2): the derivatives of erf and erfc."""
    return lambda t, x: mul(_const(x, scale), mul(t, exp(neg(square(x)))))


defjvp(erfc_p, _gaussian_jvp(-2 / math.sqrt(math.pi)))


def _igamma_density(a, x):
    """d igamma(a, x) / dx = exp(-x + (a - 1) log x - lgamma(a))."""
    return exp(sub(add(neg(x), mul(sub(a, full_like(a, 1)), log(x))), lgamma(a)))


defjvp(igamma_p, lambda t, a, x: mul(t, igamma_grad_a(a, x)),
       lambda t, a, x: mul(t, _igamma_density(a, x)))
defjvp(igammac_p, lambda t, a, x: neg(mul(t, igamma_grad_a(a, x))),
       lambda t, a, x: neg(mul(t, _igamma_density(a, x))))


def _betainc_ab(t, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_x(t, a, b, x):
    one = _const(a, 1)
    lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return mul(exp(sub(add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x))), lbeta)), t)


defjvp(regularized_incomplete_beta_p, _betainc_ab, _betainc_ab, _betainc_x)
defjvp_with_output(bessel_i0e_p, lambda t, y, x: mul(t, sub(bessel_i1e(x), mul(sign(x), y))))


def _bessel_i1e_jvp(t, y, x):
    """i0e(x) - y (sign(x) + 1/x), and 1/2 at |x| <= eps where 1/x is unsafe (as JAX)."""
    eps = float(dtypes.finfo(get_aval(x).dtype).eps)
    not_tiny = gt(abs(x), _const(x, eps))
    safe_x = select_n(not_tiny, full_like(x, eps), x)
    dy = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), div(_const(x, 1), safe_x))))
    return mul(t, select_n(not_tiny, full_like(x, 0.5), dy))


defjvp_with_output(bessel_i1e_p, _bessel_i1e_jvp)
