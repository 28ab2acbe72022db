"""JAX's switches against real JAX 0.10.2: jax_debug_nans / jax_debug_infs (config and context
managers; eager ops, jitted calls re-run op by op to name the culprit, nested jits, grads),
jax_numpy_rank_promotion ('raise' / 'warn'), jax_default_matmul_precision, the enum options'
validation; on both backends."""
import warnings

import jax as real_jax
import pytest
from jax_recordings import on_jax

import refjax
from jax_compare import outcome as _outcome

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _nan_programs(jax):
    jnp = jax.numpy

    def f(x):
        return jnp.log(x) * 0 + jnp.sqrt(x - 2)

    def nested(x):
        return jax.jit(lambda z: jnp.sin(z) / z)(x) * 2
    return {
        "div": lambda: jnp.float32(0.0) / 0.0,
        "log": lambda: jnp.log(-1.0),
        "jit_names_the_op": lambda: jax.jit(f)(1.0),
        "jit_again": lambda: [jax.jit(f)(3.0), jax.jit(f)(1.0)],
        "nested_jit": lambda: jax.jit(nested)(0.0),
        "grad_inf_is_no_nan": lambda: jax.grad(jnp.sqrt)(0.0),
        "grad_nan": lambda: jax.grad(lambda x: jnp.sqrt(x) * 0.0)(-1.0),
        "clean": lambda: jax.jit(lambda x: x + 1)(3.0),
        "integers": lambda: jnp.arange(3) // 1,
    }


@pytest.mark.parametrize("name", sorted(_nan_programs(real_jax)))
def test_debug_nans_as_jax(name):
    """(JAX also logs 'Invalid nan value encountered in the output of a jax.jit function.
    Calling the de-optimized version.'; refjax raises the same error without the log line.)"""
    results = []
    for jax in (refjax, real_jax):
        with jax.debug_nans(True):
            results.append(_outcome(_nan_programs(jax)[name]))
    assert results[0] == results[1]


def test_debug_nans_by_config_update():
    """Set by config.update: the same results as the context manager. refjax names log.
    JAX raises FloatingPointError too, but its message depends on the process's state: run
    alone, its de-optimized re-run of a jitted `log` fails to find the NaN and says so at
    length; after other tests it names log as refjax does."""
    results = []
    for jax in (refjax, real_jax):
        jax.config.update("jax_debug_nans", True)
        try:
            results.append(_outcome(lambda: jax.jit(lambda x: jax.numpy.log(x))(-1.0)))
        finally:
            jax.config.update("jax_debug_nans", False)
        results.append(_outcome(lambda: jax.jit(lambda x: jax.numpy.log(x))(-1.0)))
    assert results[1] == results[3] == "Array(nan, dtype=float32, weak_type=True)"
    assert results[0] == "FloatingPointError: invalid value (nan) encountered in log"
    assert results[2].startswith("FloatingPointError: ")


@pytest.mark.parametrize("program", [
    lambda jax: jax.numpy.float32(1.0) / 0.0,
    lambda jax: jax.jit(jax.numpy.exp)(1000.0),
    lambda jax: jax.numpy.log(-1.0),  # a NaN is no inf
])
def test_debug_infs_as_jax(program):
    results = []
    for jax in (refjax, real_jax):
        with jax.debug_infs(True):
            results.append(_outcome(lambda: program(jax)))
    assert results[0] == results[1]


def test_debug_nans_state_value():
    with refjax.debug_nans(True):
        assert refjax.debug_nans.value is True and refjax.config.jax_debug_nans is True
    assert refjax.debug_nans.value is False


def _rank_programs(jax):
    jnp = jax.numpy
    return {
        "add": lambda: jnp.ones(3) + jnp.ones((2, 3)),
        "scalar": lambda: (jnp.ones(3) + 1.0).shape,
        "same_rank": lambda: (jnp.ones((1, 3)) + jnp.ones((2, 3))).shape,
        "where": lambda: jnp.where(jnp.ones(3) > 0, jnp.ones((2, 3)), 0.0).shape,
        "matmul": lambda: (jnp.ones(3) @ jnp.ones((3, 2))).shape,
        "multiply": lambda: jnp.multiply(jnp.ones((2, 1)), jnp.ones(3)),
        "less": lambda: jnp.ones(3) < jnp.ones((2, 3)),
    }


@pytest.mark.parametrize("name", sorted(_rank_programs(real_jax)))
def test_rank_promotion_raise_as_jax(name):
    results = []
    for jax in (refjax, real_jax):
        with jax.numpy_rank_promotion("raise"):
            results.append(_outcome(_rank_programs(jax)[name]))
    assert results[0] == results[1]


def test_rank_promotion_warn_as_jax():
    """(JAX caches its shape checks, so it warns once per pair of shapes: each backend's run
    uses shapes of its own.)"""
    messages = []
    rows = 2 if refjax.current_backend_name() == "numpy_ref" else 4
    for jax in (refjax, real_jax):
        with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            jax.numpy.ones(3) + jax.numpy.ones((rows, 3))
        messages.append([(x.category, str(x.message)) for x in w])
    assert messages[0] == messages[1] and len(messages[0]) == 1


@pytest.mark.parametrize("option, value", [
    ("jax_numpy_rank_promotion", "foo"), ("jax_numpy_rank_promotion", None),
    ("jax_default_matmul_precision", "foo"),
])
def test_enum_options_validated_as_jax(option, value):
    outcomes = [_outcome(lambda: jax.config.update(option, value))
                for jax in (refjax, real_jax)]
    assert outcomes[0] == outcomes[1] and outcomes[0].startswith("ValueError")
    assert getattr(refjax.config, option) == getattr(real_jax.config, option)


def test_default_matmul_precision_as_jax():
    def run(jax):
        with jax.default_matmul_precision("float32"):
            jnp = jax.numpy
            return (jax.config.jax_default_matmul_precision,
                    float(jnp.dot(jnp.ones(2), jnp.ones(2))),
                    str(jax.make_jaxpr(jnp.dot)(jnp.ones(2), jnp.ones(2))))
    assert run(refjax) == on_jax(run)
