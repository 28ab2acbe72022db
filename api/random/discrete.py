"""jax.random's counting samplers with JAX's loops and key splits, so the draws are JAX's:
poisson (Knuth's multiplication method below rate 10, Hormann's transformed rejection PTRS
from 10 on), binomial (geometric inversion for n min(p, 1-p) <= 10, Hormann's BTRS above) and
multinomial (a scan of conditional binomials)."""
import numpy as np

from ...core import dtypes as _dt
from .. import lax
from .. import numpy as jnp
from ..numpy.promotion import _check_args, _promote_to_inexact as _promote_inexact
from .prng import _canonical_dtype, _canonical_shape, _check_key, _split_data
from .samplers import _check_shape, _float_dtype, _uniform

_F32 = np.dtype(np.float32)


def _keys(data, n):
    keys = _split_data(data, (n,))
    return [keys[i] for i in range(n)]


def _knuth(data, lam, shape, dtype, max_iters):
    """k - 1 for the first k with u_1 ... u_k <= exp(-lam): one uniform per step, for all."""
    def body(carry):
        i, k, key, log_prod = carry
        key, sub = _keys(key, 2)
        k = lax.select(log_prod > -lam, k + 1, k)
        return i + 1, k, key, log_prod + jnp.log(_uniform(sub, shape, _F32, 0.0, 1.0))

    def cond(carry):
        i, _, _, log_prod = carry
        return jnp.any(log_prod > -lam) & (i < max_iters)
    init = (np.zeros((), dtype), jnp.zeros(shape, dtype), data, jnp.zeros(shape, _F32))
    return (lax.while_loop(cond, body, init)[1] - 1).astype(dtype)


def _rejection(data, lam, shape, dtype, max_iters):
    """Hormann's PTRS: a transformed uniform proposal, accepted by a squeeze or the exact test."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = _keys(key, 3)
        u = _uniform(sub0, shape, lam.dtype, 0.0, 1.0) - 0.5
        v = _uniform(sub1, shape, lam.dtype, 0.0, 1.0)
        us = 0.5 - abs(u)
        k = lax.floor((2 * a / us + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        squeeze = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = squeeze | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        return jnp.any(~carry[2]) & (carry[0] < max_iters)
    init = (np.zeros((), dtype), jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool), data)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) samples of integer `dtype` (lam is converted to float32, as in JAX)."""
    data, _ = _check_key("poisson", key)
    if data._impl.name != "threefry2x32":  # as JAX's check
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {data._impl.name}")
    dtype = _canonical_dtype("poisson", dtype, np.int64)
    shape = np.shape(lam) if shape is None else _canonical_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), _F32)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    max_iters = np.array(_dt.iinfo(dtype).max, dtype)
    knuth = _knuth(data, lax.select(use_knuth, lam, jnp.zeros_like(lam)), shape, dtype, max_iters)
    rejection = _rejection(data, lax.select(use_knuth, jnp.full_like(lam, 1e5), lam), shape,
                           dtype, max_iters)
    result = lax.select(use_knuth, knuth, rejection)
    return lax.select(lam == 0, jnp.zeros_like(result), result)


# ---------------------------------------------------------------- binomial

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k):
    """log k! - (Stirling's approximation): tabulated to 9, its asymptotic series beyond."""
    table = jnp.asarray(_STIRLING_TAIL.astype(k.dtype))
    small = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(small, table[jnp.floor(k).astype(np.int32)], approx)


def _binomial_inversion(data, count, prob, shape, dtype, max_iters):
    """The number of geometric(prob) waiting times that fit in count trials."""
    log1m = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        sub, key = _keys(key, 2)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(sub, shape, prob.dtype, 0.0, 1.0)
        return i + 1, num_geom, geom_sum + jnp.ceil(jnp.log(u) / log1m), key

    def cond(carry):
        return jnp.any(carry[2] <= count) & (carry[0] < max_iters)
    zeros = jnp.zeros(shape, prob.dtype)
    return (lax.while_loop(cond, body, (np.zeros((), dtype), zeros, zeros, data))[1] - 1).astype(dtype)


def _btrs_bound(k, count, r, m):
    """The log acceptance bound of BTRS at k (Hormann 1993, step 3.1)."""
    return ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k)
            - _stirling_tail(count - k))


def _btrs(data, count, prob, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze for large n min(p, 1 - p)."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = _keys(key, 3)
        u = _uniform(sub0, shape, prob.dtype, 0.0, 1.0) - 0.5
        v = _uniform(sub1, shape, prob.dtype, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        squeeze = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        accept = squeeze | (~reject & (log_v <= _btrs_bound(k, count, r, m)))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        return jnp.any(~carry[2]) & (carry[0] < max_iters)
    init = (np.zeros((), dtype), jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), data)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def _binomial(data, count, prob, shape, dtype):
    prob = jnp.asarray(prob)
    prob = prob if _dt.is_inexact(prob.dtype) else prob.astype(_dt.to_inexact_dtype(prob.dtype))
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(count), prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_bad, count_inf = jnp.isnan(count) | (count < 0.0), jnp.isinf(count)
    q_nan, q_neg = jnp.isnan(q), q < 0.0
    q = lax.select(q_nan | q_neg, jnp.full_like(q, 0.01), q)
    use_inversion = count_bad | (count * q <= 10.0)
    count = jnp.floor(count)
    max_iters = np.array(_dt.finfo(dtype).max, dtype)
    inverted = _binomial_inversion(data, lax.select(use_inversion, count, jnp.zeros_like(count)),
                                   q, shape, dtype, max_iters)
    rejected = _btrs(data, lax.select(use_inversion, jnp.full_like(count, 1e4), count),
                     lax.select(use_inversion, jnp.full_like(q, 0.5), q), shape, dtype, max_iters)
    samples = lax.select(use_inversion, inverted, rejected)
    invalid = q_neg | q_nan | count_bad
    samples = lax.select(invalid, jnp.full_like(samples, np.nan), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    keep = p_lt_half | count_bad | q_nan | count_inf
    return lax.select(keep, samples, count.astype(dtype) - samples)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples, as floats of `dtype` (nan for invalid n or p, inf for n = inf)."""
    data, _ = _check_key("binomial", key)
    _check_args("binomial", n, p)
    dtype = _float_dtype("binomial", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(n), np.shape(p)))
    else:
        shape = _canonical_shape(shape)
        _check_shape("binomial", shape, np.shape(n), np.shape(p))
    return _binomial(data, n, p, shape, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts over p's last axis: for each category in turn, a binomial of
    the remaining count with the conditional probability p_i / (p_i + ... + p_last)."""
    data, _ = _check_key("multinomial", key)
    _check_args("multinomial", n, p)
    dtype = _float_dtype("multinomial", dtype)
    n, p = _promote_inexact(n, p)
    shape = p.shape if shape is None else _canonical_shape(shape)
    n, p = jnp.broadcast_to(n, shape[:-1]), jnp.broadcast_to(p, shape)
    p = jnp.moveaxis(p, -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), 0), 0)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = _split_data(data, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = _binomial(key, remainder, jnp.clip(ratio, 0, 1), remainder.shape, remainder.dtype)
        return remainder - count, count
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
