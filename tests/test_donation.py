"""jit's donate_argnums against JAX 0.10.2 on CPU (JAX's buffer_donation page): which donated
arrays are deleted after a call (those an output reuses: the same shape and dtype first,
then as many elements), JAX's warning for the others, unused arguments never donated, and
what a deleted array raises afterwards."""
import warnings

import jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _cases(jnp):
    ones = lambda *shape: jnp.ones(shape)  # noqa: E731
    return [
        (lambda x: x, [ones(3)], 0, None),
        (lambda x, y: (x * 2, y * 2), [ones(3), ones(3)], (0, 1), None),
        (lambda x, y: x * y, [ones(3), ones(3)], (0, 1), None),
        (lambda x: x.astype(jnp.int32), [ones(3)], 0, None),
        (lambda x: x.reshape(3, 2) * 2, [ones(6)], 0, None),
        (lambda x, y: x + y, [ones(2, 3), ones(1, 3)], 1, None),
        (lambda x: jnp.concatenate([x, x]), [ones(3)], 0, None),
        (lambda s, x: x * s, [2.0, ones(3)], 1, 0),
        (lambda t: [v * 2 for v in t], [[ones(2), ones(3)]], 0, None),
        (lambda x: x * 2, [np.ones(3, np.float32)], 0, None),
        (lambda x: None, [ones(3)], 0, None),
        (lambda x, y: (y.sum(), x * 2), [ones(4), ones(4)], (0, 1), None),
        (lambda x, y: x * 2, [ones(3), ones(3)], (0, 1), None),
    ]


def _deleted(tree, jax_module):
    return [getattr(x, "is_deleted", lambda: None)()
            for x in jax_module.tree.leaves(tree)]


def _donations(jax_module, jnp):
    seen = []
    for f, args, donate, static in _cases(jnp):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = jax_module.jit(f, donate_argnums=donate, static_argnums=static)(*args)
        seen.append((_deleted(args, jax_module), _deleted(out, jax_module),
                     [str(w.message) for w in caught]))
    return seen


def test_donated_arrays_are_deleted_as_jax_deletes_them():
    assert _donations(refjax, refjax.numpy) == _donations(jax, jax.numpy)


def test_a_donated_array_is_gone_and_a_chain_of_calls_runs():
    f = refjax.jit(lambda x: x + 1, donate_argnums=0)
    x = refjax.numpy.zeros(3)
    z = f(f(x))
    np.testing.assert_array_equal(z, [2, 2, 2])
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        x + 1
    # not under a transformation, nor with jit disabled: nothing is donated there
    y = refjax.numpy.zeros(3)
    refjax.vmap(f)(y[None])
    refjax.grad(lambda v: f(v).sum())(y)
    with refjax.disable_jit():
        f(y)
    assert not y.is_deleted()


def _by_name(jax_module):
    def f(x, y):
        return x * y
    calls = [({"donate_argnames": "y"}, lambda g, a, b: g(a, b)),
             ({"donate_argnames": "y"}, lambda g, a, b: g(a, y=b)),
             ({"donate_argnums": 1}, lambda g, a, b: g(a, y=b)),
             ({"donate_argnames": ("x", "y")}, lambda g, a, b: g(x=a, y=b))]
    seen = []
    for options, call in calls:
        a, b = jax_module.numpy.ones(3), jax_module.numpy.ones(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(jax_module.jit(f, **options), a, b)
        seen.append((a.is_deleted(), b.is_deleted(), len(caught)))
    return seen


def test_donate_argnames_and_argnums_name_the_same_arguments():
    assert _by_name(refjax) == _by_name(jax)


def _reuse_errors(jax_module):
    a = jax_module.numpy.ones(3)
    add = lambda x, y: (x + y, x * y)  # noqa: E731
    seen = []
    for donate in ((0, 1), 0, 1):
        try:
            jax_module.jit(add, donate_argnums=donate)(a, a)
        except Exception as e:  # noqa: BLE001 - the class and message are compared
            seen.append((type(e).__name__, str(e), a.is_deleted()))
    return seen


def test_an_array_donated_and_passed_again_is_refused_before_the_call():
    theirs = _reuse_errors(jax)
    assert len(theirs) == 3 and _reuse_errors(refjax) == theirs
