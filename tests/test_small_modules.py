"""jax.flatten_util, jax.typing, jax.errors and jax.experimental.mesh_utils, importable as in
JAX and compared with real JAX 0.10.2."""
import importlib

import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _ravel_story(j):
    """What ravel_pytree gives and its unravel does, over trees of one and of mixed dtypes."""
    fu, jnp = importlib.import_module(j.__name__ + ".flatten_util"), j.numpy
    trees = [{"a": jnp.ones((2, 3)), "b": [jnp.arange(3), 2.0]},
             (jnp.ones(2, jnp.float16), jnp.ones(3, jnp.bfloat16)), [],
             {"x": np.int8(3), "y": np.ones(2, np.uint8)},
             (jnp.ones(2, jnp.complex64), jnp.ones(1))]
    out = []
    for t in trees:
        flat, unravel = fu.ravel_pytree(t)
        back = unravel(flat * 2) if flat.size else unravel(flat)
        out.append((repr(flat), repr(back)))
    flat, unravel = fu.ravel_pytree((jnp.ones(2, jnp.float16), jnp.arange(3.0)))
    try:
        unravel(jnp.ones(5, jnp.int32))
    except TypeError as e:
        out.append(str(e))
    out.append(repr(j.jit(unravel)(flat)))
    out.append(repr(j.grad(lambda f: jnp.sum(unravel(f)[1] ** 2))(flat)))
    out.append(unravel == fu.ravel_pytree((jnp.ones(2, jnp.float16), jnp.ones(3)))[1])
    return out


def test_ravel_pytree_as_jax():
    assert _ravel_story(refjax) == on_jax(_ravel_story)


def test_typing_and_errors_import_as_in_jax():
    from refjax.errors import NonConcreteBooleanIndexError
    from refjax.typing import ArrayLike, DTypeLike

    def f(x: ArrayLike, dtype: DTypeLike) -> refjax.Array:
        return refjax.numpy.asarray(x, dtype)
    assert f(3, "int8").dtype == np.int8
    with pytest.raises(NonConcreteBooleanIndexError) as ours:
        refjax.jit(lambda x: x[x > 0])(refjax.numpy.arange(3.0))
    with pytest.raises(real_jax.errors.NonConcreteBooleanIndexError) as theirs:
        real_jax.jit(lambda x: x[x > 0])(real_jax.numpy.arange(3.0))
    assert isinstance(ours.value, IndexError) and isinstance(theirs.value, IndexError)



def _mesh_ids(j):
    """Ids of the devices create_device_mesh lays out, and its errors' text."""
    mu = importlib.import_module(j.__name__ + ".experimental.mesh_utils")
    ids = lambda a: [[d.id for d in row] for row in a]  # noqa: E731
    out = [ids(mu.create_device_mesh((2, 4))), ids(mu.create_device_mesh((2, 2),
                                                                          j.devices()[4:]))]
    try:
        mu.create_device_mesh((3,))
    except ValueError as e:
        out.append(str(e))
    return out


@pytest.mark.backends()
def test_create_device_mesh_as_jax():
    assert _mesh_ids(refjax) == on_jax(_mesh_ids)
