"""Special functions for the NumPy oracle (erf, erf_inv, lgamma, digamma, polygamma) in float64,
and the complex inverse functions with XLA's (not C99's) signed zeros on their branch cuts."""
import math

import numpy as np

# Bernoulli numbers B_2, B_4, ..., B_24.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EULER_GAMMA = 0.5772156649015329
_HALF_LOG_2PI = 0.9189385332046728
# The zeros of digamma nearest the origin (as doubles) and digamma's value there, as in scipy.
_POS_ROOT, _POS_ROOT_VAL = 1.4616321449683623, -9.2412655217294275e-17
_NEG_ROOT, _NEG_ROOT_VAL = -0.504083008264455409, 7.2897639029768949e-17

# Giles (2010), "Approximating the erfinv function": double-precision branches, Horner order.
_GILES_W1 = (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
             1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
             6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
             2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
             1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
             4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
             0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
             0.24015818242558961693, 1.6536545626831027356)
_GILES_W2 = (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
             1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
             2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
             6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
             0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
             -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
             3.0838856104922207635)
_GILES_W3 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
             -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
             2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
             -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
             7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
             1.0103004648645343977, 4.8499064014085844221)


def _f64(x):
    """`x` as a float64 ndarray (accepts float16, ml_dtypes.bfloat16, float32, float64, scalars)."""
    return np.asarray(np.asarray(x).astype(np.float64))


def _horner(coeffs, z):
    """Evaluate the polynomial with `coeffs` (highest degree first) at `z`."""
    p = np.full_like(z, coeffs[0])
    for c in coeffs[1:]:
        p = p * z + c
    return p


def _map(fn, x):
    """Apply the scalar float function `fn` (e.g. math.erf) elementwise to the float64 array `x`."""
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, count=x.size).reshape(x.shape)


def _is_pole(x):
    """True where x is a non-positive integer or -inf (the poles of the gamma function)."""
    return (x <= 0) & (np.floor(x) == x)


def _cot_pi(x):
    """cot(pi * x) for finite non-integer x, argument-reduced exactly to |r| <= 1/2."""
    r = x - np.round(x)
    a = np.abs(r)
    return np.where(a <= 0.25, 1 / np.tan(np.pi * r), np.copysign(np.tan(np.pi * (0.5 - a)), r))


def _hurwitz_zeta_parts(s, q):
    """Hurwitz zeta(s, q) = sum_k (q + k)**-s as (z, e) with zeta = z * 2**e, no spurious
    over/underflow; integer-valued 2 <= s <= 1000 and finite q > 0 (arrays broadcast).

    q is scaled by 2**-E (exact; q = q' 2**E with 1/2 <= q' < 1) so that z is at most of
    order 2**s and e = -E s (or -E (s - 1) when q is large and only the tail is used).  The
    first terms are summed directly until a = q + N >= max(16, s), then the Euler-Maclaurin
    tail at a is added with Bernoulli terms up to B_24 (far below rounding).
    """
    s, q = np.broadcast_arrays(_f64(s), _f64(q))
    scale = np.frexp(q)[1]
    bound = np.maximum(16.0, s)
    n = np.where(q < bound, np.ceil(bound - q), 0.0)
    a = q + n
    inv_a2 = 1 / (a * a)
    fac = s * inv_a2
    tail = np.zeros_like(a)
    for j, b in enumerate(_BERNOULLI, start=1):
        tail = tail + b / math.factorial(2 * j) * fac
        fac = fac * (s + 2 * j - 1) * (s + 2 * j) * inv_a2
    bracket = 1 / (s - 1) + 0.5 / a + tail
    direct = n > 0  # then q < 1000, so the tail a a'^-s cannot overflow
    aa = np.ldexp(a, -scale)
    z = np.where(direct, a * aa ** -s, aa ** (1 - s)) * bracket
    for k in range(int(n.max(initial=0)) - 1, -1, -1):  # smallest terms first
        z = z + np.where(k < n, np.ldexp(q + k, -scale) ** -s, 0.0)
    return z, -scale * s.astype(np.int64) + np.where(direct, 0, scale)


def _hurwitz_zeta(s, q):
    """Hurwitz zeta(s, q) for integer-valued s >= 2 and finite q > 0 (see _hurwitz_zeta_parts)."""
    return np.ldexp(*_hurwitz_zeta_parts(s, q))


def _zeta_minus_one(kmax):
    """[zeta(k) - 1 for k in 2..kmax] (Riemann zeta), i.e. Hurwitz zeta(k, 2)."""
    return _hurwitz_zeta(np.arange(2.0, kmax + 1), 2.0)


def _root_series_coeffs(root, nmax):
    """Taylor coefficients of digamma at `root`: c_n = (-1)**(n+1) zeta(n+1, root), n = 1..nmax."""
    s = np.arange(2.0, nmax + 2)
    sign = np.where(np.arange(1, nmax + 1) % 2 == 1, 1.0, -1.0)
    if root > 0:
        return sign * _hurwitz_zeta(s, root)
    return sign * (root ** -s + _hurwitz_zeta(s, root + 1))  # root + 1 is exact here


# lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k, used for |z| <= 1/2.
_LGAMMA2_COEFFS = tuple(
    [(-1) ** k * zm1 / k for k, zm1 in reversed(list(enumerate(_zeta_minus_one(34), start=2)))]
    + [1 - _EULER_GAMMA, 0.0])
_POS_ROOT_COEFFS = tuple(_root_series_coeffs(_POS_ROOT, 40)[::-1]) + (0.0,)
_NEG_ROOT_COEFFS = tuple(_root_series_coeffs(_NEG_ROOT, 100)[::-1]) + (0.0,)


@np.errstate(all="ignore")
def erf(x):
    """The error function, elementwise (math.erf, which is within an ulp or so)."""
    return _map(math.erf, _f64(x))


def _erf_inv_initial(a):
    """Giles' double-precision approximation of erf_inv(a) for 0 <= a < 1."""
    w = -np.log((1 - a) * (1 + a))
    p = np.where(w < 6.25, _horner(_GILES_W1, w - 3.125),
                 np.where(w < 16, _horner(_GILES_W2, np.sqrt(w) - 3.25),
                          _horner(_GILES_W3, np.sqrt(w) - 5)))
    return p * a


@np.errstate(all="ignore")
def erf_inv(x):
    """Inverse of erf on (-1, 1); +-1 -> +-inf, |x| > 1 or nan -> nan; the sign of -0 is kept.

    Giles' approximation polished by two Halley steps on erf (|x| <= 1/2) or on erfc (|x| > 1/2,
    where 1 - |x| is exact), so the result is good to about an ulp; tiny |x| use the series.
    """
    y = _f64(x)
    a = np.abs(y)
    out = np.where(a == 1, np.copysign(np.inf, y), np.nan)
    inside = a < 1
    tiny = a < 1e-7
    out[tiny] = (0.5 * math.sqrt(math.pi)) * y[tiny] * (1 + (math.pi / 12) * y[tiny] ** 2)
    a = a[inside & ~tiny]
    r = _erf_inv_initial(a)
    upper = a > 0.5
    for _ in range(2):
        f = np.empty_like(a)
        f[upper] = (1 - a[upper]) - _map(math.erfc, r[upper])
        f[~upper] = _map(math.erf, r[~upper]) - a[~upper]
        u = f / (2 / math.sqrt(math.pi) * np.exp(-r * r))
        r = r - u / (1 + r * u)
    out[inside & ~tiny] = np.copysign(r, y[inside & ~tiny])
    return out


@np.errstate(all="ignore")
def lgamma(x):
    """log|Gamma(x)|; +inf at non-positive integers and at +-inf (as jax.lax.lgamma), nan at nan.

    Near the zeros at 1 and 2 (0.5 <= x <= 2.5) a zeta series about 2 keeps the relative error
    small; huge x use Stirling's leading terms; everything else is math.lgamma.
    """
    x = _f64(x)
    out = np.where(np.isnan(x), np.nan, np.inf)
    near1 = (x >= 0.5) & (x < 1.5)  # lgamma(1 + z) = lgamma(2 + z) - log1p(z)
    z = x[near1] - 1
    out[near1] = _horner(_LGAMMA2_COEFFS, z) - np.log1p(z)
    near2 = (x >= 1.5) & (x <= 2.5)
    out[near2] = _horner(_LGAMMA2_COEFFS, x[near2] - 2)
    near12 = near1 | near2
    huge = np.isfinite(x) & (x > 1e17)
    xh = x[huge]
    out[huge] = xh * (np.log(xh) - 1) - 0.5 * np.log(xh) + _HALF_LOG_2PI
    rest = np.isfinite(x) & ~near12 & ~huge & ~_is_pole(x)
    out[rest] = _map(math.lgamma, x[rest])
    return out


def _digamma_asymptotic(b):
    """digamma(b) for b >= 10 from the asymptotic series (terms through B_16)."""
    inv2 = 1 / (b * b)
    coeffs = [bk / (2 * k) for k, bk in enumerate(_BERNOULLI[:8], start=1)][::-1] + [0.0]
    return np.log(b) - 0.5 / b - _horner(coeffs, inv2)


def _digamma_positive(a):
    """digamma(a) for finite a > 0: root series near 1.4616, else recurrence up to >= 10."""
    n = np.where(a < 10, np.ceil(10 - a), 0.0)
    out = _digamma_asymptotic(a + n)
    for k in range(int(n.max(initial=0)) - 1, -1, -1):
        out = out - np.where(k < n, 1 / (a + k), 0.0)
    near = np.abs(a - _POS_ROOT) < 0.3
    out[near] = _horner(_POS_ROOT_COEFFS, a[near] - _POS_ROOT) + _POS_ROOT_VAL
    return out


@np.errstate(all="ignore")
def digamma(x):
    """The digamma function psi(x), elementwise.

    Conventions follow jax.lax.digamma (scipy differs only at 0): nan at every non-positive
    integer (including +-0) and at -inf, +inf at +inf.  Negative x use the reflection
    psi(x) = psi(1 - x) - pi cot(pi x), except near the root -0.5041 (series there, as scipy).
    """
    x = _f64(x)
    out = np.full_like(x, np.nan)
    out[x == np.inf] = np.inf
    pos = np.isfinite(x) & (x > 0)
    out[pos] = _digamma_positive(x[pos])
    neg = np.isfinite(x) & (x < 0) & ~_is_pole(x)
    xn = x[neg]
    out[neg] = _digamma_positive(1 - xn) - np.pi * _cot_pi(xn)
    near = neg & (np.abs(x - _NEG_ROOT) < 0.3)
    out[near] = _horner(_NEG_ROOT_COEFFS, x[near] - _NEG_ROOT) + _NEG_ROOT_VAL
    return out


def _cot_derivative_coeffs(m):
    """Coefficients (highest degree first) of P_m / m!, where d^m/dy^m cot(y) = P_m(cot y).

    P_0(c) = c and P_{m+1}(c) = -(1 + c^2) P_m'(c), in exact integers; P_m / m! is modest.
    """
    p = [0, 1]  # ascending powers of c
    for _ in range(m):
        d = [k * p[k] for k in range(1, len(p))] + [0, 0]
        p = [-(d[k] + (d[k - 2] if k >= 2 else 0)) for k in range(len(d))]
    fact = math.factorial(m)
    return [c / fact for c in p[::-1]]  # int / int is correctly rounded


def _polygamma_int(m, x):
    """psi^(m)(x) for an integer m >= 1 (x a float64 array), with jax.lax's conventions.

    x > 0: (-1)^(m+1) m! zeta(m+1, x).  Negative non-integers: the reflection
    psi^(m)(x) = (-1)^m psi^(m)(1 - x) - pi^(m+1) P_m(cot(pi x)).  m! is applied by its
    binary exponent so only the final value can over/underflow.  Poles and -inf: +inf for odd
    m, nan for even m; +inf: nan (both as XLA's polygamma); nan -> nan.  For m > 170, where
    m! overflows a double, x > 0 gives +-inf * zeta(m+1, x) as XLA and scipy do (nan where
    zeta underflows) and negative x gives nan.
    """
    out = np.full_like(x, np.nan)
    out[_is_pole(x)] = np.inf if m % 2 else np.nan
    sign = 1.0 if m % 2 else -1.0
    pos = np.isfinite(x) & (x > 0)
    if m > 170:
        out[pos & ((m + 1) * np.log(x) < 744.4)] = sign * np.inf  # else inf * 0 = nan
        return out
    fm, em = math.frexp(float(math.factorial(m)))
    z, e = _hurwitz_zeta_parts(m + 1.0, x[pos])
    out[pos] = sign * np.ldexp(fm * z, e + em)
    neg = np.isfinite(x) & (x < 0) & ~_is_pole(x)
    xn = x[neg]
    z, e = _hurwitz_zeta_parts(m + 1.0, 1 - xn)
    cot_term = np.pi ** (m + 1) * _horner(_cot_derivative_coeffs(m), _cot_pi(xn))
    out[neg] = -(np.ldexp(fm * z, e + em) + np.ldexp(fm * cot_term, em))
    return out


@np.errstate(all="ignore")
def polygamma(m, x):
    """The polygamma function psi^(m)(x), elementwise over broadcast (m, x).

    m must be a non-negative integer value (else nan); m == 0 is digamma.  NaN/inf conventions
    follow jax.lax.polygamma (see _polygamma_int); values elsewhere agree with scipy.special.
    """
    m, x = np.broadcast_arrays(_f64(m), _f64(x))
    out = np.full(x.shape, np.nan)
    valid = np.isfinite(m) & (m >= 0) & (np.floor(m) == m)
    for mv in np.unique(m[valid]):
        sel = valid & (m == mv)
        out[sel] = digamma(x[sel]) if mv == 0 else _polygamma_int(int(mv), x[sel])
    return out


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
