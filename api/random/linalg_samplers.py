"""Samplers built on linear algebra: multivariate_normal (a factor of the covariance times
standard normals) and orthogonal (Haar-distributed matrices from QR)."""
import operator

import numpy as np

from ...core import dtypes as _dt
from .. import numpy as jnp
from ..numpy.promotion import _arrays, _promote_to_inexact, staged_as
from .prng import _canonical_dtype, _canonical_shape, _check_key
from .samplers import _check_shape, _normal


def _covariance_factor(cov, method):
    """F with F F^T = cov: Cholesky's L, or U sqrt(S) (svd), or V sqrt(W) (eigh)."""
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        return u * jnp.sqrt(s[..., None, :])
    if method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        return v * jnp.sqrt(w[..., None, :])
    return jnp.linalg.cholesky(cov)


def _check_mean_cov(mean, cov):
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                         f"got cov.shape == {tuple(cov.shape)}.")


@staged_as("_multivariate_normal", static_argnums=(3, 4, 5))
def _multivariate_normal(data, mean, cov, shape, dtype, method):
    _check_mean_cov(mean, cov)
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    samples = _normal(data, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", _covariance_factor(cov, method), samples)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(mean, cov) of shape `shape` + mean.shape[-1:] (shape defaults to the
    broadcast batch shape of mean and cov): mean + F z with F F^T = cov by `method`
    ('cholesky', 'eigh' or 'svd') and z standard normal, as JAX draws them."""
    data, _ = _check_key("multivariate_normal", key)
    mean, cov = _promote_to_inexact(*_arrays("multivariate_normal", mean, cov))
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else _canonical_dtype("multivariate_normal", dtype,
                                                               np.float64)
    if _dt.kind(dtype) != "f":
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    shape = None if shape is None else _canonical_shape(shape)
    return _multivariate_normal(data, mean, cov, shape, dtype, method)


@staged_as("_orthogonal", static_argnums=(1, 2, 3, 4))
def _orthogonal(data, n, m, shape, dtype):
    z = _normal(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.linalg.diagonal(r)), -2)
    return x.mT if n < m else x


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-distributed n x m matrices (m defaults to n) with orthonormal columns (n >= m) or
    rows, of batch shape `shape`: the Q of a Gaussian matrix's QR with R's signs moved in."""
    data, _ = _check_key("orthogonal", key)
    shape = _canonical_shape(shape)
    dtype = _canonical_dtype("orthogonal", dtype, np.float64)
    n, m = operator.index(n), operator.index(n if m is None else m)
    return _orthogonal(data, n, m, shape, dtype)
