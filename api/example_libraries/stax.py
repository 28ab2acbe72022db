"""jax.example_libraries.stax: layers as (init_fun, apply_fun) pairs and their combinators,
on refjax's public API."""
import functools
import math

from .. import lax, random
from .. import numpy as jnp
from ..nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,  # noqa: F401
                  softplus, standardize)
from ..nn.initializers import glorot_normal, normal, ones, zeros

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully-connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_layer(shape_rule, apply_rule):
    """A general (transposed) convolution layer constructor, from its output-shape rule and
    its application (inputs, W, strides, padding, dimension_numbers)."""
    def layer(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
              W_init=None, b_init=normal(1e-6)):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        strides = strides or (1,) * len(filter_shape)
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            spatial = iter(filter_shape)
            kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                            if c == "I" else next(spatial) for c in rhs_spec]
            out_shape = shape_rule(input_shape, kernel_shape, strides, padding,
                                   dimension_numbers)
            k1, k2 = random.split(rng)
            bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
            return out_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            return apply_rule(inputs, W, strides, padding, dimension_numbers) + b
        return init_fun, apply_fun
    return layer


def _conv(inputs, W, strides, padding, dimension_numbers):
    one = (1,) * len(strides)
    return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                    dimension_numbers=dimension_numbers)


def _conv_transpose(inputs, W, strides, padding, dimension_numbers):
    return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers)


GeneralConv = _conv_layer(lax.conv_general_shape_tuple, _conv)
GeneralConv.__doc__ = "A general convolution layer (dimension_numbers as lax's)."
GeneralConvTranspose = _conv_layer(lax.conv_transpose_shape_tuple, _conv_transpose)
GeneralConvTranspose.__doc__ = "A general transposed-convolution layer."
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,
              beta_init=zeros, gamma_init=ones):
    """Batch normalization over `axis`, with learned offset (center) and scale."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        z = gamma[expand] * z if scale else z
        return z + beta[expand] if center else z
    return init_fun, apply_fun


def _shape_preserving(apply_fun):
    """A parameterless layer keeping its input's shape."""
    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer applying `fun` (with `fun_kwargs`) to its inputs."""
    return _shape_preserving(lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)
Identity = _shape_preserving(lambda params, inputs, **kwargs: inputs)


def _non_spatial_axes(spec, ndim):
    """The batch and channel axes: first and last by default, else where `spec` puts N, C."""
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _with_unit_axes(dims, axes):
    for i in sorted(axes):
        dims = dims[:i] + (1,) + dims[i:]
    return dims


def _window_counts(inputs, dims, strides, padding, spec):
    """How many (unpadded) input elements each window of a pooling covers."""
    axes = _non_spatial_axes(spec, inputs.ndim)
    spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in axes)
    counts = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0., lax.add, dims, strides,
                               padding)
    return jnp.reshape(counts, _with_unit_axes(counts.shape, axes))


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over `window_shape` (spatial dims; `spec` places N and C)."""
        strides = strides or (1,) * len(window_shape)
        axes = _non_spatial_axes(spec, len(window_shape) + 2)
        dims, full_strides = _with_unit_axes(window_shape, axes), _with_unit_axes(strides, axes)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, full_strides, padding)
            ones_ = (1,) * len(dims)
            return lax.reduce_window_shape_tuple(input_shape, dims, full_strides, pads,
                                                 ones_, ones_), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, full_strides, padding)
            if not average:
                return out
            return out / _window_counts(inputs, window_shape, strides, padding, spec)
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., average=True)


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


Flatten = (_flatten_init,
           lambda params, inputs, **kwargs: jnp.reshape(inputs, (inputs.shape[0], -1)))


def FanOut(num):
    """A layer copying its input into a list of `num` outputs."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (size,) + first[ax + 1:], ()
    return init_fun, lambda params, inputs, **kwargs: jnp.concatenate(inputs, axis)


_DROPOUT_NEEDS_RNG = (
    "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, instead "
    "of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` where `rng` "
    "is a PRNG key (e.g. from `jax.random.key`).")


def Dropout(rate, mode="train"):
    """Dropout keeping each input with probability `rate` (scaled by 1/rate) in train mode."""
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(_DROPOUT_NEEDS_RNG)
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return _shape_preserving(apply_fun)


def _layer_rngs(kwargs, count):
    """The per-layer keys split from kwargs' `rng` (popped), or Nones without one."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, count) if rng is not None else (None,) * count


def serial(*layers):
    """The layers composed one after another."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        for fun, param, rng in zip(apply_funs, params, _layer_rngs(kwargs, len(layers))):
            inputs = fun(param, inputs, rng=rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: a sequence of inputs to the sequence of their outputs."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        return zip(*[init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, len(layers))
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by `make_layer(input_shape)` once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
