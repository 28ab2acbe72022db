"""Inputs the jnp.linalg and jax.scipy.linalg tests share: seeded random matrices and
well-conditioned Hermitian positive-definite ones."""
import numpy as np


def random_matrix(shape, dtype=np.float32, seed=0):
    """Standard normal entries (real and imaginary parts for complex dtypes)."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def spd(n=4, dtype=np.float32, batch=(), seed=0):
    """x x^H + n I: Hermitian positive definite, condition number modest."""
    x = random_matrix(batch + (n, n), dtype, seed)
    return (x @ np.swapaxes(x, -1, -2).conj() + n * np.eye(n)).astype(dtype)
