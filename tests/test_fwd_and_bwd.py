"""jax.fwd_and_bwd against real JAX: values, argnums forms, has_aux, and one compile of bwd."""
import logging

import jax as real_jax
import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
W = np.linspace(-0.2, 0.2, 12, dtype=np.float32).reshape(3, 4)
CT = np.ones((2, 4), np.float32)


def _f(np_mod):
    return lambda x, w, scale: np_mod.tanh(x @ w) * scale


@pytest.mark.parametrize("argnums", [0, (1,), (0, 1), (1, 0)])
@pytest.mark.parametrize("jitted", [True, False])
def test_values_and_cotangents_match_jax(argnums, jitted):
    got_y, got_res = jax.fwd_and_bwd(_f(jnp), argnums, jitted=jitted)[0](X, W, 2.0)
    want_y, want_res = real_jax.fwd_and_bwd(_f(real_jax.numpy), argnums, jitted=jitted)[0](
        X, W, 2.0)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
    got = jax.fwd_and_bwd(_f(jnp), argnums, jitted=jitted)[1](got_res, CT)
    want = real_jax.fwd_and_bwd(_f(real_jax.numpy), argnums, jitted=jitted)[1](want_res, CT)
    assert isinstance(got, tuple) == isinstance(want, tuple)
    for g, w in zip(jax.tree_util.tree_leaves(got), real_jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_has_aux_returns_aux_third():
    f = lambda x: (jnp.sin(x) * 3.0, {"c": jnp.cos(x)})  # noqa: E731
    y, res, aux = jax.fwd_and_bwd(f, 0, has_aux=True)[0](0.5)
    np.testing.assert_allclose(y, np.sin(0.5) * 3.0, rtol=1e-6)
    np.testing.assert_allclose(aux["c"], np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(jax.fwd_and_bwd(f, 0, has_aux=True)[1](res, 1.0),
                               3.0 * np.cos(0.5), rtol=1e-6)


def test_jitted_bwd_compiles_once_across_forward_passes(caplog):
    fwd, bwd = jax.fwd_and_bwd(_f(jnp), (0, 1))
    with caplog.at_level(logging.WARNING), jax.log_compiles():
        for i in range(3):
            y, res = fwd(X * i, W, 2.0)
            bwd(res, CT)
    compiled = [r.getMessage().split(" with ")[0] for r in caplog.records
                if r.getMessage().startswith("Compiling")]
    assert compiled == ["Compiling jit(fwd)", "Compiling jit(bwd)"]


def test_errors_as_jax():
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        jax.fwd_and_bwd(3, 0)
    msg = r"must have value greater than or equal to -len\(args\).*got value 1 for len\(args\) == 1"
    for lib in (real_jax, jax):
        with pytest.raises(ValueError, match=msg):
            lib.fwd_and_bwd(lambda x: x, 1)[0](1.0)
