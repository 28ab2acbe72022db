"""Samplers built from the basic ones as JAX 0.10.2 builds them (the same key splits and
operations, so the same bits): cauchy, lognormal, rayleigh, weibull_min, pareto, maxwell,
double_sided_maxwell, triangular, wald, t, chisquare, f, dirichlet, generalized_normal, ball,
geometric."""
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.errors import TypePromotionError
from ...core.trace import Tracer
from .. import lax
from .. import numpy as jnp
from .gamma import gamma, loggamma
from .prng import _canonical_dtype, _canonical_shape, _check_key, split
from .samplers import (_broadcast_param_shape, _check_shape, _float_dtype, exponential, normal,
                       rademacher, uniform)


def _checked(name, key, dtype, kinds="f", what="a float"):
    """The dtype a sampler draws (after checking the key and the dtype's kind)."""
    _check_key(name, key)
    return _float_dtype(name, dtype, kinds, what)


def _safe_to_cast(name, dtype, *params):
    """TypePromotionError, as JAX's, for a parameter that cannot be cast to dtype safely (a
    complex one to a real dtype, a float one to ... only inexact dtypes are drawn here)."""
    for p in params:
        pdtype = jnp.asarray(p).dtype
        if _dt.kind(pdtype) == "c" and _dt.kind(dtype) != "c":
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument of "
                                     f"type {pdtype} to {np.dtype(dtype)}")


def _shape_for(name, shape, *params):
    """The sample shape: `shape`, checked against the parameters' shapes, or their broadcast."""
    shape = _broadcast_param_shape(shape, *params)
    _check_shape(name, shape, *(np.shape(p) for p in params))
    return shape


def _as(x, dtype):
    return lax.convert_element_type(jnp.asarray(x), dtype)


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples: tan(pi (u - 1/2)), u uniform on [eps, 1)."""
    dtype = _checked("cauchy", key, dtype)
    u = uniform(key, _canonical_shape(shape), dtype, minval=float(_dt.finfo(dtype).eps))
    return lax.tan(lax.mul(lax.full((), np.pi, dtype), lax.sub(u, lax.full((), 0.5, dtype))))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * N(0, 1)) samples (float or complex dtype)."""
    dtype = _checked("lognormal", key, dtype, "fc", "a float or complex")
    shape = _shape_for("lognormal", shape, sigma)
    _safe_to_cast("lognormal", dtype, sigma)
    return lax.exp(normal(key, shape, dtype) * _as(sigma, dtype))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples: scale * sqrt(-2 log u)."""
    dtype = _checked("rayleigh", key, dtype)
    shape = _shape_for("rayleigh", shape, scale)
    _safe_to_cast("rayleigh", dtype, scale)
    u = uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), lax.full((), -2, dtype))))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples: scale * (-log(1 - u)) ** (1 / concentration)."""
    dtype = _checked("weibull_min", key, dtype)
    u = uniform(key, _canonical_shape(shape), dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def pareto(key, b, shape=None, dtype=None):
    """Pareto samples: exp(E / b), E exponential."""
    dtype = _checked("pareto", key, dtype)
    shape = _shape_for("pareto", shape, b)
    _safe_to_cast("pareto", dtype, b)
    return lax.exp(exponential(key, shape, dtype) / _as(b, dtype))


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of three standard normal samples."""
    dtype = _checked("maxwell", key, dtype)
    draws = normal(key, _canonical_shape(shape) + (3,), dtype)
    return jnp.sqrt(jnp.sum(draws * draws, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, times scale, plus loc; shape is prepended to the
    parameters' broadcast shape."""
    dtype = _checked("double_sided_maxwell", key, dtype)
    shape = _canonical_shape(shape)
    param_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (shape or param_shape) + param_shape
    maxwell_key, sign_key = split(key)
    return rademacher(sign_key, shape, dtype) * maxwell(maxwell_key, shape, dtype) * scale + loc


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular samples on [left, right] peaking at mode, by inverting the CDF."""
    dtype = _checked("triangular", key, dtype)
    shape = _shape_for("triangular", shape, left, mode, right)
    _safe_to_cast("triangular", dtype, left, mode, right)
    left, mode, right = (jnp.broadcast_to(_as(v, dtype), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    below = left + lax.sqrt(u * (right - left) * (mode - left))
    above = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, below, above)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean, by Michael, Schucany and Haas."""
    dtype = _checked("wald", key, dtype)
    shape = _shape_for("wald", shape, mean)
    _safe_to_cast("wald", dtype, mean)
    k1, k2 = split(key)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    y = lax.integer_pow(normal(k1, shape, dtype), 2)
    z = uniform(k2, shape, dtype)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def t(key, df, shape=None, dtype=None):
    """Student's t samples: N * sqrt(df / 2 / G), G ~ Gamma(df / 2)."""
    dtype = _checked("t", key, dtype)
    shape = _shape_for("t", shape, df)
    _safe_to_cast("t", dtype, df)
    df = _as(df, dtype)
    key_n, key_g = split(key)
    n = normal(key_n, shape, dtype)
    half_df = lax.div(df, lax.full((), 2, dtype))
    return n * jnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


def _chisquare(key, df, shape, dtype):
    df = _as(df, dtype)
    two = lax.full((), 2, dtype)
    return lax.mul(jnp.exp(loggamma(key, lax.div(df, two), shape, dtype)), two)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-squared samples: 2 exp(loggamma(df / 2))."""
    dtype = _checked("chisquare", key, dtype)
    shape = _shape_for("chisquare", shape, df)
    _safe_to_cast("chisquare", dtype, df)
    return _chisquare(key, df, shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F samples: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    dtype = _checked("f", key, dtype)
    shape = _shape_for("f", shape, dfnum, dfden)
    _safe_to_cast("f", dtype, dfnum, dfden)
    dfden, dfnum = _as(dfden, dtype), _as(dfnum, dtype)
    key_den, key_num = split(key)
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    return lax.div(num, lax.div(_chisquare(key_den, dfden, shape, dtype), dfden))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet samples over alpha's last axis: softmax of loggamma samples."""
    from ..nn.functions import softmax
    dtype = _checked("dirichlet", key, dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    batch = np.shape(alpha)[:-1]
    shape = batch if shape is None else _canonical_shape(shape)
    _check_shape("dirichlet", shape, batch)
    alpha = _as(alpha, dtype)
    return softmax(loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype), -1)


def _generalized_normal(key, p, shape, dtype):
    keys = split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    return rademacher(keys[1], shape, dtype) * g ** (1 / p)


def generalized_normal(key, p, shape=(), dtype=None):
    """Samples with density proportional to exp(-|x| ** p)."""
    _check_key("generalized_normal", key)
    dtype = _canonical_dtype("generalized_normal", dtype, np.float64)
    return _generalized_normal(key, p, _canonical_shape(shape), dtype)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the d-dimensional unit p-norm ball, of shape (*shape, d)."""
    shape = _canonical_shape(shape)
    _check_key("ball", key)
    dtype = _canonical_dtype("ball", dtype, np.float64)
    if isinstance(d, Tracer):
        raise TypeError("ball: the dimension d must be concrete. The error occurred in "
                        "jax.random.ball()")
    d = operator.index(d)
    k1, k2 = split(key)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def geometric(key, p, shape=None, dtype=None):
    """Geometric samples on 1, 2, ...: floor(log u / log(1 - p)) + 1, of integer dtype."""
    _check_key("geometric", key)
    dtype = _canonical_dtype("geometric", dtype, np.int64)
    if not _dt.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _shape_for("geometric", shape, p)
    p = jnp.asarray(p)
    p = p if _dt.is_inexact(p.dtype) else p.astype(_dt.to_inexact_dtype(p.dtype))
    u = uniform(key, shape, p.dtype)
    log_u = lax.log(jnp.where(u == 0, 1, u))
    log_q = jnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.div(log_u, log_q)) + 1).astype(dtype)

