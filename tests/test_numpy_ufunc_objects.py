"""jnp.ufunc objects (add, multiply, maximum, ..., negative) and frompyfunc against JAX's:
reduce, accumulate, at, outer, reduceat, their options, jit/grad, reprs and errors."""
import numpy as np
import pytest

import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.arange(6.0).reshape(2, 3).astype(np.float32)
UFUNCS = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
          "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
          "negative", "subtract"]


@pytest.mark.backends()
def test_the_same_objects_as_jax():
    import jax.numpy as jnp
    ours = sorted(n for n in dir(rnp) if isinstance(getattr(rnp, n), rnp.ufunc))
    assert ours == sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc))
    for name in UFUNCS:
        u, v = getattr(rnp, name), getattr(jnp, name)
        assert (repr(u), u.nin, u.nout, u.nargs, u.identity, u.__name__) == (
            repr(v), v.nin, v.nout, v.nargs, v.identity, v.__name__)


@pytest.mark.parametrize("call", [
    lambda m, a: m.add.reduce(a),
    lambda m, a: m.add.reduce(a, axis=None),
    lambda m, a: m.add.reduce(a, initial=10, where=a > 2),
    lambda m, a: m.multiply.reduce(a, axis=1, dtype=np.int32),
    lambda m, a: m.maximum.reduce(a, axis=1, keepdims=True),
    lambda m, a: m.minimum.reduce(a, axis=None, keepdims=True),
    lambda m, a: m.logaddexp.reduce(a, axis=1),
    lambda m, a: m.logaddexp.reduce(a, axis=None, keepdims=True),
    lambda m, a: m.bitwise_or.reduce(np.arange(5)),
    lambda m, a: m.logical_and.reduce(a > 1, axis=1),
    lambda m, a: m.subtract.reduce(a, axis=1),
    lambda m, a: m.add.accumulate(a),
    lambda m, a: m.subtract.accumulate(a, axis=1),
    lambda m, a: m.maximum.accumulate(a[::-1]),
    lambda m, a: m.add.outer(np.arange(2), np.arange(3)),
    lambda m, a: m.logaddexp.outer(a[0], a[1]),
    lambda m, a: m.add.at(a, (0, 1), 5.0, inplace=False),
    lambda m, a: m.multiply.at(a, np.array([0, 0, 1]), 2.0, inplace=False),
    lambda m, a: m.subtract.at(a, (np.array([0, 0]), np.array([1, 1])), 1.0, inplace=False),
    lambda m, a: m.negative.at(a, 0, inplace=False),
    lambda m, a: m.add.reduceat(np.arange(8), np.array([0, 4, 1, 5])),
    lambda m, a: m.add(a, 1),
    lambda m, a: m.negative(a),
])
def test_methods(call):
    check(call, X)


def test_reduceat_axis_and_grad():
    check(lambda m, a: m.add.reduceat(a, np.array([0, 2, 1]), axis=1), X, jit=False)
    check_grad(lambda m, a: m.logaddexp.reduce(a, axis=None), X)
    check_grad(lambda m, a: m.multiply.accumulate(a, axis=1).sum(), X)


def test_frompyfunc():
    def f(m):
        return m.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    check(lambda m: (f(m)(2, 3), f(m)(np.arange(3), 2), f(m).reduce(np.arange(4)),
                     f(m).accumulate(np.arange(4)), f(m).outer(np.arange(2), np.arange(2))),
          jit=False)
    check(lambda m: m.frompyfunc(lambda a: -a, 1, 1).at(np.arange(4), np.array([1, 1]),
                                                         inplace=False), jit=False)


@pytest.mark.parametrize("call", [
    lambda m, a: m.add.at(a, 0, 1.0),
    lambda m, a: m.negative.reduce(a),
    lambda m, a: m.maximum.reduce(a, where=a > 1),
    lambda m, a: m.add(a, 1, out=a),
    lambda m, a: m.negative.outer(a, a),
])
def test_errors(call):
    check_error(call, X)
