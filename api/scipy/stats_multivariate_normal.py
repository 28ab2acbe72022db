"""jax.scipy.stats.multivariate_normal: logpdf and pdf of the multivariate normal
distribution, through the Cholesky factor of the covariance."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..lax_linalg import cholesky as _cholesky, triangular_solve as _tri_solve
from .linalg_common import inexact, over_batch


def _quadratic_and_logdet(x, mean, cov):
    """(|L^{-1} (x - mean)|^2, log det cov) with cov = L L^T, over batch dimensions."""
    factor = _cholesky(cov)
    y = over_batch(lambda f, r: _tri_solve(f, r, lower=True, transpose_a=True), [factor, x - mean],
                   [2, 1])
    return jnp.einsum("...i,...i->...", y, y), 2 * jnp.log(jnp.diagonal(factor, axis1=-1,
                                                                         axis2=-2)).sum(-1)


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov): a scalar mean and cov (univariate), a vector mean with a scalar
    (isotropic) cov, or a vector mean with a [..., n, n] covariance."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = inexact("jax.scipy.stats.multivariate_normal.logpdf", x, mean, cov)
    log2pi = jnp.log(2 * np.pi)
    if not mean.shape:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (log2pi + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (log2pi + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    quadratic, logdet = _quadratic_and_logdet(x, mean, cov)
    return -1 / 2 * quadratic - n / 2 * log2pi - logdet / 2


def pdf(x, mean, cov):
    """N(x; mean, cov): exp(logpdf)."""
    return lax.exp(logpdf(x, mean, cov))


from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "jax.scipy.stats.multivariate_normal")
