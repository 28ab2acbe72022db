"""refjax.test_util.check_grads/check_jvp/check_vjp pass and fail exactly where JAX's do (same
random directions, step and tolerances), on both backends; and jax.vjp's pullback is a
pytree of its residuals, as JAX's."""
import functools

import jax as real_jax
import jax.test_util as real_test_util
import numpy as np
import pytest

import refjax
import refjax.numpy as jnp
from refjax import test_util

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _cases(np_):
    return {
        "sin_order2": (lambda x: np_.sin(x) * x, (np.float32(0.7),), 2, ("fwd", "rev")),
        "matmul_order2": (lambda x, y: np_.sum(np_.tanh(x) @ y),
                          (np.full((2, 3), 0.3, np.float32), np.ones(3, np.float32)), 2,
                          ("fwd", "rev")),
        "sqrt_near_zero": (lambda x: np_.sqrt(x), (np.float64(1e-9),), 1, ("rev",)),
        "kink": (lambda x: np_.where(x > 0, x, 0.0), (np.float32(1e-5),), 1, ("fwd",)),
        "exp_scaled": (lambda x: np_.exp(x) * 100, (np.float32(3.0),), 1, ("fwd", "rev")),
        "cube_order3": (lambda x: x ** 3, (np.float64(2.0),), 3, ("fwd", "rev", "lin")),
        "pytree_args": (lambda d: np_.sum(d["a"] * d["b"] ** 2),
                        ({"a": np.arange(3.0, dtype=np.float32), "b": np.float32(0.5)},), 2,
                        ("rev",)),
        "complex": (lambda z: np_.sum(np_.abs(z * z)), (np.array([1 + 2j, 0.5j], np.complex64),),
                    1, ("fwd", "rev")),
        "wrong_rule": (_wrong_sin(np_), (np.float32(0.3),), 1, ("fwd",)),
    }


def _wrong_sin(np_):
    jax = real_jax if np_ is real_jax.numpy else refjax
    f = jax.custom_jvp(lambda x: np_.sin(x))
    f.defjvp(lambda p, t: (np_.sin(p[0]), np_.cos(p[0]) * t[0] * 1.01))
    return f


def _outcome(check_grads, case):
    f, args, order, modes = case
    try:
        check_grads(f, args, order, modes)
    except AssertionError as e:
        return "fail", str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else str(e)
    return "pass", ""


@pytest.mark.parametrize("name", sorted(_cases(np)))
def test_check_grads_agrees_with_jax(name):
    expected = _outcome(real_test_util.check_grads, _cases(real_jax.numpy)[name])
    actual = _outcome(test_util.check_grads, _cases(jnp)[name])
    assert actual[0] == expected[0], (actual, expected)
    assert actual[1].split(",")[0] == expected[1].split(",")[0]


def test_check_jvp_and_check_vjp_take_custom_functions():
    f = lambda x: jnp.sin(x) ** 2  # noqa: E731
    x = np.float32(0.4)
    test_util.check_jvp(f, functools.partial(refjax.jvp, f), (x,))
    test_util.check_vjp(f, functools.partial(refjax.vjp, f), (x,))
    bad_vjp = lambda x: (f(x), lambda ct: (ct * 3.0,))  # noqa: E731
    with pytest.raises(AssertionError, match="cotangent projection"):
        test_util.check_vjp(f, bad_vjp, (x,))


# ---------------------------------------------------------------- the vjp pullback

def test_pullback_is_a_pytree_of_residuals():
    x = jnp.linspace(0.1, 1.0, 3)
    y, pullback = refjax.vjp(lambda v: jnp.sin(v) * 2, x)
    leaves, tree = refjax.tree_util.tree_flatten(pullback)
    assert leaves and all(isinstance(leaf, refjax.Array) for leaf in leaves)
    rebuilt = refjax.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_allclose(np.asarray(rebuilt(jnp.ones(3))[0]), 2 * np.cos(np.asarray(x)),
                               rtol=1e-6)
    assert type(pullback).__name__ == type(real_jax.vjp(real_jax.numpy.sin, 1.0)[1]).__name__


def test_pullback_returned_from_jit_and_called_later():
    x = jnp.array([0.5, 1.5])
    pullback = refjax.jit(lambda v: refjax.vjp(jnp.sin, v)[1])(x)
    np.testing.assert_allclose(np.asarray(pullback(jnp.ones(2))[0]), np.cos([0.5, 1.5]),
                               rtol=1e-6)


def test_print_fwd_bwd_as_in_jax_docs():
    """The autodiff_remat docs' helper: flatten the pullback, stage the backward pass."""
    def bwd_jaxpr(jax, f, x):
        y, f_vjp = jax.vjp(f, x)
        res, tree = jax.tree_util.tree_flatten(f_vjp)

        def g(*args):
            *res_, ct = args
            return jax.tree_util.tree_unflatten(tree, res_)(ct)
        return jax.make_jaxpr(g)(*res, y)

    f = lambda jax: (lambda v: jax.numpy.sin(jax.numpy.sin(v)))  # noqa: E731
    ours = bwd_jaxpr(refjax, f(refjax), 2.0)
    theirs = bwd_jaxpr(real_jax, f(real_jax), 2.0)
    assert [e.primitive.name for e in ours.eqns] == [e.primitive.name for e in theirs.eqns]


@pytest.mark.parametrize("bad", [np.ones(4, np.float32), np.ones(3, np.int32),
                                 (np.ones(3, np.float32),)])
def test_pullback_errors_as_jax(bad):
    _, theirs = real_jax.vjp(lambda v: real_jax.numpy.sin(v) * 2, np.ones(3, np.float32))
    _, ours = refjax.vjp(lambda v: jnp.sin(v) * 2, np.ones(3, np.float32))
    with pytest.raises(ValueError) as expected:
        theirs(bad)
    with pytest.raises(ValueError) as actual:
        ours(bad)
    assert str(actual.value).split("\n")[0] == str(expected.value).split("\n")[0]
