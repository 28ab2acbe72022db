"""Side-by-side helpers for the jnp tests: run one function on refjax.numpy and jax.numpy and
compare trees, shapes, dtypes, weak types, values and error classes."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp


def same(ours, theirs, tol=1e-5):
    """Same tree, shapes, dtypes, weak types, and values up to tol (relative and absolute)."""
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            same(o, t, tol)
        return
    if not hasattr(theirs, "dtype"):
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)
        return
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False), "weak_type"
    wide = np.complex128 if np.dtype(ours.dtype).kind == "c" else np.float64
    o, t = np.asarray(ours).astype(wide), np.asarray(theirs).astype(wide)
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol, equal_nan=True)


def check(f, *args, tol=1e-5, jit=True):
    """f(rnp, *args) against f(jnp, *args), eagerly and (if jit) under each library's jit."""
    theirs = f(jnp, *args)
    same(f(rnp, *args), theirs, tol)
    if jit:
        same(refjax.jit(lambda *a: f(rnp, *a))(*args), jax.jit(lambda *a: f(jnp, *a))(*args),
             tol)
    return theirs


def check_grad(f, *args, tol=1e-4):
    """grad of a scalar f(lib, *args) in its first argument, refjax against JAX."""
    same(refjax.grad(lambda *a: f(rnp, *a))(*args), jax.grad(lambda *a: f(jnp, *a))(*args), tol)


def check_vmap(f, *args, tol=1e-5):
    """vmap of f(lib, *args) over the leading axis of every argument."""
    same(refjax.vmap(lambda *a: f(rnp, *a))(*args), jax.vmap(lambda *a: f(jnp, *a))(*args), tol)


def check_error(f, *args, match=None):
    """f(jnp, *args) raises; f(rnp, *args) raises the same class (JAX's own error classes,
    e.g. TypePromotionError, by name: refjax defines its own) and matches `match`."""
    with pytest.raises(Exception) as theirs:
        f(jnp, *args)
    with pytest.raises(Exception, match=match) as ours:
        f(rnp, *args)
    assert issubclass(ours.type, theirs.type) or ours.type.__name__ == theirs.type.__name__, (
        ours.type, theirs.type)


@contextlib.contextmanager
def x64():
    """Both libraries with 64-bit types enabled."""
    refjax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        refjax.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)
