"""ARCHITECTURE.md's recipes, followed for real: a toy primitive (tests/recipes/
cube_primitive.py) passes the generic property suite, and a toy backend (tests/recipes/
toy_backend.py) runs jit(grad(f)) with the same values as numpy_ref and JAX."""
import os
import pathlib
import subprocess
import sys

import jax as real_jax
import numpy as np
import pytest

import refjax
import refjax.numpy as jnp

HERE = pathlib.Path(__file__).resolve().parent
RECIPES = HERE / "recipes"


def _property_suite_on_cube(**env):
    """Run the generic property tests on the toy primitive in a fresh process (the plugin
    registers it before collection; this process's registry stays as it is)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "cube_primitive", "-p", "no:cacheprovider",
           "test_primitive_properties.py", "test_differential.py", "-k", "cube or every_registered"]
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(RECIPES), os.environ.get("PYTHONPATH", "")]), **env)
    return subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, env=environ,
                          timeout=600)


def test_a_primitive_added_by_the_recipe_passes_the_property_suite():
    result = _property_suite_on_cube()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "13 passed" in result.stdout, result.stdout[-500:]


def test_the_property_suite_catches_a_wrong_rule_of_that_primitive():
    result = _property_suite_on_cube(CUBE_BROKEN="jvp")
    assert result.returncode != 0
    assert "FAILED test_primitive_properties.py::test_jvp_matches_finite_differences[cube]" \
        in result.stdout


@pytest.fixture(scope="module")
def toy():
    sys.path.insert(0, str(RECIPES))
    try:
        import toy_backend  # noqa: F401  (registers the "toy" backend)
    finally:
        sys.path.remove(str(RECIPES))
    return "toy"


def _f(x):
    return jnp.sum(jnp.sin(x) * x)


def test_a_backend_added_by_the_recipe_runs_jit_of_grad(toy):
    x = np.linspace(-1.0, 1.0, 7, dtype=np.float32)
    with refjax.backend(toy):
        xs = jnp.asarray(x)
        eager, jitted = refjax.grad(_f)(xs), refjax.jit(refjax.grad(_f))(xs)
        assert xs._backend.name == jitted._backend.name == "toy"
    with refjax.backend("numpy_ref"):
        oracle = refjax.grad(_f)(jnp.asarray(x))
    expected = real_jax.grad(lambda v: real_jax.numpy.sum(real_jax.numpy.sin(v) * v))(x)
    for got in (eager, jitted):
        assert got.dtype == np.float32 and got.shape == x.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(oracle))
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


def test_a_primitive_the_toy_backend_lacks_is_named(toy):
    with refjax.backend(toy):
        x = jnp.asarray(np.ones(3, np.float32))
        with pytest.raises(NotImplementedError, match="'exp' has no rule on the toy backend"):
            jnp.exp(x)


def test_toy_arrays_are_immutable(toy):
    with refjax.backend(toy):
        x = jnp.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 5.0
