"""jax.scipy.special.hyp1f1: Kummer's confluent hypergeometric function M(a, b, x)."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from .special_faddeeva import _as_float, _strong
from .special_functions import _c, _real, gammaln, gammasgn

# The power series runs _SERIES_TERMS terms (enough for 0 <= x < _ASYMPTOTIC: its terms
# peak near k = x and fall below float64's precision by k = 300); at and above _ASYMPTOTIC,
# the asymptotic series, cut at its smallest term.
_SERIES_TERMS = 300
_ASYMPTOTIC = 100.0
_ASYMPTOTIC_TERMS = 60


def _series(a, b, x):
    """sum_k (a)_k / (b)_k x**k / k!, each term from the last."""
    def step(k, carry):
        term, total = carry
        term = term * (a + k) / (b + k) * x / (k + 1)
        return term, total + term
    _, total = lax.fori_loop(0, _SERIES_TERMS, step, (jnp.ones_like(x), jnp.ones_like(x)))
    return total


def _asymptotic(a, b, x, shift):
    """e**shift Gamma(b) / Gamma(a) e**x x**(a - b) sum_k (b - a)_k (1 - a)_k / (k! x**k),
    stopped before its terms grow (the series diverges)."""
    def step(k, carry):
        term, total, done = carry
        new = term * (b - a + k) * (1 - a + k) / ((k + 1) * x)
        done = done | (jnp.abs(new) >= jnp.abs(term))
        # a finished term stays put: growing on, it could overflow and poison gradients
        return jnp.where(done, term, new), jnp.where(done, total, total + new), done
    init = (jnp.ones_like(x), jnp.ones_like(x), jnp.zeros(x.shape, bool))
    _, total, _ = lax.fori_loop(0, _ASYMPTOTIC_TERMS, step, init)
    log_scale = gammaln(b) - gammaln(a) + x + (a - b) * jnp.log(x) + shift
    return gammasgn(b) * gammasgn(a) * jnp.exp(log_scale) * total


def _nonpositive_integer(a):
    return (a <= 0) & (a == jnp.round(a))


def _hyp1f1_nonnegative(a, b, x, shift):
    """e**shift M(a, b, x) for x >= 0 (the shift inside the asymptotic branch's exponential,
    where e**x alone could overflow); a polynomial (a a nonpositive integer) always by its
    series."""
    use_series = (x < _ASYMPTOTIC) | _nonpositive_integer(a)
    series = _series(a, b, jnp.where(use_series, x, _c(x, 0.0)))
    # the unused branch's dummies keep e**(x + shift) finite: an overflow there would make
    # its (discarded) gradient nan, and 0 * nan is nan
    asymptotic = _asymptotic(jnp.where(use_series, _c(a, 0.5), a), b,
                             jnp.where(use_series, _c(x, _ASYMPTOTIC), x),
                             jnp.where(use_series, _c(x, -_ASYMPTOTIC), shift))
    return jnp.where(use_series, jnp.exp(shift) * series, asymptotic)


def _hyp1f1(a, b, x):
    # Below 0 the series alternates and cancels; Kummer's transformation M(a, b, x) =
    # e**x M(b - a, b, -x) makes its terms positive (unless b - a is a nonpositive integer,
    # where the series is a polynomial and direct evaluation is better).
    kummer = (x < 0) & ~_nonpositive_integer(a)
    inner_a = jnp.where(kummer, b - a, a)
    inner_x = jnp.where(kummer, -x, jnp.where(x < 0, _c(x, 0.0), x))
    positive = _hyp1f1_nonnegative(inner_a, b, inner_x, jnp.where(kummer, x, _c(x, 0.0)))
    polynomial = _series(a, b, jnp.where(kummer | (x >= 0), _c(x, 0.0), x))
    value = jnp.where(x < 0, jnp.where(kummer, positive, polynomial), positive)
    value = jnp.where(a == b, jnp.exp(x), value)
    return jnp.where(a == 0, _c(x, 1.0), jnp.where(b == 0, _c(x, np.inf), value))


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x**k / k!
    for real arguments (ValueError for complex, as in JAX); 1 for a = 0, exp(x) for a = b, inf
    for b = 0 (JAX's conventions); float16 is computed in float32. Differentiable in a, b and x
    through its series (JAX has custom rules; at an integer a where the asymptotic series
    terminates, the derivative in a misses the vanished terms')."""
    a, b, x = _real("hyp1f1", a, b, x)
    dtype = x.dtype
    a, b, x = jnp.broadcast_arrays(_as_float(a), _as_float(b), _as_float(x))
    return _strong(_hyp1f1(a, b, x).astype(dtype))
