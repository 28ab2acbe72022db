"""lax.ragged_dot against real JAX 0.10.2: values (groups covering all, some or none of the
rows, mixed dtypes, XLA's spread of non-finite values), the staged ragged_dot_general
equation, gradients, and JAX's errors (which refjax prefixes with the primitive's name);
vmap, which JAX 0.10.2 lacks, against a Python loop. On both backends."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
from jax_compare import assert_same_error

pytestmark = pytest.mark.backends("numpy_ref", "xla")
_L = np.arange(12.0, dtype=np.float32).reshape(4, 3)
_R = np.arange(12.0, dtype=np.float32).reshape(2, 3, 2)


def _cases(jax):
    lax, jnp = jax.lax, jax.numpy
    gs = np.array([1, 2], np.int32)
    inf_rhs = _R.copy()
    inf_rhs[1, 0, 0] = np.inf
    inf_lhs = _L.copy()
    inf_lhs[0, 0] = np.inf
    return {
        "partial_groups": lambda: lax.ragged_dot(_L, _R, gs),
        "all_rows": lambda: lax.ragged_dot(_L, _R, np.array([3, 1], np.int32)),
        "no_rows": lambda: lax.ragged_dot(_L, _R, np.array([0, 0], np.int32)),
        "empty_group": lambda: lax.ragged_dot(_L, _R, np.array([0, 4], np.int32)),
        "jit": lambda: jax.jit(lax.ragged_dot)(_L, _R, gs),
        "ints": lambda: lax.ragged_dot(_L.astype(np.int32), _R.astype(np.int32), gs),
        "mixed": lambda: lax.ragged_dot(jnp.asarray(_L, jnp.bfloat16), _R, gs),
        "preferred": lambda: lax.ragged_dot(jnp.asarray(_L, jnp.bfloat16),
                                            jnp.asarray(_R, jnp.bfloat16), gs,
                                            preferred_element_type=jnp.float32),
        "inf_lhs": lambda: lax.ragged_dot(inf_lhs, _R, gs),
        "inf_rhs": lambda: lax.ragged_dot(_L, inf_rhs, np.array([2, 0], np.int32)),
        "grad": lambda: jax.grad(lambda a, b: (lax.ragged_dot(a, b, gs) ** 2).sum(),
                                 argnums=(0, 1))(_L, _R),
        "jvp": lambda: jax.jvp(lambda r: lax.ragged_dot(_L, r, gs), (_R,), (np.ones_like(_R),)),
    }


@pytest.mark.parametrize("name", sorted(_cases(real_jax)))
def test_as_jax(name):
    ours, theirs = _cases(refjax)[name](), _cases(real_jax)[name]()
    for a, e in zip(refjax.tree.leaves(ours), real_jax.tree.leaves(theirs)):
        assert np.asarray(a).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(e, np.float64),
                                   rtol=1e-2 if "bfloat16" in str(np.asarray(e).dtype) else 1e-6)


def test_staged_as_jax():
    def text(jax):
        return str(jax.make_jaxpr(jax.lax.ragged_dot)(_L, _R, np.array([1, 2], np.int32)))
    assert text(refjax) == on_jax(text)


@pytest.mark.parametrize("args", [
    (_L, _R, np.ones(2, np.float32)), (_L, _R[:, :2], np.ones(2, np.int32)),
    (_L, _R, np.ones(3, np.int32)), (_L[0], _R, np.ones(2, np.int32)),
])
def test_errors_as_jax(args):
    assert_same_error(lambda jax: jax.lax.ragged_dot(*args), refjax, real_jax, TypeError,
                      strip="ragged_dot_general: ")


def test_vmap_matches_a_loop():
    """JAX 0.10.2: NotImplementedError ('ragged_dot vmap over any dim but 0 - NYI')."""
    lhs = np.stack([_L, 2 * _L, -_L])
    sizes = np.array([[1, 2], [4, 0], [0, 1]], np.int32)
    out = refjax.vmap(refjax.lax.ragged_dot, in_axes=(0, None, 0))(lhs, _R, sizes)
    for i in range(3):
        np.testing.assert_allclose(out[i], refjax.lax.ragged_dot(lhs[i], _R, sizes[i]))
    with pytest.raises(NotImplementedError):
        real_jax.vmap(real_jax.lax.ragged_dot, in_axes=(0, None, 0))(lhs, _R, sizes)


def test_by_hand():
    """Row 0 in group 0 (rhs[0]), rows 1-2 in group 1 (rhs[1]), row 3 in none: zeros."""
    out = np.asarray(refjax.lax.ragged_dot(_L, _R, np.array([1, 2], np.int32)))
    np.testing.assert_array_equal(out[0], _L[0] @ _R[0])
    np.testing.assert_array_equal(out[1:3], _L[1:3] @ _R[1])
    np.testing.assert_array_equal(out[3], [0.0, 0.0])
