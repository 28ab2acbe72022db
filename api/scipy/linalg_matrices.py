"""jax.scipy.linalg's special matrices: toeplitz, hankel, circulant, leslie, companion,
fiedler(_companion), convolution_matrix (built from their arguments), and hilbert,
invhilbert, pascal, invpascal, helmert, hadamard, dft (which depend on static sizes only and
are computed exactly, then rounded once to their dtype; dft in its dtype, as JAX)."""
import math
import operator
from math import comb

import numpy as np

from .. import numpy as jnp
from ..numpy.promotion import _arrays, promote_dtypes, staged_as
from .linalg_common import inexact, over_batch


def _index_grid(m, n):
    return jnp.arange(m)[:, None], jnp.arange(n)[None, :]


def _toeplitz_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    i, j = _index_grid(m, n)
    lower = jnp.take(c, jnp.clip(i - j, 0, max(m - 1, 0)), mode="clip") if m else None
    upper = jnp.take(r, jnp.clip(j - i, 0, max(n - 1, 0)), mode="clip") if n else None
    if lower is None or upper is None:
        return jnp.empty((m, n), dtype=jnp.promote_types(c.dtype, r.dtype))
    return jnp.where(i >= j, lower, upper)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (default conj(c)); r[0] is
    ignored. Leading dimensions of c and r are batch dimensions."""
    c, = _arrays("toeplitz", c)
    r = jnp.conjugate(c) if r is None else _arrays("toeplitz", r)[0]
    c, r = promote_dtypes(jnp.atleast_1d(c), jnp.atleast_1d(r))
    return over_batch(_toeplitz_2d, [c, r], [1, 1]).astype(c.dtype)


def _hankel_2d(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.result_type(c, r))
    i, j = _index_grid(m, n)
    return jnp.concatenate((c, r[1:]))[i + j]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (default zeros); r[0] is
    ignored."""
    c, = _arrays("hankel", c)
    r = jnp.zeros_like(c) if r is None else _arrays("hankel", r)[0]
    for name, x in (("c", c), ("r", r)):
        if x.ndim == 0:
            raise ValueError(f"hankel: {name} must be at least 1-dimensional, got a scalar.")
    c, r = promote_dtypes(c, r)
    return over_batch(_hankel_2d, [c, r], [1, 1]).astype(c.dtype)


def circulant(c):
    """The circulant matrix whose first column is c."""
    c, = _arrays("circulant", c)
    c = jnp.atleast_1d(c)
    n = c.shape[-1]
    i, j = _index_grid(n, n)
    return over_batch(lambda v: v[(i - j) % n], [c], [1]).astype(c.dtype)


def leslie(f, s):
    """The Leslie matrix: fecundities f in the first row, survival rates s below the
    diagonal."""
    f, s = (jnp.atleast_1d(x) for x in _arrays("leslie", f, s))
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                         f"{f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last axis "
                         f"must be one less than the length of f; got f shape {f.shape} and s "
                         f"shape {s.shape}.")
    f, s = promote_dtypes(f, s)
    return over_batch(lambda f_, s_: jnp.diag(s_, k=-1).at[0].set(f_), [f, s], [1, 1])


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest degree first)."""
    a, = inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape "
                         f"{a.shape}.")
    m = a.shape[-1] - 1
    return over_batch(lambda v: jnp.eye(m, m, k=-1, dtype=v.dtype).at[0].set(-v[1:] / v[0]),
                      [a], [1])


def fiedler(a):
    """The symmetric Fiedler matrix |a_i - a_j|."""
    a, = _arrays("fiedler", a)
    a = jnp.atleast_1d(a)
    return jnp.abs(a[..., None] - a[..., None, :])


def _fiedler_companion_2d(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.empty((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i, j = _index_grid(n, n)
    even, odd = i % 2 == 0, i % 2 == 1
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
                  (j == i + 2) & even, (j == i - 1) & even & (i >= 2),
                  (j == i - 2) & odd & (i >= 3)]
    one = jnp.ones((), a.dtype)
    choices = [-a[1], one, -a[jnp.minimum(i + 2, n)], one, -a[jnp.minimum(i + 1, n)], one]
    return jnp.select(conditions, choices, default=jnp.zeros((), a.dtype))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial a (pentadiagonal, same eigenvalues as
    companion(a))."""
    a, = inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(f"fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return over_batch(_fiedler_companion_2d, [a], [1])


def _trims(mode, m, n):
    if mode == "same":
        trim = min(n, m) - 1
        return trim // 2, trim - trim // 2
    if mode == "valid":
        return min(n, m) - 1, min(n, m) - 1
    return 0, 0


@staged_as("convolution_matrix", static_argnames=("n", "mode"))
def convolution_matrix(a, n, mode="full"):
    """The matrix of convolution with a: convolution_matrix(a, n) @ v == convolve(a, v, mode)
    for v of length n."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a, = _arrays("convolution_matrix", a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az, raz = jnp.pad(a, widths), jnp.pad(jnp.flip(a, axis=-1), widths)
    length = m + n - 1
    tb, te = _trims(mode, m, n)
    return toeplitz(az[..., tb:length - te], raz[..., length - n - tb:length - tb])


# ---------------------------------------------------------------- matrices of a size only

def _default_float():
    return jnp.result_type(float)


def _constant(values, dtype):
    return jnp.asarray(np.asarray(values), dtype=dtype)


@staged_as("hilbert", static_argnames=("n",))
def hilbert(n):
    """The Hilbert matrix 1 / (i + j + 1)."""
    i = np.arange(n)
    return _constant(1.0 / (i[:, None] + i[None, :] + 1), _default_float())


@staged_as("invhilbert", static_argnames=("n",))
def invhilbert(n):
    """The inverse of the Hilbert matrix (its exact integer entries, rounded once)."""
    entries = [[(-1) ** (i + j) * (i + j + 1) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1)
                * comb(i + j, i) ** 2 for j in range(n)] for i in range(n)]
    return _constant(np.array(entries, dtype=float).reshape(n, n), _default_float())


def _pascal_lower(n, inverse=False):
    return np.array([[(-1) ** (i - j) * comb(i, j) if inverse else comb(i, j)
                      for j in range(n)] for i in range(n)], dtype=float).reshape(n, n)


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be on of: {['symmetric', 'lower', 'upper']}; got "
                         f"{kind}")
    return kind


def _pascal_kind(lower, kind, symmetric):
    return {"lower": lower, "upper": lower.T, "symmetric": symmetric}[kind]


@staged_as("pascal", static_argnames=("n", "kind"))
def pascal(n, kind=None):
    """The Pascal matrix (binomial coefficients): symmetric, lower or upper (float32, as
    JAX's)."""
    low = _pascal_lower(n)
    return _constant(_pascal_kind(low, _check_kind(kind), low @ low.T), np.float32)


@staged_as("invpascal", static_argnames=("n", "kind"))
def invpascal(n, kind=None):
    """The inverse of the Pascal matrix of the same kind."""
    low = _pascal_lower(n, inverse=True)
    return _constant(_pascal_kind(low, _check_kind(kind), low.T @ low), _default_float())


@staged_as("helmert", static_argnames=("n", "full"))
def helmert(n, full=False):
    """The Helmert matrix (n - 1 orthonormal contrasts; with full=True, also the normalised
    ones row first)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    k = np.arange(1, n)[:, None].astype(float)
    j = np.arange(n)[None, :]
    denom = np.sqrt(k * (k + 1))
    h = np.where(j < k, 1.0 / denom, np.where(j == k, -k / denom, 0.0))
    if full:
        h = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), h], axis=0)
    return _constant(h, _default_float())


@staged_as("hadamard", static_argnames=("n", "dtype"))
def hadamard(n, dtype=int):
    """The Sylvester Hadamard matrix of order n (a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), dtype=np.int64)
    for _ in range(int(math.log2(n))):
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


@staged_as("dft", static_argnames=("n", "scale", "dtype"))
def dft(n, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix exp(-2 pi i j k / n), scaled by 1/sqrt(n) or
    1/n."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dtype = jnp.result_type(complex) if dtype is None else jnp.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.complexfloating):
        raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    # computed in `dtype` as JAX does (the phases rounded to it), so that entries such as
    # cos(pi / 2) keep JAX's tiny values and signs
    k = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
    return omegas / {None: 1, "sqrtn": jnp.sqrt(n), "n": n}[scale]
