"""refjax.nn: common activation functions and helpers of jax.nn, built on jnp and lax."""
from ..core.transforms.custom import custom_jvp
from . import numpy as jnp
from . import lax
from .numpy.promotion import _static_int


def sigmoid(x):
    """1 / (1 + exp(-x)) (lax.logistic: inexact inputs only, as in JAX)."""
    return lax.logistic(jnp.asarray(x))


def _float(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


@custom_jvp
def relu(x):
    """max(x, 0); its derivative at 0 is 0, as in JAX."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full(g.shape, 0, g.dtype)))


def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


def softplus(x):
    return jnp.logaddexp(x, 0)


def silu(x):
    """x * sigmoid(x) (inexact inputs only, as in JAX)."""
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    x = _float(x)
    if approximate:
        c = jnp.sqrt(2 / jnp.pi).astype(x.dtype)
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + lax.erf(x / jnp.sqrt(2.0).astype(x.dtype)))


def elu(x, alpha=1.0):
    """x where positive, alpha * (exp(x) - 1) elsewhere (integers promote as in JAX)."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=0.01):
    """x where non-negative, negative_slope * x elsewhere (integers promote as in JAX)."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def tanh(x):
    return jnp.tanh(x)


def log_sigmoid(x):
    """-softplus(-x); booleans are rejected (JAX: neg does not accept them)."""
    return -softplus(-_numeric("log_sigmoid", x))


def _numeric(name, x):
    """x as an Array, TypeError naming `name` for booleans (JAX rejects them there)."""
    x = jnp.asarray(x)
    if x.dtype == jnp.bool_:
        raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    return _float(x)


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) computed stably."""
    x = _float(x)
    m = lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    out = jnp.log(jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else jnp.squeeze(out, axis=axis)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along axis, computed stably."""
    x = _numeric("softmax", x)
    unnormalized = jnp.exp(x - lax.stop_gradient(jnp.max(x, axis, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis, keepdims=True)


def log_softmax(x, axis=-1):
    x = _numeric("log_softmax", x)
    shifted = x - lax.stop_gradient(jnp.max(x, axis, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True))


def one_hot(x, num_classes, dtype=jnp.float32, axis=-1):
    """One-hot encoding of integer x along a new last axis."""
    x = jnp.asarray(x)
    num_classes = _static_int(num_classes, "The error arose in jax.nn.one_hot argument "
                                           "`num_classes`")
    if num_classes < 0:
        raise TypeError(f"one_hot: num_classes must be a non-negative integer, got {num_classes}")
    classes = lax.broadcasted_iota(jnp.int32, x.shape + (num_classes,), x.ndim)
    out = (jnp.expand_dims(x, -1) == classes).astype(dtype)
    return jnp.moveaxis(out, -1, axis) if axis != -1 else out


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    x = _float(x)
    mean = jnp.mean(x, axis, keepdims=True) if mean is None else mean
    variance = jnp.var(x, axis, keepdims=True) if variance is None else variance
    return (x - mean) * lax.rsqrt(variance + epsilon)

from ..core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "nn")  # errors raised below a public function name it
