"""jax.scipy.special's exponential and trigonometric integrals (exp1, expi, expn, sici), the
dilogarithm spence, and the Bernoulli numbers."""
import fractions
import math
import operator

import numpy as np

from ...core.errors import ConcretizationTypeError
from ...core.trace import Tracer
from ...core.transforms.custom import custom_jvp
from .. import lax
from .. import numpy as jnp
from .special_faddeeva import _as_float, _finite, _strong
from .special_functions import _c, _float_only, _real, gamma, gammaln

# The depth of E_n's continued fraction (x > 1, or |z| >= 4 for sici): its error at x = 1
# is near exp(-4 sqrt(depth x)), below float64's precision.
_CF_DEPTH = 80
# Terms of E_n's power series (x <= 1): 1/30! is far below float64's precision.
_SERIES_TERMS = 30


def _en_continued_fraction(n, x):
    """E_n(x) = exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...))),
    evaluated bottom-up; x may be complex (for sici's E_1(ix))."""
    def step(j, tail):
        i = _CF_DEPTH - j
        return -i * (n - 1 + i) / (x + n + 2 * i + tail)
    tail = lax.fori_loop(0, _CF_DEPTH, step, jnp.zeros_like(x))
    return jnp.exp(-x) / (x + n + tail)


def _en_series(n, x):
    """E_n(x) for 0 < x <= 1: -sum_k (-x)**k / (k! (k + 1 - n)) plus, for integer n, the
    k = n - 1 term's limit (-x)**(n-1) / (n-1)! (digamma(n) - log x), and for other n,
    x**(n-1) Gamma(1 - n)."""
    integer = n == jnp.round(n)
    k = np.arange(_SERIES_TERMS, dtype=x.dtype)
    xs, ns = jnp.expand_dims(x, -1), jnp.expand_dims(n, -1)
    denominator = k + 1 - ns
    special_k = jnp.expand_dims(integer, -1) & (denominator == 0)
    # (-x)**k / k! as a running product: a power's rounding would be larger (XLA's float32)
    powers = jnp.cumprod(jnp.where(k == 0, _c(x, 1.0), -xs / np.maximum(k, 1)), axis=-1)
    terms = powers / jnp.where(special_k, _c(x, 1.0), denominator)
    head = -jnp.sum(jnp.where(special_k, _c(x, 0.0), terms), axis=-1)
    m = jnp.where(integer, n - 1, _c(n, 0.0))
    # digamma(m + 1) = -gamma + H_m (past the series' length the term is negligible)
    harmonic = jnp.sum(jnp.where(k < jnp.expand_dims(m, -1), 1 / (k + 1), _c(x, 0.0)), axis=-1)
    digamma_n = harmonic - _c(x, np.euler_gamma)
    at_integer = (-x) ** m * jnp.exp(-gammaln(m + 1)) * (digamma_n - jnp.log(x))
    safe_n = jnp.where(integer, _c(n, 0.5), n)
    elsewhere = x ** (safe_n - 1) * gamma(1 - safe_n)
    return head + jnp.where(integer, at_integer, elsewhere)


def _expn(n, x):
    """E_n(x) for real n and x: nan for n < 0 or x < 0, 1/(n-1) at x = 0 for n > 1 (inf for
    n <= 1), exp(-x)/x for n = 0, 0 at x = inf."""
    safe_x = jnp.where((x > 0) & ~jnp.isinf(x), x, _c(x, 2.0))
    small = safe_x <= 1
    series = _en_series(n, jnp.where(small, safe_x, _c(x, 0.5)))
    cf = _en_continued_fraction(n, jnp.where(small, _c(x, 2.0), safe_x))
    value = jnp.where(n == 0, jnp.exp(-safe_x) / safe_x, jnp.where(small, series, cf))
    at_zero = jnp.where(n > 1, 1 / jnp.where(n > 1, n - 1, _c(n, 1.0)), _c(x, np.inf))
    value = jnp.where(x == 0, at_zero, jnp.where(jnp.isinf(x), _c(x, 0.0), value))
    return jnp.where((n < 0) | (x < 0) | jnp.isnan(n) | jnp.isnan(x), _c(x, np.nan), value)


@custom_jvp
def _expn_custom(n, x):
    return _expn(n, x)


# n is not differentiated (JAX's derivative in n is 0); dE_n/dx = -E_{n-1}(x) = ((n - 1)
# E_n(x) - exp(-x)) / x, by E_n's recurrence.
_expn_custom.defjvps(None, lambda t, ans, n, x: t * ((n - 1) * ans - jnp.exp(-x)) / x)


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t**n dt (ValueError
    for complex inputs, as in JAX; n is not differentiated, as in JAX)."""
    n, x = _real("expn", n, x)
    n, x = jnp.broadcast_arrays(n, x)
    n32, x32 = _as_float(n), _as_float(x)
    return _strong(_expn_custom(n32, x32).astype(x.dtype))


@custom_jvp
def _exp1(x):
    return _expn(jnp.ones_like(x), x)


_exp1.defjvps(lambda t, ans, x: -t * jnp.exp(-x) / x)


def exp1(x):
    """The exponential integral E_1(x) = int_x^inf exp(-t) / t dt: nan for x < 0 (real x only,
    ValueError for complex, as in JAX)."""
    x = _real("exp1", x)[0]
    return _strong(_exp1(_as_float(x)).astype(x.dtype))


# Ei(x) for x > 0: its power series below _EI_ASYMPTOTIC (a sum of positive terms, _EI_TERMS
# of them reaching float64's precision at 40), its asymptotic series above (whose error near
# exp(-x) sqrt(2 pi x) is below float64's precision there).
_EI_ASYMPTOTIC = 40.0
_EI_TERMS = 110


def _ei_series(x):
    def step(k, carry):
        term, total = carry
        term = term * x / k
        return term, total + term / k
    _, total = lax.fori_loop(1, _EI_TERMS, step, (jnp.ones_like(x), jnp.zeros_like(x)))
    return _c(x, np.euler_gamma) + jnp.log(x) + total


def _ei_asymptotic(x):
    k = int(_EI_ASYMPTOTIC)
    total = _c(x, 1.0)
    for j in range(k, 0, -1):
        total = 1 + total * _c(x, j) / x
    return jnp.exp(x - jnp.log(x)) * total


@custom_jvp
def _expi(x):
    safe = jnp.where(x > 0, _finite(x), _c(x, 1.0))
    large = safe > _EI_ASYMPTOTIC
    positive = jnp.where(large, _ei_asymptotic(jnp.where(large, safe, _c(x, 50.0))),
                         _ei_series(jnp.where(large, _c(x, 1.0), safe)))
    negative = -_expn(jnp.ones_like(x), -x)
    value = jnp.where(x > 0, jnp.where(x == np.inf, x, positive), negative)
    return jnp.where(x == 0, _c(x, -np.inf), value)


_expi.defjvps(lambda t, ans, x: t * jnp.exp(x) / x)


def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf exp(-t) / t dt: -inf at 0, -0 at -inf
    (JAX gives nan at 0 and at +-inf; real x only)."""
    x = _real("expi", x)[0]
    return _strong(_expi(_as_float(x)).astype(x.dtype))


# Below _SICI_SERIES, Si and Ci come from their power series (_SICI_TERMS terms reach float64's
# precision at 4); above, from E_1(ix) = -Ci(x) + i (Si(x) - pi/2) by the continued fraction.
_SICI_SERIES = 4.0
_SICI_TERMS = 17


def _sici_series(x):
    x2 = x * x
    si, ci = _c(x, 0.0), _c(x, 0.0)
    for k in range(_SICI_TERMS - 1, -1, -1):
        si = si * x2 + _c(x, (-1) ** k / ((2 * k + 1) * math.factorial(2 * k + 1)))
        if k > 0:
            ci = ci * x2 + _c(x, (-1) ** k / (2 * k * math.factorial(2 * k)))
    return si * x, _c(x, np.euler_gamma) + jnp.log(x) + ci * x2


def _sici_large(x):
    z = lax.complex(jnp.zeros_like(x), x)
    e1 = _en_continued_fraction(jnp.ones_like(z), z)
    return jnp.imag(e1) + _c(x, math.pi / 2), -jnp.real(e1)


@custom_jvp
def _sici(x):
    ax = jnp.abs(x)
    small = ax <= _SICI_SERIES
    si_s, ci_s = _sici_series(jnp.where(small, ax, _c(x, 1.0)))
    si_l, ci_l = _sici_large(jnp.where(small | jnp.isinf(ax), _c(x, 8.0), ax))
    si = jnp.where(small, si_s, jnp.where(jnp.isinf(ax), _c(x, math.pi / 2), si_l))
    ci = jnp.where(small, ci_s, jnp.where(jnp.isinf(ax), _c(x, 0.0), ci_l))
    # Ci of a negative x is Ci(|x|), the real part of the principal value (as JAX and scipy);
    # Ci(-inf) is nan in both.
    return jnp.copysign(si, x), jnp.where(x == 0, _c(x, -np.inf), jnp.where(x == -np.inf, np.nan, ci))


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sinc = jnp.where(x == 0, _c(x, 1.0), jnp.sin(x) / x)
    return _sici(x), (t * sinc, t * jnp.cos(x) / x)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si = int_0^x sin t / t dt, Ci = gamma +
    log|x| + int_0^x (cos t - 1) / t dt (real x only)."""
    x = _real("sici", x)[0]
    si, ci = _sici(_as_float(x))
    return _strong(si.astype(x.dtype)), _strong(ci.astype(x.dtype))


# spence(x) = Li2(1 - x) = sum_n B_n u**(n+1) / (n+1)!, u = -log x, for x in [1/2, 2]
# (|u| <= log 2, terms falling as (u / 2 pi)**n: 20 reach float64's precision).
_SPENCE_TERMS = 20


def _bernoulli_fractions(n):
    """B_0 ... B_n as exact fractions (B_1 = -1/2), by the Akiyama-Tanigawa algorithm."""
    out, row = [], []
    for m in range(n + 1):
        row.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return [-b if i == 1 else b for i, b in enumerate(out)]


_SPENCE_COEFFICIENTS = [float(b / math.factorial(i + 1))
                        for i, b in enumerate(_bernoulli_fractions(_SPENCE_TERMS))]


def _spence_central(x):
    u = -jnp.log(x)
    total = _c(x, 0.0)
    for coefficient in reversed(_SPENCE_COEFFICIENTS):
        total = total * u + _c(x, coefficient)
    return jnp.where(u == 0, _c(x, 0.0), total * u)  # spence(1) is +0, where u = -log 1 is -0


def _spence_below_2(x):
    """spence on [0, 2]: below 1/2 by the reflection Li2(z) + Li2(1 - z) = pi**2/6 -
    log z log(1 - z), with z = 1 - x."""
    low = x < 0.5
    central = _spence_central(jnp.where(low, 1 - x, x))
    reflected = _c(x, math.pi ** 2 / 6) - jnp.log(x) * jnp.log1p(-x) - central
    return jnp.where(x == 0, _c(x, math.pi ** 2 / 6), jnp.where(low, reflected, central))


@custom_jvp
def _spence(x):
    # Above 2, the inversion spence(x) = -spence(1/x) - log(x)**2 / 2.
    high = x > 2
    inner = _spence_below_2(jnp.where(high, 1 / _finite(x), x))
    value = jnp.where(high, -inner - jnp.log(x) ** 2 / 2, inner)
    return jnp.where(x < 0, _c(x, np.nan), jnp.where(x == np.inf, -x, value))


_spence.defjvps(lambda t, ans, x: t * jnp.where(x == 1, _c(x, -1.0), jnp.log(x) / (1 - x)))


def spence(x):
    """Spence's function int_1^x log t / (1 - t) dt = Li2(1 - x) for real x >= 0 (nan for
    x < 0; float32/float64 only, TypeError otherwise, as in JAX). Its derivative is
    log x / (1 - x) (JAX's is nan)."""
    return _spence(_float_only("spence", x))


def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2) as a float array; n must be a concrete
    non-negative integer."""
    if isinstance(n, Tracer):
        raise ConcretizationTypeError(n, "Argument n of bernoulli")
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    values = [float(b) for b in _bernoulli_fractions(n)]
    return _strong(jnp.asarray(np.array(values, jnp.zeros(()).dtype)))
