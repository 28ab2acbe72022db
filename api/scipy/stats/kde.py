"""jax.scipy.stats.gaussian_kde: a Gaussian kernel density estimator, a pytree as JAX's."""
import dataclasses
from typing import Any

import numpy as np

from ....core import dtypes as _dt
from ... import numpy as jnp
from ... import random
from ...numpy.promotion import _arrays
from ...tree_util import register_pytree_node_class
from .. import linalg
from .. import special_functions as special
from ._common import promote

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _arraylike(name, *args):
    """args as arrays; for a list or tuple, the TypeError JAX's gaussian_kde raises (its
    wording: the class and the position)."""
    for position, arg in enumerate(args):
        if isinstance(arg, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(arg)} at "
                            f"position {position}.")
    return _arrays(name, *args)


def _bandwidth_factor(kde, bw_method, d):
    """The factor the data covariance is scaled by to give the kernel's: Scott's rule
    neff^(-1/(d+4)), Silverman's, a given scalar, or bw_method(kde)."""
    if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
        return jnp.power(kde.neff, -1.0 / (d + 4))
    if isinstance(bw_method, str) and bw_method == "silverman":
        return jnp.power(kde.neff * (d + 2) / 4.0, -1.0 / (d + 4))
    if jnp.isscalar(bw_method) and not isinstance(bw_method, str):
        return bw_method
    if callable(bw_method):
        return bw_method(kde)
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")


def _weights(weights, dataset, n):
    """The normalised weights (uniform when None), promoted with the dataset."""
    if weights is None:
        dataset = promote("gaussian_kde", dataset)[0]
        return dataset, jnp.full(n, 1.0 / n, dtype=dataset.dtype)
    dataset, weights = promote("gaussian_kde", dataset, weights)
    weights = jnp.atleast_1d(weights)
    weights = weights / jnp.sum(weights)
    if weights.ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
    if len(weights) != n:
        raise ValueError("`weights` input should be of length n")
    return dataset, weights


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of a dataset of shape (n,) or (d, n), as
    scipy.stats.gaussian_kde: bw_method 'scott' (default), 'silverman', a scalar factor or a
    callable of the estimator; optional weights of length n."""
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(_arraylike("gaussian_kde", dataset)[0])
        if _dt.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            _arraylike("gaussian_kde", weights)
        dataset, weights = _weights(weights, dataset, n)
        self._set(dataset=dataset, weights=weights, neff=1 / jnp.sum(weights ** 2))
        factor = _bandwidth_factor(self, bw_method, d)
        covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self._set(covariance=covariance * factor ** 2,
                  inv_cov=jnp.linalg.inv(covariance) / factor ** 2)

    def _set(self, **fields):
        for name, value in fields.items():   # the dataclass is frozen to its users only
            object.__setattr__(self, name, value)

    def tree_flatten(self):
        """(children, aux): the five arrays, no static data."""
        return tuple(getattr(self, name) for name in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """The estimator of the five arrays tree_flatten gave."""
        kde = cls.__new__(cls)
        kde._set(**dict(zip(_FIELDS, children)))
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The density at points of shape (d, m) (or (m,) when d is 1, or (d,) for one)."""
        return jnp.exp(self._log_terms("evaluate", points)).sum(axis=1)

    def __call__(self, points):
        """The density at points (evaluate)."""
        return self.evaluate(points)

    def pdf(self, x):
        """The density at x (evaluate)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at x, by a log-sum-exp over the kernels."""
        return special.logsumexp(self._log_terms("logpdf", x), axis=1)

    def _log_terms(self, name, points):
        """[m, n]: log(w_j) + log N(x_i; data_j, covariance), the Gaussian exponent computed
        in the coordinates that whiten inv_cov (its Cholesky factor)."""
        points = self._reshape_points(_arraylike(name, points)[0])
        data, weights, points, precision = promote(name, self.dataset, self.weights, points,
                                                   self.inv_cov)
        whitening = linalg.cholesky(precision, lower=True)
        diff = jnp.dot(points.T, whitening)[:, None, :] - jnp.dot(data.T, whitening)[None]
        log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * self.d * np.log(2 * np.pi)
        return jnp.log(weights) + log_norm - 0.5 * jnp.sum(jnp.square(diff), axis=-1)

    def _reshape_points(self, points):
        if _dt.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d == self.d:
            return points
        if d == 1 and m == self.d:   # one point given as a vector
            return jnp.reshape(points, (self.d, 1))
        raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        return _gaussian_overlap(self.covariance + cov, self.dataset - mean[:, None],
                                 self.weights)

    def integrate_box_1d(self, low, high):
        """The integral of a one-dimensional density from low to high (scalars)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        cdf = lambda limit: special.ndtr(jnp.squeeze((limit - self.dataset) / sigma))
        return jnp.sum(self.weights * (cdf(high) - cdf(low)))

    def integrate_kde(self, other):
        """The integral of the product of this density and another estimator's."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        diff = self.dataset[:, :, None] - other.dataset[:, None, :]
        weights = self.weights[:, None] * other.weights[None, :]
        return _gaussian_overlap(self.covariance + other.covariance,
                                 diff.reshape(self.d, -1), weights.reshape(-1))

    def resample(self, key, shape=()):
        """Samples of the density, of shape (d,) + shape: data points drawn by weight plus
        kernel noise. (JAX 0.10.2 transposes the noise, so fails for a shape of two or more
        dimensions; here any shape works.)"""
        shape = tuple(shape)
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype)
        return self.dataset[:, index] + jnp.moveaxis(noise, -1, 0)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not in JAX's interface: raises NotImplementedError."""
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not in JAX's interface (the estimator is immutable): raises NotImplementedError."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")


def _gaussian_overlap(covariance, diff, weights):
    """sum_j weights_j N(diff_j; 0, covariance) for diff of shape (d, k)."""
    factor = linalg.cho_factor(covariance)
    d = covariance.shape[0]
    norm = jnp.sqrt(2 * np.pi) ** d * jnp.prod(jnp.diag(factor[0]))
    exponent = 0.5 * jnp.sum(diff * linalg.cho_solve(factor, diff), axis=0)
    return jnp.sum(jnp.exp(-exponent) * weights) / norm
