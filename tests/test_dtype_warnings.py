"""A 64-bit dtype asked for with jax_enable_x64 off: JAX truncates it with a UserWarning naming
the function; Python's scalar types (which ask for the default) and 32-bit dtypes pass
silently. refjax warns where JAX does, with JAX's text. Also var/std given an integer
dtype= (values, dtypes and errors as JAX's)."""
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


def _located(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [(w.category.__name__, str(w.message), w.filename) for w in caught]


@pytest.mark.backends("numpy_ref")
def test_result_type_of_64_bit_dtype_arguments_warns_as_jax_from_the_users_line():
    """jnp.result_type of a 64-bit dtype argument (a string, NumPy type or dtype) with x64 off
    warns "requested in dtype" once per such argument, as JAX's (refjax was silent); arrays
    and values of 64-bit dtypes, Python's types and jnp's scalar types do not. JAX's warning
    points into its own dtypes.py; refjax's points at the user's line (this file)."""
    calls = [("float64",), (np.float64,), (np.dtype("int64"), "int32"), ("complex128", "float64"),
             (jnp.float64,), (np.ones(2),), (np.float64(1),), (float,), ("float32",)]
    for args in calls:
        theirs, ours = _located(lambda: jnp.result_type(*args)), _located(
            lambda: rnp.result_type(*[getattr(rnp, a.__name__) if a is jnp.float64 else a
                                      for a in args]))
        assert ours[0] == theirs[0], args
        assert [w[:2] for w in ours[1]] == [w[:2] for w in theirs[1]], args
        assert all(w[2] == __file__ for w in ours[1]), args
        assert all(w[2].endswith("dtypes.py") for w in theirs[1]), args
    assert len(_located(lambda: rnp.result_type("complex128", "float64"))[1]) == 2


@pytest.mark.backends("numpy_ref", "xla")
def test_var_and_std_with_an_integer_dtype_as_jax():
    """var computes in the integer dtype= (truncating the mean, as JAX's) and returns a weak
    float (NaN where no degrees of freedom remain, not "cannot convert float NaN to
    integer"); std refuses a dtype that is not inexact with JAX's ValueError."""
    x, i8 = np.arange(6.0), np.array([1, 5, 2, 7], np.int8)
    for a, kw in [(x, {}), (x, dict(ddof=6)), (i8, dict(ddof=1)), (i8, dict(axis=0)),
                  (np.ones((2, 0)), dict(axis=1))]:
        for dtype in (int, "int8", np.uint32):
            want = jnp.var(a, dtype=dtype, **kw)
            got = rnp.var(a, dtype=dtype, **kw)
            assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (kw, dtype)
            np.testing.assert_array_equal(got, want)
    for dtype in (int, bool, np.uint8):
        with pytest.raises(ValueError) as theirs:
            jnp.std(x, dtype=dtype)
        with pytest.raises(ValueError) as ours:
            rnp.std(x, dtype=dtype)
        assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == "dtype argument to jnp.std must be inexact; got uint8"
