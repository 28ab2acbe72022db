"""Polynomials as coefficient arrays (highest degree first): poly, polyadd, polysub, polymul,
polyder, polyint, polydiv, trim_zeros, vander; and the window functions built like them."""
import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .. import lax
from .promotion import (asarray, atleast_1d, promote_dtypes, reshape, _arrays, _promote_to_inexact,
                        _static_int, concrete_value, staged_as)
from .ufuncs import cos, negative, power, sqrt, subtract, true_divide, absolute
from .creation import full, ones, zeros
from .manipulation import concatenate, expand_dims
from .maths import convolve
from .numbers import i0


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (1-d), or the
    characteristic polynomial of a square matrix (2-d, from its eigenvalues)."""
    seq, = _promote_to_inexact(*_arrays("poly", seq_of_zeros))
    seq = asarray(seq)
    if seq.ndim == 2 and seq.shape[0] == seq.shape[1] and seq.shape[0] != 0:
        seq = lax.linalg.eig(seq, compute_left_eigenvectors=False,
                             compute_right_eigenvectors=False)[0]
    elif seq.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    out = ones(1, seq.dtype)
    for k in range(seq.shape[0]):
        out = convolve(out, concatenate([ones(1, seq.dtype), negative(seq[k:k + 1])]))
    return out


@staged_as("polyadd")
def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded at the front)."""
    a1, a2 = promote_dtypes(*_arrays("polyadd", a1, a2))
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    return a1.at[a1.shape[0] - a2.shape[0]:].add(a2)


@staged_as("polysub")
def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = promote_dtypes(*_arrays("polysub", a1, a2))
    return polyadd(a1, negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution)."""
    a1, a2 = _promote_to_inexact(*_arrays("polymul", a1, a2))
    a1, a2 = asarray(a1), asarray(a2)
    if a1.ndim == 0 or a2.ndim == 0:
        raise TypeError("len() of unsized object")
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    a1 = a1 if a1.shape[0] else asarray([0], dtype=a1.dtype)
    a2 = a2 if a2.shape[0] else asarray([0], dtype=a2.dtype)
    return convolve(a1, a2, mode="full")


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    p, = _promote_to_inexact(*_arrays("polyder", p))
    p = asarray(p)
    m = _static_int(m, "m argument of jnp.polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    coeff = np.prod(np.arange(m, n)[::-1, None] - np.arange(m), axis=1) if n > m else \
        np.zeros(0)
    return ew.mul(p[:n - m] if n > m else p[:0], asarray(coeff.astype(p.dtype)))


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial, with integration constants k (a scalar or m
    of them, lowest order last)."""
    m = _static_int(m, "m argument of jnp.polyint")
    p, k = _promote_to_inexact(*_arrays("polyint", p, 0 if k is None else k))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = atleast_1d(k)
    if k.shape[0] == 1:
        k = full((m,), k[0], k.dtype)
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return asarray(p)
    grid = np.arange(p.shape[0] + m)[None] - np.arange(m)[:, None]
    coeff = np.prod(np.maximum(1, grid), axis=0)[::-1]
    return true_divide(concatenate([p, k]), asarray(coeff.astype(p.dtype)))


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial division, by long division."""
    u, v = _promote_to_inexact(*_arrays("polydiv", u, v))
    u, v = asarray(u), asarray(v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = true_divide(1.0, v[0])
    q = zeros(_larger(m - n + 1, 1), u.dtype)
    r = u
    for k in range(m - n + 1):
        d = ew.mul(scale, r[k])
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(negative(ew.mul(d, v)))
    if trim_leading_zeros:
        tol = float(np.sqrt(_dt.finfo(r.dtype).eps))
        r = _trim_leading(r, ew.lt(absolute(r), asarray(tol, dtype=_dt.finfo(r.dtype).dtype)))
    return q, r


def _larger(a, b):
    return a if a >= b else b


def trim_zeros(filt, trim="fb"):
    """filt (concrete) without its leading ("f") and trailing ("b") zeros; an n-d array
    without its all-zero leading and trailing hyperplanes along every axis (NumPy 2's)."""
    filt, = _arrays("trim_zeros", filt)
    value = np.asarray(concrete_value(filt, "Error arose in the `filt` argument of "
                                            "trim_zeros()"))
    if not value.any():
        return filt[:0] if filt.ndim == 1 else reshape(filt[:0], (0,))
    bounds = []
    for axis in range(filt.ndim):
        hit = np.flatnonzero(value.any(axis=tuple(a for a in range(filt.ndim) if a != axis)))
        start = int(hit[0]) if "f" in trim.lower() else 0
        stop = int(hit[-1]) + 1 if "b" in trim.lower() else filt.shape[axis]
        bounds.append(slice(start, stop))
    return filt[tuple(bounds)]


def _trim_leading(r, small):
    """r without the leading entries where `small` holds (concrete)."""
    small = np.asarray(concrete_value(small, "trim_leading_zeros in polydiv"))
    start = int(np.argmin(small)) if not small.all() else r.shape[0]
    return r[start:]


@staged_as("vander", static_argnames=("N", "increasing"))
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-d x: columns x**(N-1), ..., x, 1 (reversed when
    increasing)."""
    x, = _arrays("vander", x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else _static_int(N, "'N' argument of jnp.vander")
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = st.iota(x.dtype, N)
    if not increasing:
        powers = subtract(asarray(N - 1, dtype=x.dtype), powers)
    return power(expand_dims(x, 1), expand_dims(powers, 0))


# ---------------------------------------------------------------- window functions

def _window_points(name, M):
    """The sample positions 0..M-1 (default float dtype), or None for windows of M <= 1."""
    M = _static_int(M, f"M argument of jnp.{name}")
    return M, (None if M <= 1 else st.iota(_dt.default_float(), M))


def _cosine_window(name, M, terms):
    """sum_j a_j cos(2 pi j n / (M - 1)) for terms [a_0, a_1, ...]."""
    M, n = _window_points(name, M)
    if n is None:
        return ones(_larger(M, 0), _dt.default_float())
    out = asarray(terms[0], dtype=n.dtype)
    for j, a in enumerate(terms[1:], 1):
        phase = true_divide(ew.mul(asarray(2 * j * np.pi, dtype=n.dtype), n), M - 1)
        out = ew.add(out, ew.mul(asarray(a, dtype=n.dtype), cos(phase)))
    return out


def hamming(M):
    """The Hamming window of M points."""
    return _cosine_window("hamming", M, (0.54, -0.46))


def hanning(M):
    """The Hann window of M points."""
    return _cosine_window("hanning", M, (0.5, -0.5))


def blackman(M):
    """The Blackman window of M points."""
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def bartlett(M):
    """The triangular (Bartlett) window of M points."""
    M, n = _window_points("bartlett", M)
    if n is None:
        return ones(_larger(M, 0), _dt.default_float())
    centred = absolute(ew.add(ew.mul(asarray(2, dtype=n.dtype), n), asarray(1 - M, n.dtype)))
    return subtract(1, true_divide(centred, M - 1))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta."""
    M, n = _window_points("kaiser", M)
    if n is None:
        return ones(_larger(M, 0), _dt.default_float())
    alpha = 0.5 * (M - 1)
    ratio = true_divide(subtract(n, alpha), alpha)
    return true_divide(i0(ew.mul(beta, sqrt(subtract(1, ew.mul(ratio, ratio))))), i0(beta))

