"""Special functions for the NumPy oracle: scipy.special in float64 with jax.lax's conventions
at poles, infinities and outside the domain (where scipy's differ), the derivatives of the
incomplete gamma function scipy lacks (by scipy.integrate.quad), and the complex inverse
functions with XLA's (not C99's) signed zeros on their branch cuts."""
import warnings

import numpy as np
import scipy.integrate
import scipy.special as sc


def _f64(*xs):
    """The arguments as broadcast float64 ndarrays (from float16, bfloat16, float32, ...)."""
    return np.broadcast_arrays(*(np.asarray(np.asarray(x).astype(np.float64)) for x in xs))


def _is_pole(x):
    """True at the non-positive integers and -inf (the poles of the gamma function)."""
    return (x <= 0) & (np.floor(x) == x)


def _where(cond, value, out):
    return np.where(cond, value, out)


def _scipy(fn):
    """scipy's function in float64, where its conventions are XLA's."""
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return fn(*_f64(*args))
    wrapped.__doc__ = f"scipy.special.{fn.__name__} in float64."
    return wrapped


erf, erfc, erf_inv = _scipy(sc.erf), _scipy(sc.erfc), _scipy(sc.erfinv)
betainc, bessel_i0e, bessel_i1e = _scipy(sc.betainc), _scipy(sc.i0e), _scipy(sc.i1e)


@np.errstate(all="ignore")
def lgamma(x):
    """log|Gamma(x)|: +inf at the poles and at +-inf (scipy: -inf at -inf)."""
    x, = _f64(x)
    return _where(x == -np.inf, np.inf, sc.gammaln(x))


@np.errstate(all="ignore")
def digamma(x):
    """psi(x); nan at +-0 too (scipy: -+inf), as at the other poles (XLA's convention)."""
    x, = _f64(x)
    return _where(x == 0, np.nan, sc.psi(x))


@np.errstate(all="ignore")
def polygamma(m, x):
    """psi^(m)(x) for integer-valued m >= 0 (else nan). XLA's conventions where scipy's
    differ: digamma's at m = 0; for m >= 1, nan at +inf (scipy: 0) and, for even m, at the
    poles (scipy: -inf)."""
    m, x = _f64(m, x)
    valid = np.isfinite(m) & (m >= 0) & (np.floor(m) == m)
    out = sc.polygamma(np.where(valid, m, 0), x)
    out = _where(m == 0, digamma(x), out)
    out = _where((m >= 1) & (x == np.inf), np.nan, out)
    out = _where((m >= 2) & (m % 2 == 0) & _is_pole(x), np.nan, out)
    return _where(valid, out, np.nan)


@np.errstate(all="ignore")
def zeta(x, q):
    """Hurwitz zeta(x, q) (scipy), with XLA's values where scipy's differ: +inf at x = 1; at a
    pole q (a non-positive integer or -inf) +inf for an even integer x, else nan; nan when
    either argument is nan or +inf."""
    x, q = _f64(x, q)
    even = np.isfinite(x) & (np.floor(x / 2) == x / 2)
    out = _where(_is_pole(q), _where(even, np.inf, np.nan), sc.zeta(x, q))
    out = _where(np.isnan(x) | np.isnan(q) | (x == np.inf) | (q == np.inf), np.nan, out)
    return _where(x == 1, np.inf, out)


def _igamma_invalid(a, x):
    """Where XLA's igamma and igammac are nan for any x: a < 0, x < 0, a = x = 0, a nan."""
    return (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)


@np.errstate(all="ignore")
def igamma(a, x):
    """P(a, x) (scipy.special.gammainc) with XLA's edge values: 0 at x = 0 and 1 at x = +inf
    (whatever a >= 0); nan where _igamma_invalid, and also where XLA's series is nan, for
    a = 0 with 0 < x < 1 (the limit would be 1), and where _infinite_a_nan."""
    a, x = _f64(a, x)
    out = _where(x == 0, 0.0, _where(x == np.inf, 1.0, sc.gammainc(a, x)))
    series_nan = ((a == 0) & (x < 1)) | _infinite_a_nan(a, x)
    return _where(_igamma_invalid(a, x) | series_nan, np.nan, out)


@np.errstate(all="ignore")
def igammac(a, x):
    """Q(a, x) (scipy.special.gammaincc) with XLA's edge values: 0 at x = +inf or a = 0; nan
    where _igamma_invalid or _infinite_a_nan."""
    a, x = _f64(a, x)
    out = _where((x == np.inf) | (a == 0), 0.0, sc.gammaincc(a, x))
    return _where(_igamma_invalid(a, x) | _infinite_a_nan(a, x), np.nan, out)


def _infinite_a_nan(a, x):
    """XLA's continued fraction is nan for a = +inf and 1 <= x < inf (the limits: P 0, Q 1)."""
    return (a == np.inf) & (x >= 1) & (x < np.inf)




# ---------------------------------------------------------------- d igamma / da
# d P(a, x) / da = int_0^x w(t) (log t - psi(a)) dt = -int_x^inf w(t) (log t - psi(a)) dt with
# w(t) = t^(a-1) e^-t / Gamma(a). The integrand has one sign below t* = exp(psi(a)) and the
# other above it, so integrating over [0, x] when x < t* and over [x, inf) otherwise has no
# cancellation and quad reaches about 1e-13 relative accuracy. Both integrals are taken
# relative to w(x) (the integrand exp(g(t) - g(x)), g(t) = (a-1) log t - t, stays <= 1 on
# the range integrated), which is also exactly what random_gamma_grad needs:
# d sample / da = -(dP/da) / w(sample).

def _scaled_integral(a, x):
    """int (log t - psi(a)) exp(g(t) - g(x)) dt over [0, x] (x < t*) or -... over [x, inf)."""
    psi, gx = sc.psi(a), (a - 1) * np.log(x) - x

    def f(t):
        return (np.log(t) - psi) * np.exp((a - 1) * np.log(t) - t - gx) if t > 0 else 0.0
    quad = _quad(f)
    if x < np.exp(psi):
        return quad(0.0, x, a - 1)
    far = max(x, a - 1) + 10 * np.sqrt(a) + 10
    return -(quad(x, far, a - 1) + quad(far, np.inf, None))


def _quad(f):
    def integrate(lo, hi, peak):
        points = [peak] if peak is not None and lo < peak < hi and np.isfinite(hi) else None
        with warnings.catch_warnings():  # quad warns where 1e-13 is out of reach; it then
            warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)  # gives ~1e-12
            return scipy.integrate.quad(f, lo, hi, points=points, epsabs=0.0, epsrel=1e-13,
                                        limit=200)[0]
    return integrate


def _gamma_derivative(a, x, scaled_to_value):
    """Elementwise scaled integrals; 0 at x = 0, nan outside a > 0, x >= 0 (XLA's
    conventions for igamma_grad_a and random_gamma_grad)."""
    a, x = _f64(a, x)
    out = np.full(a.shape, np.nan)
    for i in np.ndindex(a.shape):
        ai, xi = a[i], x[i]
        if ai > 0 and xi == 0:
            out[i] = 0.0
        elif 0 < ai < np.inf and 0 < xi < np.inf:
            out[i] = scaled_to_value(ai, xi, _scaled_integral(ai, xi))
    return out


@np.errstate(all="ignore")
def igamma_grad_a(a, x):
    """d igamma(a, x) / da."""
    return _gamma_derivative(a, x, lambda a, x, s: s * np.exp((a - 1) * np.log(x) - x
                                                              - sc.gammaln(a)))


@np.errstate(all="ignore")
def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x held at a fixed quantile: -(dP/da) / (dP/dx)."""
    return _gamma_derivative(a, x, lambda a, x, s: -s)


# ---------------------------------------------------------------- complex branch cuts
# NumPy's complex functions follow C99, where the sign of a zero real or imaginary part picks
# the side of a branch cut (e.g. sqrt(-4 - 0j) = -2j).  XLA on CPU (JAX's chlo/hlo
# expansions) ignores the sign there and takes the side of +0: of the imaginary part for
# sqrt, asin, acos, acosh (cuts on the real axis), of the real part for asinh, atanh (cuts
# on the imaginary axis; atanh's real-axis cut follows C99 except far out).  Changing the
# zero's sign before calling NumPy reproduces XLA's results, signed zeros included (checked
# against jax.lax on a grid of finite and infinite values; NaN inputs are not matched).

def _with_parts(re, im, dtype):
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def _plus_zero(v):
    """v with -0.0 replaced by +0.0."""
    return np.where(v == 0, np.zeros_like(v), v)


def _imag_plus_zero(z):
    return _with_parts(z.real, _plus_zero(z.imag), z.dtype)


def _real_plus_zero(z):
    return _with_parts(_plus_zero(z.real), z.imag, z.dtype)


def complex_sqrt(z):
    return np.sqrt(_imag_plus_zero(z))


def complex_asin(z):
    return np.arcsin(_imag_plus_zero(z))


def complex_acos(z):
    return np.arccos(_imag_plus_zero(z))


def complex_acosh(z):
    return np.arccosh(_imag_plus_zero(z))


def complex_asinh(z):
    return np.arcsinh(_real_plus_zero(z))


def _atanh_far(dtype):
    """XLA's atanh(x +- 0j) switches to its large-argument branch, whose imaginary part is
    +pi/2 whatever the zero's sign, once |x| >= (2**p + 2)**2 (p: the float's precision)."""
    return dtype.type((2.0 ** (np.finfo(dtype).nmant + 1) + 2) ** 2)


def complex_atanh(z):
    out = np.arctanh(_real_plus_zero(z))
    far = (z.imag == 0) & (np.abs(z.real) >= _atanh_far(z.real.dtype))
    return _with_parts(out.real, np.where(far, np.pi / 2, out.imag), z.dtype)


def complex_atan(z):
    """atan(z) = -i atanh(i z), as XLA computes it (so with atanh's signed zeros)."""
    w = complex_atanh(_with_parts(-z.imag, z.real, z.dtype))
    return _with_parts(w.imag, -w.real, z.dtype)


def complex_atan2(x, y):
    """XLA's complex atan2(x, y) = -i log((y + i x) / sqrt(y**2 + x**2)), in the operands'
    precision (NumPy has no complex arctan2).  Where the ratio is a negative real number (on
    log's branch cut, e.g. x = 0 and Re(y) < 0) the result is +-pi depending on the sign of a
    zero that XLA's rounding leaves: there refjax and XLA may differ."""
    i = np.asarray(1j, x.dtype)
    return np.asarray(-i * np.log((y + i * x) / np.sqrt(y * y + x * x)), x.dtype)
