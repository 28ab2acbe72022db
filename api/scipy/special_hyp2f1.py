"""jax.scipy.special.hyp2f1: Gauss's hypergeometric function 2F1(a, b; c; x) for real x <= 1."""
import numpy as np

from ...core import dtypes as _dt
from ...core.transforms.custom import custom_jvp
from ...core.transforms.jvp import jvp
from .. import lax
from .. import numpy as jnp
from .special_faddeeva import _as_float, _strong
from ..nn.functions import _inexact
from .special_functions import _c, digamma, gamma, gammaln, gammasgn
from .special_hyper import _nonpositive_integer

# Every series runs _TERMS terms: it is evaluated only where its ratio |w| is at most 1/2 (so
# 200 terms reach float64's precision) or where it terminates (a polynomial of degree below
# _TERMS; a longer one beyond |w| = 1/2 is nan rather than truncated).
_TERMS = 200


def _rgamma(z):
    """1 / Gamma(z), 0 at the poles."""
    pole = _nonpositive_integer(z)
    safe = jnp.where(pole, _c(z, 1.0), z)
    return jnp.where(pole, _c(z, 0.0), gammasgn(safe) * jnp.exp(-gammaln(safe)))


def _short_polynomial(a):
    return _nonpositive_integer(a) & (-a < _TERMS)


def _raw_series(a, b, c, w):
    """(its last term, sum_k (a)_k (b)_k / ((c)_k k!) w**k to _TERMS terms)."""
    def step(k, carry):
        term, total = carry
        term = term * (a + k) * (b + k) / ((c + k) * (k + 1)) * w
        return term, total + term
    ones = jnp.ones_like(w)
    return lax.fori_loop(0, _TERMS, step, (ones, ones))


def _series(a, b, c, w):
    """sum_k (a)_k (b)_k / ((c)_k k!) w**k (nan where _TERMS terms may not reach it)."""
    total = _raw_series(a, b, c, w)[1]
    truncated = (jnp.abs(w) > 0.5) & ~(_short_polynomial(a) | _short_polynomial(b))
    return jnp.where(truncated, _c(w, np.nan), total)


def _gamma_case(a, b, c, s):
    """F(a, b; c; 1 - s) for non-integer d = c - a - b by the 1 - x transformation (Abramowitz
    and Stegun 15.3.6), its two series in s."""
    d = c - a - b
    first = gamma(d) * _rgamma(c - a) * _rgamma(c - b) * _series(a, b, 1 - d, s)
    second = s ** d * gamma(-d) * _rgamma(a) * _rgamma(b) * _series(c - a, c - b, 1 + d, s)
    return gamma(c) * (first + second)


def _finite_sum(a, b, s, m):
    """sum_{n < m} (a)_n (b)_n / (n! (1 - m)_n) s**n (A&S 15.3.11's first sum)."""
    def step(n, carry):
        term, total = carry
        live = n + 1 < m
        # past the last term it is 0, not growing on: an overflow would make gradients nan
        rising = (a + n) * (b + n) / ((n + 1) * jnp.where(live, 1 - m + n, 1))
        term = jnp.where(live, term * rising * s, 0)
        return term, total + term
    ones = jnp.ones_like(s)
    return lax.fori_loop(0, _TERMS, step, (ones, ones))[1]


def _log_sum(a, b, s, m):
    """sum_n (a+m)_n (b+m)_n / (n! (n+m)!) s**n [ln s - psi(n+1) - psi(n+m+1) + psi(a+n+m)
    + psi(b+n+m)] (A&S 15.3.11's second sum), each digamma from the last by psi(z+1) = psi(z)
    + 1/z."""
    def step(n, carry):
        term, total, psis = carry
        p1, pm, pa, pb = psis
        h = jnp.log(s) - p1 - pm + pa + pb
        total = total + term * h
        term = term * (a + m + n) * (b + m + n) / ((n + 1) * (n + m + 1)) * s
        psis = (p1 + 1 / (n + 1), pm + 1 / (n + m + 1), pa + 1 / (a + n + m), pb + 1 / (b + n + m))
        return term, total, psis
    psis = (digamma(jnp.ones_like(s)), digamma(m + 1), digamma(a + m), digamma(b + m))
    return lax.fori_loop(0, _TERMS, step, (_rgamma(m + 1), jnp.zeros_like(s), psis))[1]


def _log_case(a, b, c, s, m):
    """F(a, b; c; 1 - s) for c = a + b + m, m a nonnegative integer (A&S 15.3.10-11)."""
    finite = gamma(jnp.maximum(m, 1)) * _rgamma(a + m) * _rgamma(b + m) * _finite_sum(a, b, s, m)
    sign = jnp.where(jnp.round(m) % 2 == 0, _c(s, -1.0), _c(s, 1.0))
    log = sign * s ** m * _rgamma(a) * _rgamma(b) * _log_sum(a, b, s, m)
    return gamma(c) * (jnp.where(m > 0, finite, 0) + log)


def _integer_case(a, b, c, s, d):
    """F(a, b; c; 1 - s) for an integer d = c - a - b: Euler's transformation F = s**d F(c - a,
    c - b; c; 1 - s) first where d < 0 or where it makes F a polynomial."""
    euler = (d < 0) | _nonpositive_integer(c - a) | _nonpositive_integer(c - b)
    a, b = jnp.where(euler, c - a, a), jnp.where(euler, c - b, b)
    polynomial = _nonpositive_integer(a) | _nonpositive_integer(b)
    safe = lambda v: jnp.where(polynomial, _c(v, 0.5), v)  # noqa: E731
    value = jnp.where(polynomial, _series(a, b, c, 1 - s),
                      _log_case(safe(a), safe(b), safe(a) + safe(b) + jnp.abs(d), s, jnp.abs(d)))
    return jnp.where(euler, s ** d, 1) * value


def _integer_difference(a, b, c):
    """Whether c - a - b is an integer up to its rounding (50 ulps of the arguments, as JAX):
    A&S 15.3.6 cancels catastrophically there. Near, but beyond, that tolerance it still loses
    digits (about eps / distance)."""
    d = c - a - b
    scale = 1 + jnp.abs(a) + jnp.abs(b) + jnp.abs(c)
    return jnp.abs(d - jnp.round(d)) <= 50 * np.finfo(d.dtype).eps * scale


def _near_one(a, b, c, w):
    """F(a, b; c; w) for 1/2 < w < 1 from series in s = 1 - w."""
    s, d = 1 - w, c - a - b
    integer = _integer_difference(a, b, c)
    generic = _gamma_case(a, b, jnp.where(integer, c + _c(c, 0.5), c), s)
    return jnp.where(integer, _integer_case(a, b, c, s, jnp.where(integer, jnp.round(d), 0)),
                     generic)


def _unit(a, b, c, w):
    """F(a, b; c; w) for 0 <= w < 1: its series up to 1/2 (or where it terminates), beyond
    from series in 1 - w."""
    direct = (w <= 0.5) | _nonpositive_integer(a) | _nonpositive_integer(b)
    series = _series(a, b, c, jnp.where(direct, w, 0))
    return jnp.where(direct, series, _near_one(a, b, c, jnp.where(direct, _c(w, 0.75), w)))


def _below_one(a, b, c, x):
    """F(a, b; c; x) for x < 1; below 0 by Pfaff's transformation F = (1 - x)**(-a) F(a, c - b;
    c; x / (x - 1)), whose argument is in (0, 1) (a terminating series is summed directly)."""
    pfaff = (x < 0) & ~(_nonpositive_integer(a) | _nonpositive_integer(b))
    inner_b = jnp.where(pfaff, c - b, b)
    w = jnp.where(pfaff, x / (x - 1), jnp.where(x < 0, 0, x))
    unit = _unit(a, inner_b, c, w)
    polynomial = _series(a, b, c, jnp.where(pfaff | (x >= 0), 0, x))
    return jnp.where(pfaff, (1 - x) ** -a * unit, jnp.where(x < 0, polynomial, unit))


def _above_one(a, b, c, x):
    """F(a, b; c; x) for x > 1 where it is real: a polynomial, directly or after Euler's
    transformation F = (1 - x)**(c - a - b) F(c - a, c - b; c; x); inf elsewhere (the branch
    cut, JAX's convention)."""
    d = c - a - b
    direct = _nonpositive_integer(a) | _nonpositive_integer(b)
    euler = (_nonpositive_integer(c - a) | _nonpositive_integer(c - b)) & (d == jnp.round(d))
    # (1 - x)**d for an integer d and 1 - x < 0, with a differentiable power of |1 - x|
    power = jnp.where(jnp.round(d) % 2 == 0, 1, -1) * (x - 1) ** jnp.where(euler, d, 0)
    value = jnp.where(euler, power * _series(c - a, c - b, c, jnp.where(euler, x, 0)), np.inf)
    return jnp.where(direct, _series(a, b, c, jnp.where(direct, x, 0)), value)


def _harmless(where, a, b, c):
    """a, b, c where where holds, elsewhere 1/2, 1/2, 2 (away from every pole and special
    case): a discarded branch's poles would make gradients nan, as 0 * nan is nan."""
    return tuple(jnp.where(where, v, _c(v, dummy)) for v, dummy in ((a, 0.5), (b, 0.5), (c, 2.0)))


def _gauss(a, b, c, where):
    """Gauss's F(a, b; c; 1) = Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b)) where
    c - a - b > 0 (inf elsewhere), with harmless arguments elsewhere (a pole there would make
    gradients nan)."""
    a, b, c = _harmless(where, a, b, c)
    d = jnp.where(where, c - a - b, _c(c, 1.0))
    value = gamma(c) * gamma(d) * _rgamma(c - a) * _rgamma(c - b)
    return jnp.where(where, value, np.inf)


def _evaluate(a, b, c, x):
    """2F1 by cases, differentiable by autodiff in x and, off the lattice, in a, b, c."""
    s, d = 1 - x, c - a - b
    polynomial = _nonpositive_integer(a) | _nonpositive_integer(b)
    at_one = jnp.where(polynomial, _series(a, b, c, jnp.where(x == 1, x, 0)),
                       _gauss(a, b, c, (x == 1) & (d > 0)))
    value = jnp.where(x == 1, at_one,
                      _below_one(a, b, c, jnp.where(x < 1, x, 0)))
    above = x > 1
    value = jnp.where(above, _above_one(*_harmless(above, a, b, c), jnp.where(above, x, 2)),
                      value)
    s = jnp.where(above, _c(s, 1.0), s)
    value = jnp.where(~above & (a == c), s ** -b, value)
    value = jnp.where(~above & (b == c), s ** -a, value)
    value = jnp.where((c == 0) | ((c < 0) & (c == jnp.round(c))), np.inf, value)
    one = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    return jnp.where(one, _c(x, 1.0), value)


def _lattice(a, b, c, x):
    """Where the value came from A&S 15.3.10-11 (an integer c - a - b beyond x = 1/2, or an
    integer b - a below x = -1 through Pfaff's transformation): a formula valid on that lattice
    only, so not differentiable in a, b and c."""
    polynomial = _nonpositive_integer(a) | _nonpositive_integer(b)
    return ~polynomial & (((x > 0.5) & (x < 1) & _integer_difference(a, b, c))
                          | ((x < -1) & _integer_difference(a, c - b, c)))


def _derivative_series(i, args):
    """d/d args[i] of 2F1's series at x: the derivative of each term (JAX's rule), nan where
    _TERMS terms do not converge to the precision."""
    x = args[3]
    safe = jnp.where(jnp.abs(x) <= 0.95, x, 0)
    (last, total), (d_last, d_total) = _directional(
        lambda *v: _raw_series(*v[:3], safe), args, i)
    converged = jnp.abs(d_last) <= np.finfo(x.dtype).eps * jnp.abs(d_total) * (1 - jnp.abs(safe))
    return jnp.where(converged & (jnp.abs(x) <= 0.95), d_total, np.nan)


def _directional(fn, args, i):
    """fn's value and derivative along args[i]."""
    tangents = [jnp.zeros_like(v) for v in args]
    tangents[i] = jnp.ones_like(args[i])
    return jvp(fn, tuple(args), tuple(tangents))


def _parameter_rule(i):
    """The jvp rule for a (i = 0), b or c: autodiff of the evaluation, except on the lattice
    (the derivative series there; nan where it does not converge)."""
    def rule(t, out, *args):
        general = _directional(_evaluate, args, i)[1]
        lattice = _lattice(*args)
        series = _derivative_series(i, [jnp.where(lattice, v, _c(v, 0.0)) for v in args[:3]]
                                    + [jnp.where(lattice, args[3], 0)])
        return t * jnp.where(lattice, series, general)
    return rule


_hyp2f1 = custom_jvp(_evaluate)
_hyp2f1.defjvps(*(_parameter_rule(i) for i in range(3)),
                lambda t, out, a, b, c, x: t * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x))


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x**k / k! for
    real arguments (TypeError for complex, as in JAX), by its series for |x| <= 1/2, the
    1 - x transformations (A&S 15.3.6, 15.3.10-11) towards 1 and Pfaff's transformation below
    0 (where JAX's series is wrong for x < -1). JAX's conventions: 1 for x = 0 or a or b = 0;
    inf for c a nonpositive integer, at x = 1 when c - a - b <= 0 and for x > 1, unless F is a
    polynomial there (where JAX gives inf too; refjax its value). float16 is
    computed in float32; differentiable in all four arguments through its series."""
    a, b, c, x = _inexact("hyp2f1", a, b, c, x)
    if _dt.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"hyp2f1 does not support complex inputs (got {x.dtype}).")
    dtype = x.dtype
    a, b, c, x = jnp.broadcast_arrays(*(_as_float(v) for v in (a, b, c, x)))
    return _strong(_hyp2f1(a, b, c, x).astype(dtype))
