"""lax.composite against real JAX 0.10.2: values, the staged `composite` equation (name,
version, attributes from keyword arguments, the decomposition's jaxpr), pytree outputs, jit,
and JAX's errors (no JVP); vmap, which JAX lacks, against the decomposition vmapped."""
import functools

import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_compare import outcome

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _ops(jax):
    jnp = jax.numpy

    @functools.partial(jax.lax.composite, name="my.tangent")
    def tangent(x, *, scale=1.0):
        return jnp.sin(x) / jnp.cos(x) * scale
    two = jax.lax.composite(lambda x, y: (x + y, {"p": x * y}), "two", version=3)
    return tangent, two


def _cases(jax):
    tangent, two = _ops(jax)
    return {
        "value": lambda: tangent(1.0),
        "attribute": lambda: tangent(1.0, scale=2.0),
        "jit": lambda: jax.jit(tangent)(1.0),
        "jaxpr": lambda: str(jax.make_jaxpr(tangent)(1.0)),
        "jaxpr_attributes": lambda: str(jax.make_jaxpr(lambda x: tangent(x, scale=2))(1.0)),
        "pytree_outputs": lambda: (two(1.0, 2.0), str(jax.make_jaxpr(two)(1.0, 2.0))),
        "grad_raises": lambda: _error(lambda: jax.grad(tangent)(1.0)),
        "jvp_raises": lambda: _error(lambda: jax.jvp(tangent, (1.0,), (1.0,))),
        "name_required": lambda: _error(lambda: jax.lax.composite(lambda x: x)),
    }


def _error(fn):
    return outcome(fn, lambda _: None)


@pytest.mark.parametrize("name", sorted(_cases(real_jax)))
def test_as_jax(name):
    ours, theirs = _cases(refjax)[name](), _cases(real_jax)[name]()
    assert refjax.tree.structure(ours) == refjax.tree.structure(theirs)
    for a, e in zip(refjax.tree.leaves(ours), real_jax.tree.leaves(theirs)):
        if isinstance(e, str):
            assert a == e
        else:
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-6)


def test_vmap_through_the_decomposition():
    """JAX 0.10.2: NotImplementedError (no batching rule for composite)."""
    tangent, _ = _ops(refjax)
    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    np.testing.assert_allclose(refjax.vmap(tangent)(x), np.tan(x), rtol=1e-6)
    assert "composite[" in str(refjax.make_jaxpr(refjax.vmap(tangent))(x))
    with pytest.raises(NotImplementedError):
        real_jax.vmap(_ops(real_jax)[0])(x)
