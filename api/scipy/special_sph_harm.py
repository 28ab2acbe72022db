"""jax.scipy.special.sph_harm_y: orthonormal spherical harmonics by the normalized Legendre recurrence."""
import math

import numpy as np

from ...core import dtypes as _dt
from ...core.array import concrete_or_error
from .. import lax
from .. import numpy as jnp
from ..numpy.promotion import staged_as

_STATIC_N_MAX = ("The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
                 "specified to use `sph_harm` within JAX transformations.")


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) e^{i m phi}, orthonormal on the sphere, with
    theta the polar (colatitude) and phi the azimuthal angle, as scipy.special.sph_harm_y.
    n and m are integer arrays; n_max (static, default max(n)) bounds the degree: n is clipped
    to n_max (a negative n counts back from n_max + 1) and |m| to n_max, and |m| > n gives 0,
    as JAX's table lookup does. The arguments broadcast elementwise (JAX pairs the i-th n with
    the i-th theta, or the last theta when theta is shorter: the same where the lengths agree,
    as documented); a Python scalar theta becomes a 1-element array, as in JAX. diff_n is
    refused, as in JAX."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n_max = int(np.max(concrete_or_error(n if n_max is None else n_max, _STATIC_N_MAX)))
    n, m = (_integer(v, name) for v, name in ((n, "n"), (m, "m")))
    theta = jnp.array([theta]) if jnp.isscalar(theta) else theta
    return _harmonics(n, m, theta, phi, n_max)


@staged_as("_sph_harm", static_argnames=("n_max",))
def _harmonics(n, m, theta, phi, n_max):
    order = jnp.minimum(jnp.abs(m), n_max)
    # JAX reads its table with numpy indexing: a negative degree counts from the end
    degree = jnp.clip(jnp.where(n < 0, n + n_max + 1, n), 0, n_max)
    legendre = _normalized_legendre(degree, order, jnp.cos(theta), n_max)
    angle = jnp.abs(m) * phi
    harmonic = lax.complex(legendre * jnp.cos(angle), legendre * jnp.sin(angle))
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    return jnp.where(m < 0, (-1.0) ** jnp.abs(m) * jnp.conjugate(harmonic), harmonic)


def _integer(v, name):
    v = jnp.asarray(v)
    if not _dt.issubdtype(v.dtype, np.integer):
        raise TypeError(f"sph_harm_y requires integer degrees and orders, got {name} of dtype "
                        f"{v.dtype}")
    return v


def _normalized_legendre(degree, order, x, n_max):
    """sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!) P_l^m(x), Condon-Shortley phase included, at each
    element's (degree l, order m): up the diagonal to P_m^m, then up in degree to P_l^m."""
    degree, order, x = jnp.broadcast_arrays(degree, order, x)
    degree, order = degree.astype(x.dtype), order.astype(x.dtype)
    first = jnp.full(x.shape, 0.5 / math.sqrt(math.pi), x.dtype)
    diag = lax.fori_loop(1, n_max + 1, _diagonal_step(order, jnp.sqrt(1 - x * x)), first)
    _, value = lax.fori_loop(1, n_max + 1, _degree_step(degree, order, x),
                             (jnp.zeros_like(diag), diag))
    return jnp.where(order <= degree, value, 0)


def _diagonal_step(order, root):
    """P_k^k from P_{k-1}^{k-1}, for the elements whose order is at least k."""
    def step(k, p):
        k = k.astype(root.dtype)
        return jnp.where(k <= order, -jnp.sqrt(1 + 0.5 / k) * root * p, p)
    return step


def _degree_step(degree, order, x):
    """(P_{l-1}^m, P_l^m) from (P_{l-2}^m, P_{l-1}^m), for the elements with m < l <= degree;
    with P_{m-1}^m = 0 its first step is P_{m+1}^m = sqrt(2m+3) x P_m^m."""
    def step(deg, carry):
        below, p = carry
        deg, m2 = deg.astype(x.dtype), order * order
        active = (deg > order) & (deg <= degree)
        span = jnp.where(active, deg * deg - m2, 1)  # the inactive ones' would divide by <= 0
        back = jnp.where(active, ((deg - 1) ** 2 - m2) / (4 * (deg - 1) ** 2 - 1), 0)
        new = jnp.sqrt((4 * deg * deg - 1) / span) * (x * p - jnp.sqrt(back) * below)
        return jnp.where(active, p, below), jnp.where(active, new, p)
    return step
