"""jax.scipy.special's Faddeeva family: wofz, erfcx, dawsn and fresnel, from one rational
approximation of the Faddeeva function w(z) = exp(-z**2) erfc(-iz)."""
import math

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.transforms.custom import custom_jvp
from .. import lax
from .. import numpy as jnp
from ..nn.functions import _inexact
from .special_functions import _c, _real

_SQRT_PI = math.sqrt(math.pi)


def _weideman_coefficients(n):
    """The n coefficients (highest degree first) of Weideman's approximation (SIAM J. Numer.
    Anal. 31, 1994): w(z) = 2 p(Z) / (L - iz)**2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) /
    (L - iz), for Im z >= 0; p's coefficients are the Fourier coefficients of exp(-t**2)
    (L**2 + t**2) on the substitution t = L tan(theta / 2), computed here by an FFT."""
    m = 2 * n
    scale = math.sqrt(n / math.sqrt(2))
    t = scale * np.tan(np.arange(-m + 1, m) * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return scale, a[1:n + 1][::-1].copy()


# 32 terms: an absolute error near 1e-15 in the upper half plane, as in JAX.
_L, _WEIDEMAN = _weideman_coefficients(32)


def _strong(x):
    """x with its weak type dropped (JAX's results here are strongly typed)."""
    return ew.convert_element_type(x, x.dtype, weak_type=False)


def _as_float(x):
    """x as float32 when it is a narrower float (computed in float32, as JAX does)."""
    return x.astype(np.float32) if x.dtype.itemsize < 4 else x


def _weideman(u, polyval):
    """The approximation at u = L - iz (real or complex): Z = (2L - u) / u."""
    p = polyval(jnp.asarray(_WEIDEMAN, u.dtype), (_c(u, 2 * _L) - u) / u)
    return 2 * p / (u * u) + _c(u, 1 / _SQRT_PI) / u


def _finite(x):
    """x with infinities replaced by 1, so that a branch whose limit is set apart stays finite."""
    return jnp.where(jnp.isinf(x), _c(x, 1.0), x)


def _times_i(z):
    return lax.complex(-jnp.imag(z), jnp.real(z))


def _wofz_upper(z):
    return _weideman(_c(z, _L) - _times_i(z), jnp.polyval)


@custom_jvp
def _wofz(z):
    upper = jnp.imag(z) >= 0
    w = _wofz_upper(jnp.where(upper, z, -z))
    return jnp.where(upper, w, 2 * jnp.exp(-z * z) - w)


_wofz.defjvps(lambda t, ans, z: t * (_c(z, 2j / _SQRT_PI) - 2 * z * ans))


def _complex_dtype(x):
    x = _as_float(x)
    return x if _dt.issubdtype(x.dtype, np.complexfloating) else lax.complex(x, jnp.zeros_like(x))


def wofz(z):
    """The Faddeeva function w(z) = exp(-z**2) erfc(-iz), for real or complex z (the result is
    complex; float16 is computed in float32, as in JAX)."""
    z = _inexact("wofz", z)[0]
    return _strong(_wofz(_complex_dtype(z)))


def _erfcx_nonnegative(x):
    """erfcx(x) = w(ix) for x >= 0, where Weideman's Z = (L - x) / (L + x) is real."""
    return _weideman(_c(x, _L) + x, jnp.polyval)


@custom_jvp
def _erfcx(x):
    ax = jnp.abs(x)
    positive = _erfcx_nonnegative(_finite(ax))
    # erfcx(-x) = 2 exp(x**2) - erfcx(x), which overflows, as it should, past ~9.4 (float32).
    negative = 2 * jnp.exp(ax * ax) - positive
    return jnp.where(x < 0, negative, jnp.where(ax == np.inf, _c(x, 0.0), positive))


_erfcx.defjvps(lambda t, ans, x: t * (2 * x * ans - _c(x, 2 / _SQRT_PI)))


def erfcx(x):
    """The scaled complementary error function exp(x**2) erfc(x), for real or complex x."""
    x = _inexact("erfcx", x)[0]
    if _dt.issubdtype(x.dtype, np.complexfloating):
        return _strong(_wofz(_times_i(x)))
    return _strong(_erfcx(_as_float(x)).astype(x.dtype))


def _odd_series(x, coefficient, terms):
    """sum_k coefficient(k) * x**(2k + 1) for k < terms, by Horner's rule in x**2."""
    x2, total = x * x, _c(x, coefficient(terms - 1))
    for k in range(terms - 2, -1, -1):
        total = total * x2 + _c(x, coefficient(k))
    return total * x


# Below 0.2 dawsn's Taylor series (ratio of terms 2 x**2 / (2k + 3)) needs 8 terms for float64;
# there Weideman's absolute error would be large relative to the small result.
_DAWSN_SMALL = 0.2


@custom_jvp
def _dawsn(x):
    small = jnp.abs(x) < _DAWSN_SMALL
    series = _odd_series(x, lambda k: (-2.0) ** k / math.prod(range(1, 2 * k + 2, 2)), 9)
    w = _wofz_upper(lax.complex(jnp.where(small, _c(x, 1.0), _finite(x)), jnp.zeros_like(x)))
    large = jnp.where(jnp.isinf(x), _c(x, 0.0) * jnp.sign(x), _c(x, _SQRT_PI / 2) * jnp.imag(w))
    return jnp.where(small, series, large)


_dawsn.defjvps(lambda t, ans, x: t * (1 - 2 * x * ans))


def dawsn(x):
    """Dawson's integral exp(-x**2) int_0^x exp(t**2) dt, for real x (ValueError for complex
    x, as in JAX)."""
    x = _real("dawsn", x)[0]
    return _strong(_dawsn(_as_float(x)).astype(x.dtype))


# Below 1.5 the Fresnel integrals come from their Taylor series (16 terms reach float64's
# precision); above, from erf of a complex argument, which would cancel near 0.
_FRESNEL_SMALL = 1.5
_FRESNEL_TERMS = 16


def _fresnel_series(x):
    half_pi = math.pi / 2
    x4 = x ** 4
    c = _c(x, 0.0)
    s = _c(x, 0.0)
    for k in range(_FRESNEL_TERMS - 1, -1, -1):
        c = c * x4 + _c(x, (-1) ** k * half_pi ** (2 * k) / (math.factorial(2 * k) * (4 * k + 1)))
        s = s * x4 + _c(x, (-1) ** k * half_pi ** (2 * k + 1)
                        / (math.factorial(2 * k + 1) * (4 * k + 3)))
    return s * x ** 3, c * x


def _split(x):
    """x = hi + lo with hi and lo of half x's significand each (Dekker), so products of
    them are exact."""
    scale = _c(x, 2.0 ** ((np.finfo(x.dtype).nmant + 1) // 2 + 1) + 1)
    hi = x * scale - (x * scale - x)
    return hi, x - hi


def _half_pi_x_squared_sincos(x):
    """(sin, cos) of pi x**2 / 2, accurate for large x: x**2 is reduced modulo 4 exactly
    (hi**2, 2 hi lo and lo**2 are exact), so the phase is multiplied by pi only once small."""
    hi, lo = _split(x)
    four = _c(x, 4.0)
    r = jnp.fmod(hi * hi, four) + jnp.fmod(2 * hi * lo, four) + lo * lo
    phase = _c(x, math.pi / 2) * jnp.fmod(r, four)
    return jnp.sin(phase), jnp.cos(phase)


def _fresnel_large(x):
    """S and C for x >= 1.5: C + iS = (1 + i)/2 erf(z), z = sqrt(pi)/2 (1 - i) x, where
    erf(z) = 1 - exp(-z**2) w(iz), exp(-z**2) = exp(i pi x**2 / 2) and iz is in the first
    quadrant."""
    a = _c(x, _SQRT_PI / 2) * x
    w = _wofz_upper(lax.complex(a, a))
    sin, cos = _half_pi_x_squared_sincos(x)
    e = lax.complex(cos, sin)
    erf = 1 - e * w
    return (jnp.real(erf) + jnp.imag(erf)) / 2, (jnp.real(erf) - jnp.imag(erf)) / 2


@custom_jvp
def _fresnel(x):
    ax = jnp.abs(x)
    small = ax < _FRESNEL_SMALL
    s_small, c_small = _fresnel_series(jnp.where(small, ax, _c(x, 0.0)))
    s_large, c_large = _fresnel_large(jnp.where(small, _c(x, _FRESNEL_SMALL), _finite(ax)))
    sign = jnp.where(x < 0, _c(x, -1.0), _c(x, 1.0))
    s = jnp.where(jnp.isinf(ax), _c(x, 0.5), jnp.where(small, s_small, s_large))
    c = jnp.where(jnp.isinf(ax), _c(x, 0.5), jnp.where(small, c_small, c_large))
    return sign * s, sign * c


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sin, cos = _half_pi_x_squared_sincos(_finite(x))
    return _fresnel(x), (t * sin, t * cos)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t**2 / 2) dt, for real x."""
    x = _real("fresnel", x)[0]
    s, c = _fresnel(_as_float(x))
    return _strong(s.astype(x.dtype)), _strong(c.astype(x.dtype))
