"""A 64-bit dtype asked for with jax_enable_x64 off: JAX truncates it with a UserWarning naming
the function; Python's scalar types (which ask for the default) and 32-bit dtypes pass
silently. refjax warns where JAX does, with JAX's text."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp

DTYPES = [float, int, complex, bool, "float32", "float64", np.float64, np.dtype("float64"),
          "int64", np.dtype("uint64"), "complex128"]
CALLS = {
    "astype": lambda np_, d: np_.ones(2).astype(d),
    "array": lambda np_, d: np_.array([1.0], dtype=d),
    "array of an array": lambda np_, d: np_.array(np.ones(2)),
    "asarray of an array": lambda np_, d: np_.asarray(np_.ones(2), dtype=d),
    "asarray of a scalar": lambda np_, d: np_.asarray(1.0, dtype=d),
    "mean": lambda np_, d: np_.mean(np_.ones(2), dtype=d),
    "full": lambda np_, d: np_.full(2, 1, dtype=d),
    "zeros_like": lambda np_, d: np_.zeros_like(np_.ones(2), dtype=d),
    "ones_like": lambda np_, d: np_.ones_like(np_.ones(2), dtype=d),
    "empty_like": lambda np_, d: np_.empty_like(np_.ones(2), dtype=d),
    "linspace": lambda np_, d: np_.linspace(0, 1, 3, dtype=d),
    "arange": lambda np_, d: np_.arange(3, dtype=d),
    "eye": lambda np_, d: np_.eye(2, dtype=d),
}


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.backends("numpy_ref")
def test_zeros_warns_as_jax_for_each_dtype():
    theirs = [_warned(lambda: jnp.zeros(2, d)) for d in DTYPES]
    ours = [_warned(lambda: rnp.zeros(2, d)) for d in DTYPES]
    assert ours == theirs
    assert sum(map(len, ours)) == 6  # the 64-bit ones


@pytest.mark.backends("numpy_ref")
def test_functions_taking_a_dtype_warn_as_jax():
    for name, call in CALLS.items():
        theirs = _warned(lambda: call(jnp, "float64"))
        assert _warned(lambda: call(rnp, "float64")) == theirs, name
        assert _warned(lambda: call(rnp, "float32")) == [], name


@pytest.mark.backends("numpy_ref")
def test_no_warning_with_x64():
    with refjax.enable_x64(True):
        assert _warned(lambda: rnp.zeros(2, "float64")) == []
        assert rnp.zeros(2, "float64").dtype == np.float64
    assert jax.config.jax_enable_x64 is False
