"""unique (size/fill_value, axis, NaNs), unique_all/counts/inverse/values, union1d,
intersect1d, setdiff1d, setxor1d against jax.numpy, eagerly and (with size) under jit."""
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp
from refjax.core.errors import ConcretizationTypeError
from jnp_compare import check, check_error, check_vmap

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.array([3, 1, 3, np.nan, 2, np.nan, 1.0], np.float32)
M = np.array([[1, 2], [1, 2], [0, 5]], np.int32)
A = np.array([1, 2, 3, 2], np.int32)
B = np.array([2, 5, 2], np.int32)
RETURNS = dict(return_index=True, return_inverse=True, return_counts=True)


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": False}, {"size": 6}, {"size": 2},
                                    {"size": 6, "fill_value": -1},
                                    {"size": 7, "equal_nan": False}])
def test_unique(kwargs):
    sized = "size" in kwargs
    check(lambda m, a: m.unique(a, **RETURNS, **kwargs), X, jit=sized)
    check(lambda m, a: m.unique(a, **kwargs), X, jit=sized)
    check(lambda m, a: m.unique(a, return_counts=True, **kwargs), X.astype(np.int32),
          jit=sized)


def test_unique_axis_and_shapes():
    check(lambda m, a: m.unique(a, axis=0, **RETURNS), M, jit=False)
    check(lambda m, a: m.unique(a, axis=1, return_inverse=True), M, jit=False)
    check(lambda m, a: m.unique(a, axis=0, size=4), M)
    check(lambda m, a: m.unique(a, axis=0, size=2, **RETURNS), M)
    check(lambda m, a: m.unique(a, axis=1, size=3, fill_value=-1, return_counts=True), M)
    check_vmap(lambda m, a: m.unique(a, axis=0, size=3), np.stack([M, M[::-1]]))
    check(lambda m, a: m.unique(a, return_inverse=True), M, jit=False)
    check(lambda m, a: m.unique(a, size=3, fill_value=0), np.zeros(0, np.float32))
    check(lambda m, a: m.unique(a, return_inverse=True, return_counts=True),
          (X[:4] + 1j * X[3:]).astype(np.complex64), jit=False)


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse"])
def test_array_api_unique(name):
    check(lambda m, a: tuple(getattr(m, name)(a)), X, jit=False)
    check(lambda m, a: tuple(getattr(m, name)(a, size=7, fill_value=-1)), X)
    out = getattr(rnp, name)(X)
    assert type(out).__name__.endswith("Result") and out._fields


def test_unique_values():
    check(lambda m, a: m.unique_values(a), X, jit=False)
    check(lambda m, a: m.unique_values(a, size=7), X)


@pytest.mark.parametrize("kwargs", [{}, {"size": 4}, {"size": 4, "fill_value": 9}, {"size": 1}])
@pytest.mark.parametrize("name", ["setdiff1d", "intersect1d", "setxor1d", "union1d"])
def test_set_operations(name, kwargs):
    sized = "size" in kwargs
    check(lambda m, p, q: getattr(m, name)(p, q, **kwargs), A, B, jit=sized)
    check(lambda m, p, q: getattr(m, name)(p, q, **kwargs), B, A.astype(np.float32), jit=sized)
    if name == "intersect1d":
        check(lambda m, p, q: m.intersect1d(p, q, return_indices=True, **kwargs), A, B,
              jit=sized)


def test_assume_unique_and_empty():
    check(lambda m, p, q: m.setdiff1d(p, q, assume_unique=True), np.array([4, 1, 3]), B,
          jit=False)
    check(lambda m, p, q: m.setdiff1d(p, q, size=2), np.zeros(0, np.int32), B)
    check(lambda m, p, q: m.intersect1d(p, q), A, np.zeros(0, np.int32), jit=False)


def test_vmap_with_size():
    check_vmap(lambda m, a: m.unique(a, size=3, fill_value=0), np.array([[1, 1, 2], [3, 3, 3]]))


def test_unsized_under_jit_is_a_concretization_error():
    with pytest.raises(ConcretizationTypeError, match=r"shape int32\[3,2\]\nThe error arose "
                       "for the first argument of jnp.unique\\(\\). .*size argument"):
        refjax.jit(lambda a: rnp.unique(a, axis=0))(M)
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        refjax.jit(rnp.unique)(X)
    with pytest.raises(ConcretizationTypeError):
        refjax.jit(rnp.union1d)(A, B)


@pytest.mark.parametrize("call", [
    lambda m: m.unique(np.zeros(0), size=2),
    lambda m: m.unique(np.ones((2, 2)), axis=2),
    lambda m: m.unique("abc"),
])
def test_errors(call):
    check_error(call)
