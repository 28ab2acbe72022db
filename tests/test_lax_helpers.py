"""The small lax helpers (full_like, reciprocal, collapse, broadcast_to_rank,
broadcast_shapes, dynamic_index_in_dim, dynamic_update_index_in_dim, dtype) against real JAX
0.10.2: values, dtypes, staged jaxprs and errors."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_compare import assert_same_error


def _cases(jax):
    jnp, lax = jax.numpy, jax.lax
    x = jnp.arange(6.0).reshape(2, 3)
    return {
        "full_like": lambda: lax.full_like(x, 3),
        "full_like_dtype_shape": lambda: lax.full_like(x, 2, jnp.int32, (4,)),
        "reciprocal_scalar": lambda: lax.reciprocal(2.0),
        "reciprocal": lambda: lax.reciprocal(x + 1),
        "collapse": lambda: lax.collapse(jnp.ones((2, 3, 4)), 1),
        "collapse_range": lambda: lax.collapse(jnp.ones((2, 3, 4)), 0, 2).shape,
        "broadcast_to_rank": lambda: lax.broadcast_to_rank(x, 4).shape,
        "broadcast_to_lower_rank": lambda: lax.broadcast_to_rank(x, 1).shape,
        "broadcast_shapes": lambda: lax.broadcast_shapes((2, 1), (3,)),
        "dynamic_index": lambda: lax.dynamic_index_in_dim(x, 1, 1),
        "dynamic_index_negative": lambda: lax.dynamic_index_in_dim(x, -1, 0, keepdims=False),
        "dynamic_update_index": lambda: lax.dynamic_update_index_in_dim(x, jnp.zeros(3), 1, 0),
        "dynamic_update_index_keep": lambda: lax.dynamic_update_index_in_dim(
            x, jnp.zeros((2, 1)), 0, 1),
        "dtype": lambda: [lax.dtype(1.0), lax.dtype(x), lax.dtype(True), lax.dtype(np.int8)],
        "jaxprs": lambda: [str(jax.make_jaxpr(f)(x)) for f in (
            lax.reciprocal, lambda x: lax.collapse(x, 0), lambda x: lax.full_like(x, 3),
            lambda x: lax.broadcast_to_rank(x, 4))],
    }


@pytest.mark.parametrize("name", sorted(_cases(real_jax)))
def test_as_jax(name):
    assert repr(_cases(refjax)[name]()) == repr(_cases(real_jax)[name]())


def test_broadcast_shapes_error_as_jax():
    assert_same_error(lambda jax: jax.lax.broadcast_shapes((2,), (3,)), refjax, real_jax,
                      ValueError, strip="lax.broadcast_shapes: ")
