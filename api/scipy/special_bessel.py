"""jax.scipy.special.bessel_jn: Bessel functions of the first kind of orders 0..v, by Miller's
backward recurrence."""
import math
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.errors import ConcretizationTypeError
from ...core.trace import Tracer
from ...core.transforms.custom import custom_jvp
from .. import lax
from .. import numpy as jnp
from ..nn.functions import _inexact
from .special_faddeeva import _strong
from .special_functions import _c

# Rescale the recurrence by 2**-_RESCALE_BITS whenever it passes 2**_RESCALE_BITS, so small z
# (growth 2k/z per step) cannot overflow float32.
_RESCALE_BITS = 40
# Below _TINY, J_k(z) = (z/2)**k / k! (1 - (z/2)**2 / (k + 1)) to float64's precision.
_TINY = 1e-4


def _concrete_int(value, what):
    if isinstance(value, Tracer):
        raise ConcretizationTypeError(value, f"Argument {what} of bessel_jn.")
    return operator.index(value)


def _miller(z, top, n_iter):
    """J_0(z) ... J_top(z): f_k = 2 (k+1) f_{k+1} / z - f_{k+2} from f_{n_iter+1} = 1, f_{n_iter+2}
    = 0 down to k = 0, normalized by J_0 + 2 J_2 + 2 J_4 + ... = 1."""
    big = _c(z, 2.0 ** _RESCALE_BITS)

    def step(carry, k):
        f2, f1, even_sum, scale = carry
        f = 2 * (k + 1) * f1 / z - f2
        even_sum = jnp.where(k % 2 == 0, even_sum + 2 * f, even_sum)
        rescale = jnp.abs(f) > big
        shrink = jnp.where(rescale, 1 / big, _c(z, 1.0))
        carry = (f1 * shrink, f * shrink, even_sum * shrink, scale + rescale.astype(z.dtype))
        return carry, (f, scale)

    ks = np.arange(n_iter, -1, -1).astype(z.dtype)
    init = (jnp.zeros_like(z), jnp.ones_like(z), jnp.zeros_like(z), jnp.zeros_like(z))
    (_, _, even_sum, scale), (fs, scales) = lax.scan(step, init, ks)
    fs, scales = fs[::-1][:top + 1], scales[::-1][:top + 1]
    # f_k was recorded before the rescales from its step on, which scaled even_sum down.
    fs = fs * jnp.exp2((scales - scale) * _RESCALE_BITS)
    return fs / (even_sum - fs[0])


def _small(z, top):
    half = z / 2
    k = np.arange(top + 1, dtype=z.dtype).reshape((-1,) + (1,) * z.ndim)
    lead = half ** k / np.array([math.factorial(int(i)) for i in k.ravel()], z.dtype).reshape(k.shape)
    return lead * (1 - half * half / (k + 1))


def _bessel(z, top, n_iter):
    tiny = jnp.abs(z) < _TINY
    valid = jnp.abs(z) <= n_iter / 2 - 4
    miller = _miller(jnp.where(tiny | ~valid, _c(z, 1.0), z), top, n_iter)
    # Miller's recurrence from order n_iter is accurate (1e-12 absolute) while |z| <= n_iter/2 -
    # 4; beyond, the answer would be silently wrong, so it is nan (JAX returns it).
    valid = jnp.abs(z) <= n_iter / 2 - 4
    large = jnp.where(jnp.isinf(z), _c(z, 0.0), _c(z, np.nan))  # J_k(+-inf) = 0
    return jnp.where(tiny, _small(z, top), jnp.where(valid, miller, large))


def _bessel_primal(z, v, n_iter):
    return _bessel(z, v, n_iter)


_bessel_custom = custom_jvp(_bessel_primal, nondiff_argnums=(1, 2))


@_bessel_custom.defjvp
def _bessel_jvp(v, n_iter, primals, tangents):
    # J_0' = -J_1, J_k' = (J_{k-1} - J_{k+1}) / 2
    (z,), (t,) = primals, tangents
    j = _bessel(z, v + 1, n_iter)
    lower = jnp.concatenate([-j[1:2], j[:v]], axis=0)  # -J_1 at k = 0 gives J_0' = -J_1
    return j[:v + 1], t * (lower - j[1:]) / 2


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) ... J_v(z) for real z, stacked on a new leading axis of size v + 1, by Miller's
    backward recurrence from order n_iter: nan where |z| > n_iter / 2 - 4, where the
    recurrence has not converged (JAX returns inaccurate numbers there, and nan for |z| <= 1
    and more in float32). v must be a concrete integer with 0 <= v < n_iter (ValueError otherwise;
    JAX returns an empty or short array); complex z is a TypeError, as in JAX."""
    z = _inexact("bessel_jn", z)[0]
    if _dt.issubdtype(z.dtype, np.complexfloating):
        raise TypeError(f"bessel_jn does not accept dtype {z.dtype}: z must be real.")
    v, n_iter = _concrete_int(v, "v"), _concrete_int(n_iter, "n_iter")
    if not 0 <= v < n_iter:
        raise ValueError(f"bessel_jn: v must satisfy 0 <= v < n_iter, got v={v}, "
                         f"n_iter={n_iter}")
    compute = z.astype(np.float32) if z.dtype.itemsize < 4 else z
    return _strong(_bessel_custom(compute, v, n_iter).astype(z.dtype))
