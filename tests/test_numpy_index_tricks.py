"""r_, c_, s_, index_exp, ix_, *_indices_from, mask_indices, fromfunction and vectorize against
jax.numpy (vectorize's keyword arguments against numpy.vectorize, as JAX drops them)."""
import numpy as np
import pytest

import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad

pytestmark = pytest.mark.backends("numpy_ref", "xla")

A = np.arange(3)
B = np.arange(6, dtype=np.float32).reshape(2, 3)
X = np.random.RandomState(0).rand(4, 3).astype(np.float32)
Y = np.random.RandomState(1).rand(3).astype(np.float32)


@pytest.mark.parametrize("call", [
    lambda m: m.r_[1:4, 0, A, -1:1:5j],
    lambda m: m.r_[0.5, A],
    lambda m: m.c_[A, A],
    lambda m: m.c_[B, B],
    lambda m: m.r_[B, B],
    lambda m: m.r_["0,2", A, A],
    lambda m: m.r_["1,2,0", A, A],
    lambda m: m.r_["-1", B, B],
    lambda m: m.r_["r", A, 3],
    lambda m: m.r_["c", A],
    lambda m: m.ix_(A, np.arange(2)),
    lambda m: m.ix_(np.array([1, 0, 2]), np.arange(0)),
    lambda m: m.diag_indices_from(np.ones((3, 3, 3))),
    lambda m: m.tril_indices_from(B, 1),
    lambda m: m.triu_indices_from(B, -1),
    lambda m: m.mask_indices(3, m.triu, 1),
    lambda m: m.mask_indices(3, m.tril, size=4),
    lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
    lambda m: m.fromfunction(lambda i: i / 2, (4,)),
    lambda m: m.arange(10)[m.s_[1:7:2]],
    lambda m: m.arange(10)[m.index_exp[::3]],
])
def test_index_tricks(call):
    check(call, jit=False)


def test_ix_booleans_as_numpy():
    """Concrete boolean arguments select their True positions, as in NumPy (JAX raises
    NotImplementedError)."""
    mask = np.array([True, False, True])
    for ours, theirs in zip(rnp.ix_(mask, np.arange(2)), np.ix_(mask, np.arange(2))):
        np.testing.assert_array_equal(np.asarray(ours), theirs)


def test_index_tricks_in_jit():
    check(lambda m, a: m.r_[a, 0, a], A)
    check(lambda m, a: m.c_[a, 2 * a], A)
    check(lambda m, a: a[m.ix_(m.array([0, 1]), m.array([2, 0]))], B)


@pytest.mark.parametrize("call", [
    lambda m: m.r_["a,b", A],
    lambda m: m.r_[A, "r"],
    lambda m: m.ix_(B),
    lambda m: m.diag_indices_from(np.ones((2, 3))),
    lambda m: m.tril_indices_from(np.ones(3)),
])
def test_index_trick_errors(call):
    check_error(call)


@pytest.mark.parametrize("call", [
    lambda m, x, y: m.vectorize(m.dot, signature="(n),(n)->()")(x, y),
    lambda m, x, y: m.vectorize(lambda p, q: (p + q, p * q))(x, y),
    lambda m, x, y: m.vectorize(lambda p, k: p * k, excluded={1})(x, 3),
    lambda m, x, y: m.vectorize(lambda p, s: m.sum(p) + s[0], signature="(n)->()",
                                excluded={"s"})(x, s=(1, 2)),
    lambda m, x, y: m.vectorize(lambda p: m.outer(p, p), signature="(n)->(n,n)")(x),
    lambda m, x, y: m.vectorize(lambda p: p[:2], signature="(n)->(m)")(x),
    lambda m, x, y: m.vectorize(lambda p, q: (p @ q, p), signature="(n),(n)->(),(n)")(x, y),
    lambda m, x, y: m.vectorize(lambda p, q: p - q, signature="(n),()->(n)")(x, y[:1]),
])
def test_vectorize(call):
    check(call, X, Y)


def test_vectorize_transforms():
    check_grad(lambda m, x: m.vectorize(m.dot, signature="(n),(n)->()")(x, Y).sum(), X)
    check_grad(lambda m, x: m.vectorize(m.sin)(x).sum(), X)


def test_vectorize_keywords_as_numpy():
    """numpy.vectorize maps keyword arguments too (JAX 0.10 ignores them, using defaults)."""
    def f(x, y=1):
        return x + y
    ours = rnp.vectorize(f)(np.arange(3), y=np.arange(3))
    np.testing.assert_array_equal(np.asarray(ours), np.vectorize(f)(np.arange(3), y=np.arange(3)))


@pytest.mark.parametrize("call", [
    lambda m, x, y: m.vectorize(lambda p: p, signature="(n)->()")(x),
    lambda m, x, y: m.vectorize(lambda p: p[:2], signature="(n)->(n)")(x),
    lambda m, x, y: m.vectorize(m.dot, signature="(n),(n)->()")(x, y[:2]),
    lambda m, x, y: m.vectorize(m.dot, signature="(n),(n)->()")(x),
    lambda m, x, y: m.vectorize(m.dot, signature="(n),(n)->(),()")(x, y),
    lambda m, x, y: m.vectorize(m.dot, signature="(n),(n)")(x, y),
    lambda m, x, y: m.vectorize(m.dot, signature="(n,m)->()")(y),
    lambda m, x, y: m.vectorize(m.dot, excluded={-1})(x, y),
    lambda m, x, y: m.vectorize(m.dot, excluded={1.5})(x, y),
])
def test_vectorize_errors(call):
    check_error(call, X, Y)
