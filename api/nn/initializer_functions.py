"""The implementation of refjax.nn.initializers (that module re-exports its public names)."""
import math
from typing import Any, Protocol

import numpy as np

from ...core import dtypes as _dt
from .. import numpy as jnp
from .. import random
from ..out_sharding import canonicalize_sharding, with_out_sharding
from ..random.prng import _canonical_shape

__all__ = ["Initializer", "constant", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
           "normal", "ones", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
           "xavier_uniform", "zeros"]


class Initializer(Protocol):
    """What an initializer is: a callable (key, shape, dtype) -> array."""

    def __call__(self, key: Any, shape: Any, dtype: Any = None, out_sharding: Any = None) -> Any:
        ...


def _laid_out(name, out_sharding, make):
    """make()'s array laid out as out_sharding= asks (JAX passes it to the sampler `name`,
    whose errors these are)."""
    return with_out_sharding(make(), canonicalize_sharding(out_sharding, name))


def _dtype(dtype):
    """dtype, or the default float dtype for None."""
    return _dt.default_float() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (the key is ignored)."""
    return jnp.zeros(shape, _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (the key is ignored)."""
    return jnp.ones(shape, _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None):
    """An initializer filling arrays with `value`."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return _laid_out("nn.initializers.constant", out_sharding,
                         lambda: jnp.full(shape, value, dtype=_dtype(dtype)))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer sampling uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _laid_out("uniform", out_sharding,
                         lambda: random.uniform(key, shape, dtype) * jnp.array(scale, dtype))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer sampling from a centred normal distribution with standard deviation stddev."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _laid_out("normal", out_sharding,
                         lambda: random.normal(key, shape, dtype) * jnp.array(stddev, dtype))
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer sampling a normal truncated to [lower, upper], times stddev."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _laid_out("truncated_normal", out_sharding, lambda: random.truncated_normal(
            key, lower, upper, shape, dtype) * jnp.array(stddev, dtype))
    return init


def _size(shape, axes):
    """The product of shape's sizes along one axis or a sequence of axes."""
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight of `shape`: receptive field times input/output sizes."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


def _complex_uniform(key, shape, dtype):
    """Complex values uniform on the unit-variance disc (radius sqrt(2u), uniform angle)."""
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Complex values with a Rayleigh radius truncated at `upper` and a uniform angle."""
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real_dtype).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


_DENOMINATORS = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
                 "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: (i * o) ** 0.5}


def _truncated(key, shape, dtype, variance):
    """Truncated normal (at +-2 standard deviations) samples of the given variance."""
    if _dt.issubdtype(dtype, np.floating):
        stddev = jnp.sqrt(variance) / jnp.array(0.8796256610342398, dtype)
        return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
    stddev = jnp.sqrt(variance) / jnp.array(0.9531116438049121, dtype)
    return _complex_truncated_normal(key, 2, shape, dtype) * stddev


def _uniform_scaled(key, shape, dtype, variance):
    """Uniform samples on [-a, a) (or the complex disc) of the given variance."""
    if _dt.issubdtype(dtype, np.floating):
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
    return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)


_DISTRIBUTIONS = {
    "truncated_normal": _truncated,
    "normal": lambda key, shape, dtype, variance: random.normal(key, shape, dtype) * jnp.sqrt(variance),
    "uniform": _uniform_scaled,
}


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """An initializer whose samples have variance scale / n, n set by `mode` from the fans.

    mode: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg"; distribution: "truncated_normal",
    "normal" or "uniform"."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _canonical_shape(shape)
        dtype = np.dtype(_dtype(dtype))
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode not in _DENOMINATORS:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
        variance = jnp.array(scale / _DENOMINATORS[mode](fan_in, fan_out), dtype=dtype)
        return _laid_out(distribution, out_sharding,
                         lambda: _DISTRIBUTIONS[distribution](key, shape, dtype, variance))
    return init


def _scaling(scale, mode, distribution, name):
    """The named variance_scaling preset (glorot, lecun, he) for one distribution."""
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"variance_scaling({scale}, {mode!r}, {distribution!r}) with the given "
                    "axes and dtype.")
    return make


glorot_uniform = xavier_uniform = _scaling(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _scaling(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _scaling(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _scaling(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _scaling(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _scaling(2.0, "fan_in", "truncated_normal", "he_normal")
