"""jax.nn's activation functions, softmax and logsumexp family, one_hot and standardize."""
import numpy as np

from ...core import dtypes as _dt
from ...core.transforms.custom import custom_jvp
from ...core.transforms.jit import jit
from .. import numpy as jnp
from .. import lax
from ..numpy.promotion import (_arrays, _axes, _broadcast_args, _promote_to_inexact,
                               _static_int)


def sigmoid(x):
    """1 / (1 + exp(-x)) (lax.logistic: inexact inputs only, as in JAX)."""
    return lax.logistic(jnp.asarray(x))


def _float(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


@custom_jvp
@jit  # as JAX's: its custom_jvp_call holds a jit named relu
def relu(x):
    """max(x, 0); its derivative at 0 is 0, as in JAX."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full(g.shape, 0, g.dtype)))


@custom_jvp
@jit  # as JAX's: its custom_jvp_call holds a jit named relu6
def relu6(x):
    """min(max(x, 0), 6); its derivative is 0 at 0 and at 6, as in JAX."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full(g.shape, 0, g.dtype)))


@jit  # as JAX's
def softplus(x):
    """log(1 + exp(x)), computed stably as logaddexp(x, 0)."""
    return jnp.logaddexp(x, 0)


@jit  # as JAX's
def silu(x):
    """x * sigmoid(x) (inexact inputs only, as in JAX)."""
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    """Gaussian error linear unit: x * Phi(x), or its tanh approximation (the default)."""
    x = _float(x)
    if approximate:
        c = np.sqrt(2 / np.pi).astype(x.dtype)
        return x * (0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * x ** 3))))
    return jnp.array(0.5 * x * lax.erfc(-x * np.sqrt(0.5).astype(x.dtype)), dtype=x.dtype)


@jit  # as JAX's
def elu(x, alpha=1.0):
    """x where positive, alpha * (exp(x) - 1) elsewhere (integers promote as in JAX)."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


@jit  # as JAX's
def leaky_relu(x, negative_slope=0.01):
    """x where non-negative, negative_slope * x elsewhere (integers promote as in JAX)."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def tanh(x):
    """Hyperbolic tangent (jnp.tanh)."""
    return jnp.tanh(x)


@jit  # as JAX's
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




def _inexact(name, *args):
    """args as arrays promoted to a common inexact dtype (JAX's promote_args_inexact)."""
    return _promote_to_inexact(*_arrays(name, *args))


@jit  # as JAX's
def identity(x):
    """x itself, as an array."""
    return _arrays("identity", x)[0]


@jit  # as JAX's
def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2, a smooth approximation of relu."""
    x, b = _arrays("squareplus", x, b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@jit  # as JAX's
def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)**2 / 4 between."""
    x = _arrays("sparse_plus", x)[0]
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit  # as JAX's
def soft_sign(x):
    """x / (|x| + 1)."""
    x = _arrays("soft_sign", x)[0]
    return x / (jnp.abs(x) + 1)


@jit  # as JAX's
def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1), the derivative of sparse_plus."""
    x = _arrays("sparse_sigmoid", x)[0]
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit  # as JAX's
def mish(x):
    """x * tanh(softplus(x))."""
    x = _arrays("mish", x)[0]
    return x * jnp.tanh(softplus(x))


@jit  # as JAX's
def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = _arrays("hard_tanh", x)[0]
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit  # as JAX's
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _arrays("celu", x)[0]
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@jit  # as JAX's
def selu(x):
    """Scaled exponential linear unit: scale * elu(x, alpha) with the self-normalising constants."""
    x = _arrays("selu", x)[0]
    return 1.0507009873554805 * elu(x, 1.6732632423543772)


@jit(static_argnames=("axis",))  # as JAX's
def glu(x, axis=-1):
    """Gated linear unit: the first half of x along axis times the sigmoid of the second half."""
    x = _arrays("glu", x)[0]
    if x.shape[axis] % 2:
        raise ValueError(f"glu: the size of axis {axis} must be divisible by 2, got shape {x.shape}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


@jit  # as JAX's
def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    x = _arrays("hard_sigmoid", x)[0]
    return relu6(x + 3.0) / 6.0


@jit  # as JAX's
def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = _arrays("hard_silu", x)[0]
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@custom_jvp
@jit  # as JAX's
def log1mexp(x):
    """log(1 - exp(-x)), accurate on both sides of log 2."""
    x = _arrays("log1mexp", x)[0]
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


# ---------------------------------------------------------------- logsumexp and softmax

def _reduction_axes(a, axis):
    """The axes a reduction over `axis` reduces (all of them for None)."""
    return tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim, name="logsumexp")


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) along axis, computed stably (jax.scipy.special.logsumexp), with
    JAX's equations: the max reduced with keepdims as asked, then expanded.

    With return_sign, returns (log|sum|, sign(sum)); otherwise a negative sum gives nan."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _broadcast_args(*_inexact("logsumexp", a, b), name="logsumexp")
        a = jnp.where(b != 0, a, -np.inf)
    else:
        a, = _inexact("logsumexp", a)
    dims = _reduction_axes(a, axis)
    amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    expanded = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, expanded.astype(a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    complex_ = jnp.issubdtype(a.dtype, jnp.complexfloating)
    if return_sign or not complex_:
        sumexp = jnp.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not complex_:
        out = jnp.where(sign < 0, jnp.array(np.nan, out.dtype), out)
    return out


def _count(x, axis, where, keepdims, dtype):
    """The number of elements each reduction over axis sees (respecting where)."""
    ones = jnp.ones(jnp.shape(x), dtype)
    return jnp.sum(ones, axis=axis, where=where, keepdims=keepdims)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along axis: logsumexp minus the log of the count."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    return lse - jnp.log(_count(x, axis, where, keepdims, lse.dtype))


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along axis, computed stably; 0 where `where` is False."""
    x = _numeric("softmax", x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


@jit(static_argnames=("axis",))  # as JAX's
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along axis, computed stably; -inf where `where` is False."""
    x = _numeric("log_softmax", x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    result = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    return result if where is None else jnp.where(where, result, -np.inf)


# ---------------------------------------------------------------- one_hot and standardize

def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of integer x along a new axis (zeros for out-of-range indices)."""
    num_classes = _static_int(num_classes, "The error arose in jax.nn.one_hot argument "
                                           "`num_classes`")
    if num_classes < 0:
        raise TypeError(f"one_hot: num_classes must be a non-negative integer, got {num_classes}")
    x = jnp.asarray(x)
    dtype = _dt.default_float() if dtype is None else dtype
    return _one_hot(x, num_classes, dtype=dtype, axis=_axes(axis, x.ndim + 1, name="one_hot")[0])


@jit(static_argnames=("num_classes", "dtype", "axis"))  # as JAX's
def _one_hot(x, num_classes, *, dtype, axis):
    expanded = jnp.expand_dims(x, axis)
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(axis, num_classes)
    return (expanded == lax.broadcasted_iota(x.dtype, tuple(rhs_shape), axis)).astype(dtype)


@jit(static_argnames=("axis", "algorithm"))  # as JAX's
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), the moments along axis unless given."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    x = _arrays("standardize", x)[0]
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None and algorithm == "stable":
        variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
    elif variance is None:
        variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
        variance = jnp.clip(variance, 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)
