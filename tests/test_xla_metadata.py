"""jax.experimental.xla_metadata.set_xla_metadata (JAX's controlling-xla page): the
xla_metadata_value equation it stages and how grad, jvp and vmap keep it, as JAX 0.10.2 prints
them; its values (NumPy's), pytrees, and its context-manager and decorator forms."""
import importlib

import jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _tag(jax_module):
    return importlib.import_module(
        f"{jax_module.__name__}.experimental.xla_metadata").set_xla_metadata


def _functions(jax_module):
    jnp, tag = jax_module.numpy, _tag(jax_module)

    def g(x):
        return tag(jnp.sin(x) * 2, breakpoint=True, tag="a")

    def h(x):
        with tag(tag="b"):  # tags XLA's ops, not the jaxpr
            return jnp.sin(x) * 2
    return g, h


def _jaxprs(jax_module):
    g, h = _functions(jax_module)
    shown = [jax_module.make_jaxpr(f)(1.0) for f in (
        g, h, jax_module.grad(g), lambda x: jax_module.jvp(g, (x,), (x,)))]
    shown.append(jax_module.make_jaxpr(jax_module.vmap(g))(jax_module.numpy.ones(3)))
    return [str(j) for j in shown]


def test_set_xla_metadata_stages_as_jax():
    assert _jaxprs(refjax) == _jaxprs(jax)


def test_set_xla_metadata_values():
    g, h = _functions(refjax)
    for value in (g(1.0), h(1.0), refjax.jit(g)(1.0)):
        np.testing.assert_allclose(value, 2 * np.sin(np.float32(1)), rtol=1e-6)
    np.testing.assert_allclose(refjax.grad(g)(1.0), 2 * np.cos(np.float32(1)), rtol=1e-6)
    tree = _tag(refjax)({"a": refjax.numpy.ones(2), "b": 3.0}, k=1)
    assert repr(tree["b"]) == "Array(3., dtype=float32, weak_type=True)"  # as JAX's
    assert _tag(refjax)(tag="c")(lambda x: x + 1)(1.0) == 2.0
