"""jax.random's gamma, loggamma and beta samplers: JAX's algorithm (Marsaglia and Tsang's
rejection sampler on the same key splits, uniforms and normals), so the values agree with
JAX's, and their derivatives in the shape parameters through lax.random_gamma_grad."""
import math

import numpy as np

from ...core.transforms.custom import custom_jvp
from ...core.transforms.vmap import vmap
from .. import lax
from .. import numpy as jnp
from .prng import _canonical_shape, _check_key, _split2, _split_data
from .samplers import _check_shape, _float_dtype, _normal, _uniform


def _const(x, value):
    return lax.full((), value, x.dtype)


def _split3(data):
    keys = _split_data(data, (3,))
    return [keys[i] for i in range(3)]


def _gamma_one(data, alpha, log_space):
    """One Gamma(alpha) sample (or its log) from one key's data, as JAX's _gamma_one: alpha < 1
    is boosted to alpha + 1 and the sample scaled by u**(1/alpha)."""
    one, third = _const(alpha, 1), _const(alpha, 1 / 3)
    boost_mask = lax.ge(alpha, one)
    alpha_orig, alpha = alpha, lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, third)
    c = lax.div(third, lax.sqrt(d))
    data, subkey = _split2(data)
    _, _, v, _ = lax.while_loop(_rejected(d), _proposal(c, alpha.dtype),
                                (data, _const(alpha, 0), one, _const(alpha, 2)))
    if log_space:
        log_u = lax.log1p(lax.neg(_uniform(subkey, (), alpha.dtype, 0.0, 1.0)))  # -Exp(1)
        zero = _const(alpha, 0)
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, zero)), zero,
                               lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(one, _uniform(subkey, (), alpha.dtype, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _rejected(d):
    """Marsaglia and Tsang's test, true while the proposal (X = x**2, V = v**3, U) is
    rejected (both conditions are evaluated, as JAX does)."""
    def cond(state):
        _, x2, v, u = state
        one = _const(u, 1)
        squeeze = lax.ge(u, lax.sub(one, lax.mul(_const(u, 0.0331), lax.mul(x2, x2))))
        log_test = lax.ge(lax.log(u), lax.add(lax.mul(x2, _const(u, 0.5)),
                                              lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))))
        return lax.bitwise_and(squeeze, log_test)
    return cond


def _proposal(c, dtype):
    """A normal x with v = 1 + c x > 0 (redrawn until it is), and a uniform."""
    def body(state):
        data, x_key, u_key = _split3(state[0])

        def next_x(kxv):
            k, sub = _split2(kxv[0])
            x = _normal(sub, (), dtype)
            return k, x, lax.add(lax.full((), 1, dtype), lax.mul(x, c))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], lax.full((), 0, dtype)), next_x,
                                 (x_key, lax.full((), 0, dtype), lax.full((), -1, dtype)))
        u = _uniform(u_key, (), dtype, 0.0, 1.0)
        return data, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u
    return body


def _gamma_impl(data, a, log_space):
    """One key split into a.size keys, one sample per element of `a` (JAX's vmap lowering)."""
    shape = tuple(a.shape)
    keys = _split_data(data, (math.prod(shape),))
    flat = lax.reshape(a, (math.prod(shape),))
    samples = vmap(lambda k, x: _gamma_one(k, x, log_space))(keys, flat)
    return lax.reshape(samples, shape)


def _make_gamma(log_space):
    sample = custom_jvp(lambda data, a: _gamma_impl(data, a, log_space))

    @sample.defjvp
    def _jvp(primals, tangents):
        data, a = primals
        out = sample(data, a)
        return out, lax.mul(tangents[1], _gamma_grad(out, a, log_space))
    return sample


def _gamma_grad(sample, a, log_space):
    """d sample / d a at a fixed quantile (lax.random_gamma_grad); in log space divided by the
    sample, whose underflow to 0 is replaced by the smallest normal float (as JAX)."""
    if not log_space:
        return lax.random_gamma_grad(a, sample)
    x = lax.exp(sample)
    tiny = lax.full(x.shape, float(np.finfo(x.dtype).tiny), x.dtype)
    x = lax.select(lax.eq(x, lax.full(x.shape, 0, x.dtype)), tiny, x)
    return lax.div(lax.random_gamma_grad(a, x), x)


_SAMPLERS = {False: _make_gamma(False), True: _make_gamma(True)}


def _gamma(name, key, a, shape, dtype, log_space):
    data, _ = _check_key(name, key)
    dtype = _float_dtype(name if name != "loggamma" else "gamma", dtype)
    a = jnp.asarray(a)
    if shape is None:
        shape = tuple(a.shape)
    else:
        shape = _canonical_shape(shape)
        _check_shape(name, shape, tuple(a.shape))
    a = lax.convert_element_type(a, dtype)
    if tuple(a.shape) != shape:
        a = jnp.broadcast_to(a, shape)
    return _SAMPLERS[log_space](data, a)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples of `shape` (default: a's) and float `dtype`, differentiable in `a`."""
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, computed in log space (accurate for small `a`)."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples: G_a / (G_a + G_b) of two log-gamma draws, scaled by their maximum
    (as JAX), differentiable in `a` and `b`."""
    data, _ = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    a, b = jnp.asarray(a), jnp.asarray(b)
    if shape is None:
        shape = jnp.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    else:
        shape = _canonical_shape(shape)
        _check_shape("beta", shape, tuple(a.shape), tuple(b.shape))
    a, b = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape) for v in (a, b))
    key_a, key_b = _split2(data)
    log_a, log_b = (_SAMPLERS[True](k, v) for k, v in ((key_a, a), (key_b, b)))
    log_max = lax.max(log_a, log_b)
    ga, gb = lax.exp(lax.sub(log_a, log_max)), lax.exp(lax.sub(log_b, log_max))
    return lax.div(ga, lax.add(ga, gb))
