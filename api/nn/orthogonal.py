"""jax.nn.initializers.orthogonal and delta_orthogonal: initializers drawing (scaled)
orthogonal matrices with jax.random.orthogonal."""
import math

import numpy as np

from .. import numpy as jnp
from ..random import orthogonal as _random_orthogonal


def _default_dtype(dtype):
    return jnp.result_type(float) if dtype is None else dtype


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of arrays whose `column_axis` slices are orthonormal (scaled by scale):
    a random orthogonal (prod of the other dims) x shape[column_axis] matrix, reshaped."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:  # as JAX 0.10's (its random.orthogonal takes one)
            raise NotImplementedError("nn.initializers.orthogonal: out_sharding is not "
                                      "supported by refjax")
        dtype = _default_dtype(dtype)
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        q = _random_orthogonal(key, math.prod(shape) // n_cols, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return jnp.array(scale, dtype) * jnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of 3-5-D convolution kernels that are zero but at the spatial centre,
    which holds an orthogonal (fan_in x fan_out) matrix (Xiao et al., 2018)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("nn.initializers.delta_orthogonal: out_sharding is not "
                                      "supported by refjax")
        dtype = _default_dtype(dtype)
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre + (Ellipsis,)].set(matrix)
    return init
