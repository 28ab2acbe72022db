"""The implementation of refjax.scipy.special (that module re-exports its public names)."""
import math
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.trace import Tracer
from ...core.transforms.custom import custom_jvp
from .. import lax
from .. import numpy as jnp
from ..nn.functions import _inexact, logsumexp
from ..nn.functions import softmax as _nn_softmax, log_softmax as _nn_log_softmax


def _real(name, *args):
    """args promoted to a common inexact dtype; ValueError, as JAX's, for complex ones."""
    out = _inexact(name, *args)
    if _dt.issubdtype(out[0].dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return out


def _c(x, value):
    """value as a constant of x's dtype, strongly typed."""
    return np.array(value, x.dtype)


# ---------------------------------------------------------------- gamma and beta functions

def gammaln(x):
    """log|Gamma(x)|."""
    return lax.lgamma(_inexact("gammaln", x)[0])


def gammasgn(x):
    """The sign of Gamma(x): nan at the poles and for nan, -1 or 1 elsewhere."""
    x = _real("gammasgn", x)[0]
    floor_x = jnp.floor(x)
    negative = x < 0
    nan_ = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.where(nan_, _c(x, np.nan), jnp.where(minus, _c(x, -1.0), _c(x, 1.0)))


def gamma(x):
    """Gamma(x) for real x (sign times exp(lgamma))."""
    x = _real("gamma", x)[0]
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x):
    """log Gamma(x) for real x > 0, nan for x <= 0 (complex inputs are not supported here)."""
    x = _real("loggamma", x)[0]
    return jnp.where(x > 0, lax.lgamma(x), _c(x, np.nan))


def digamma(x):
    """The logarithmic derivative of Gamma."""
    return lax.digamma(_inexact("digamma", x)[0])


def polygamma(n, x):
    """The n-th derivative of digamma; n must be of integer type (ValueError otherwise)."""
    n_dtype = jnp.asarray(n).dtype
    if not _dt.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = _real("polygamma", n, x)
    return lax.polygamma(n, x)


def betaln(a, b):
    """log|B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = _inexact("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    """The beta function B(a, b), with its sign."""
    a, b = _real("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return lax.betainc(*_real("betainc", a, b, x))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return lax.igamma(*_inexact("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x)."""
    return lax.igammac(*_inexact("gammaincc", a, x))


def factorial(n, exact=False):
    """n! as Gamma(n + 1) (0 for negative n); exact=True is not supported (as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n = _inexact("factorial", n)[0]
    return jnp.where(n < 0, _c(n, 0), jnp.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
    """The binomial coefficient C(N, k) (with repetition: C(N + k - 1, k)), 0 outside its domain."""
    N, k = _inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), _c(N, 1.0), comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    n_, k_ = jnp.where(ok, N, _c(N, 0)), jnp.where(ok, k, _c(k, 0))
    out = jnp.exp(gammaln(n_ + 1) - gammaln(k_ + 1) - gammaln(n_ + 1 - k_))
    return jnp.where(ok, out, _c(out, 0.0))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a Python int)."""
    if isinstance(d, Tracer):
        raise TypeError("multigammaln: the d argument of multigammaln must be concrete, got a "
                        "traced value")
    d = operator.index(d)
    a = _inexact("multigammaln", a)[0]
    b = np.arange(d, dtype=a.dtype) / 2
    terms = gammaln(jnp.expand_dims(a, -1) - b)
    return jnp.sum(terms, axis=-1) + _c(a, 0.25 * d * (d - 1) * math.log(math.pi))


@custom_jvp
def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z) (1 for m = 0)."""
    z, m = _real("poch", z, m)
    return jnp.where(m == 0.0, _c(z, 1), gamma(z + m) / gamma(z))


poch.defjvps(lambda t, ans, z, m: t * ans * (digamma(z + m) - digamma(z)),
             lambda t, ans, z, m: t * ans * digamma(z + m))


# ---------------------------------------------------------------- error functions, normal CDF

def erf(x):
    """The error function."""
    return lax.erf(_inexact("erf", x)[0])


def erfc(x):
    """The complementary error function 1 - erf(x)."""
    return lax.erfc(_inexact("erfc", x)[0])


def erfinv(x):
    """The inverse error function."""
    return lax.erf_inv(_inexact("erfinv", x)[0])


def _float_only(name, x):
    """x as an array of float32 or float64; TypeError, as JAX's, for any other dtype."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    return x


def _ndtr(x):
    """Phi(x) from erf near 0 and from erfc in the tails (where erf would cancel)."""
    w = x * _c(x, math.sqrt(0.5))
    z = jnp.abs(w)
    y = jnp.where(z < _c(x, math.sqrt(0.5)), 1 + lax.erf(w),
                  jnp.where(w > 0, 2 - lax.erfc(z), lax.erfc(z)))
    return _c(x, 0.5) * y


def ndtr(x):
    """The standard normal CDF Phi(x) (float32/float64 only, as in JAX)."""
    return _ndtr(_float_only("ndtr", x))


def _norm_logpdf(x):
    return _c(x, -0.5 * math.log(2 * math.pi)) - x * x / 2


# Below _LOWER (where Phi nears the smallest normal float), log Phi comes from its asymptotic
# series; above 0, from log1p(-Phi(-x)), accurate where Phi(x) rounds to 1.
_LOWER = {np.dtype(np.float32): -10.0, np.dtype(np.float64): -37.0}


def _asymptotic_series(x, order):
    """1 + sum_{n=1}^{order} (-1)^n (2n-1)!! / x^(2n): Phi(x) * -x / pdf(x) for x -> -inf."""
    x2 = x * x
    total, term = _c(x, 1.0), _c(x, 1.0)
    for n in range(1, order + 1):
        term = -term * _c(x, 2 * n - 1) / x2
        total = total + term
    return total


def _log_ndtr(x, order):
    lower = _LOWER[x.dtype]
    positive = x > 0
    mid = _ndtr(jnp.where(positive, -x, jnp.maximum(x, _c(x, lower))))
    xl = jnp.minimum(x, _c(x, lower))
    tail = _norm_logpdf(xl) - jnp.log(-xl) + jnp.log(_asymptotic_series(xl, order))
    return jnp.where(positive, jnp.log1p(-mid), jnp.where(x > lower, jnp.log(mid), tail))


def log_ndtr(x, series_order=3):
    """log Phi(x), accurate far into both tails (float32/float64 only, as in JAX)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError("series_order must be non-negative." if series_order < 0 else
                         "series_order must be <= 30.")
    return _log_ndtr_jvp_wrapped(_float_only("log_ndtr", x), series_order)


def _log_ndtr_primal(x, order):
    return _log_ndtr(x, order)


_log_ndtr_jvp_wrapped = custom_jvp(_log_ndtr_primal, nondiff_argnums=(1,))


@_log_ndtr_jvp_wrapped.defjvp
def _log_ndtr_jvp(order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, order)
    return ans, t * jnp.exp(_norm_logpdf(x) - ans)


def _ndtri_lower(q):
    """Phi^-1(q) for 0 < q <= 1/2: a rational first guess (Abramowitz & Stegun 26.2.23, error
    below 5e-4), then Newton steps on log Phi(x) = log q, which converge quadratically."""
    t = jnp.sqrt(-2 * jnp.log(q))
    num = _c(q, 2.515517) + t * (_c(q, 0.802853) + t * _c(q, 0.010328))
    den = 1 + t * (_c(q, 1.432788) + t * (_c(q, 0.189269) + t * _c(q, 0.001308)))
    x, log_q = num / den - t, jnp.log(q)
    for _ in range(4):
        lp = _log_ndtr(x, 3)
        x = x - (lp - log_q) * jnp.exp(lp - _norm_logpdf(x))
    return x


@custom_jvp
def _ndtri(p):
    q = jnp.minimum(p, 1 - p)
    safe = jnp.where((q > 0) & (q <= 0.5), q, _c(p, 0.125))
    x = _ndtri_lower(safe)
    x = jnp.where(p > 0.5, -x, x)
    # In the centre 2p - 1 is exact and erf_inv accurate relative to the (small) result.
    central = (p >= 0.25) & (p <= 0.75)
    x = jnp.where(central, _c(p, math.sqrt(2)) * lax.erf_inv(jnp.where(central, 2 * p - 1, 0)), x)
    x = jnp.where(p == 0, _c(p, -np.inf), jnp.where(p == 1, _c(p, np.inf), x))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), _c(p, np.nan), x)


_ndtri.defjvps(lambda t, ans, p: t * jnp.exp(-_norm_logpdf(ans)))


def ndtri(p):
    """The inverse of the standard normal CDF (float32/float64 only, as in JAX); nan outside
    [0, 1], -inf at 0 and inf at 1."""
    return _ndtri(_float_only("ndtri", p))


# ---------------------------------------------------------------- logistic, entropies

@custom_jvp
def logit(x):
    """log(x / (1 - x))."""
    x = _inexact("logit", x)[0]
    return jnp.log(x / (1 - x))


logit.defjvps(lambda t, ans, x: t / (x * (1 - x)))


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return lax.logistic(_inexact("expit", x)[0])


def _xlog_fn(name, log_fn, dlog_fn):
    """x * log_fn(y), 0 where x is 0 (unless y is nan), with JAX's derivative at x = 0."""
    @custom_jvp
    def f(x, y):
        x, y = _inexact(name, x, y)
        return jnp.where((x != 0) | jnp.isnan(y), x * log_fn(y), jnp.zeros_like(x))

    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = f(x, y)
        return out, (tx * log_fn(y) + ty * x * dlog_fn(y)).astype(out.dtype)
    f.defjvp(jvp)
    f.__name__ = f.__qualname__ = name
    return f


xlogy = _xlog_fn("xlogy", jnp.log, lambda y: 1 / y)
xlogy.__doc__ = "x * log(y), 0 where x is 0 (unless y is nan)."
xlog1py = _xlog_fn("xlog1py", jnp.log1p, lambda y: 1 / (1 + y))
xlog1py.__doc__ = "x * log1p(y), 0 where x is 0 (unless y is nan)."


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


_xlogx.defjvps(lambda t, ans, x: t * (jnp.log(x) + 1))


def entr(x):
    """-x log x for x >= 0 (0 at 0), -inf for negative x."""
    x = _real("entr", x)[0]
    return jnp.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 where p = 0 and q >= 0; inf elsewhere."""
    p, q = _real("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    safe_p, safe_q = jnp.where(both, p, _c(p, 1)), jnp.where(both, q, _c(q, 1))
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return jnp.where(both, value, jnp.where((p == 0) & (q >= 0), _c(p, 0), _c(p, np.inf)))


def kl_div(p, q):
    """p log(p / q) - p + q elementwise."""
    p, q = _real("kl_div", p, q)
    return rel_entr(p, q) - p + q


def boxcox(x, lmbda):
    """The Box-Cox transform: (x**lmbda - 1) / lmbda, log x at lmbda = 0."""
    x, lmbda = _inexact("boxcox", x, lmbda)
    return _boxcox(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x."""
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    return _boxcox(jnp.log1p(x), lmbda)


def _boxcox(log_x, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


# ---------------------------------------------------------------- Bessel, zeta, softmax

def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    return lax.bessel_i0e(_inexact("i0e", x)[0])


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x)."""
    return lax.bessel_i1e(_inexact("i1e", x)[0])


def i0(x):
    """The modified Bessel function of order 0."""
    x = _inexact("i0", x)[0]
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1."""
    x = _inexact("i1", x)[0]
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


@custom_jvp
def _zeta(x, q):
    return lax.zeta(x, q)


_ZETA_TERMS = 16


def _dzeta_dx(x, q):
    """d zeta(x, q) / dx = -sum_k log(k + q) (k + q)**-x: the first _ZETA_TERMS terms, then the
    Euler-Maclaurin tail (integral, half the first term, and the B2 and B4 corrections; the next
    correction is below 1e-12 relative for x >= 2)."""
    k = np.arange(_ZETA_TERMS, dtype=x.dtype)
    xs, qs = jnp.expand_dims(x, -1), jnp.expand_dims(q, -1)
    head = jnp.sum(jnp.log(k + qs) * (k + qs) ** -xs, axis=-1)
    a = q + _ZETA_TERMS
    log_a, xm1 = jnp.log(a), x - 1
    integral = a ** -xm1 * (log_a / xm1 + 1 / (xm1 * xm1))
    d1 = a ** (-x - 1) * (1 - x * log_a)
    d3 = a ** (-x - 3) * (-(x + 2) * (x * (x + 1) * log_a - (2 * x + 1)) + x * (x + 1))
    tail = integral + log_a * a ** -x / 2 - d1 / 12 + d3 / 720
    return -(head + tail)


_zeta.defjvps(lambda t, ans, x, q: t * _dzeta_dx(x, q),
              lambda t, ans, x, q: -t * x * lax.zeta(x + 1, q))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)**-x; q is required (as in JAX)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    return _zeta(*_inexact("zeta", x, q))


def softmax(x, /, *, axis=None):
    """jax.nn.softmax with scipy's default of every axis."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """jax.nn.log_softmax with scipy's default of every axis."""
    return _nn_log_softmax(x, axis=axis)


__all__ = ["beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr", "erf",
           "erfc", "erfinv", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "loggamma",
           "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "poch", "polygamma",
           "rel_entr", "softmax", "xlog1py", "xlogy", "zeta"]
