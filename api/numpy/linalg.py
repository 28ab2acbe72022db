"""jnp.linalg: decompositions, solves, determinants, inverses and norms, as jax.numpy.linalg."""
import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import linalg_common as _lc
from ...core.transforms.custom import custom_jvp
from .. import lax
from ..lax_linalg import (cholesky as _lax_cholesky, eig as _lax_eig, eigh as _lax_eigh,
                          geqrf as _geqrf, lu as _lax_lu, qr as _lax_qr, svd as _lax_svd,
                          triangular_solve as _tri_solve)
from ...core.primitives.decompositions import solve as _lax_solve
from .promotion import (_arrays, _axes, _promote_to_inexact, asarray, broadcast_shapes,
                        broadcast_to, finfo, moveaxis, reshape, staged_as)
from .ufuncs import absolute, conj, isinf, isnan, log, real, sign, sqrt
from .creation import diagonal as _diagonal, empty, eye, ones, zeros, zeros_like
from .indexing import take_along_axis, where
from .reductions import amax, amin, any as _any, count_nonzero, cumprod, prod, sum as _sum
from .manipulation import concatenate, expand_dims, matrix_transpose as _mT
from .products import (cross as _cross, einsum, matmul as _matmul, tensordot as _tensordot,
                       trace as _trace, vecdot as _vecdot)

_HIGHEST = lax.Precision.HIGHEST


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# JAX's result types, private in its namespace too (dir(jnp.linalg) does not list them).
_EighResult = EighResult
_EigResult = EigResult
_QRResult = QRResult
_SlogdetResult = SlogdetResult
_SVDResult = SVDResult
del EighResult, EigResult, QRResult, SlogdetResult, SVDResult


# ---------------------------------------------------------------- shared helpers

def _inexact(name, *xs):
    """xs as arrays promoted together to an inexact dtype (TypeError for lists, as JAX)."""
    return _promote_to_inexact(*_arrays(name, *xs))


def _H(x):
    return conj(_mT(x))


def _symmetrize(x):
    return (x + _H(x)) / 2


def _require_square(name, a, what="Argument to {name}"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{what.format(name=name)} must have shape [..., n, n], got {a.shape}")


def _require_2d(name, a):
    if a.ndim < 2:
        raise TypeError(f"{name}: {a.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")


# ---------------------------------------------------------------- factorizations

@staged_as("cholesky", static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor L (a = L L^H), or its conjugate transpose with upper=True."""
    a, = _inexact("jnp.linalg.cholesky", a)
    _require_2d("jnp.linalg.cholesky", a)
    lower = _lax_cholesky(a, symmetrize_input=symmetrize_input)
    return _H(lower) if upper else lower


def _svd_hermitian(a, compute_uv, subset_by_index):
    """The SVD of a Hermitian a from its eigendecomposition: |w| sorted descending, with the
    signs of w moved into Vh."""
    v, w = _lax_eigh(a, subset_by_index=subset_by_index)
    s = absolute(w)
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), (s.ndim - 1,))
    idx = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    s, idx, sgn = lax.sort((s, idx, sign(w)), dimension=-1, num_keys=1)
    s, idx, sgn = (lax.rev(t, (s.ndim - 1,)) for t in (s, idx, sgn))
    u = take_along_axis(v, idx[..., None, :], axis=-1)
    return _SVDResult(u, s, _H(u * sgn[..., None, :].astype(u.dtype)))


@staged_as("svd", static_argnames=("full_matrices", "compute_uv", "hermitian",
                                   "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """(U, S, Vh) with a = U diag(S) Vh, S descending; S alone with compute_uv=False."""
    a, = _inexact("jnp.linalg.svd", a)
    _require_2d("jnp.linalg.svd", a)
    if hermitian:
        return _svd_hermitian(a, compute_uv, subset_by_index)
    out = _lax_svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                   subset_by_index=subset_by_index)
    return _SVDResult(*out) if compute_uv else out


def svdvals(x, /):
    """The singular values of x, descending."""
    return svd(x, compute_uv=False, hermitian=False)


@staged_as("qr", static_argnames=("mode",))
def qr(a, mode="reduced"):
    """The QR factorization: (Q, R) for mode 'reduced' or 'complete', R for 'r', LAPACK's
    (reflectors^T, taus) for 'raw'."""
    a, = _inexact("jnp.linalg.qr", a)
    _require_2d("jnp.linalg.qr", a)
    if mode == "raw":
        h, taus = _geqrf(a)
        return _QRResult(_mT(h), taus)
    if mode not in ("reduced", "r", "full", "complete"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = _lax_qr(a, pivoting=False, full_matrices=mode == "complete")
    return r if mode == "r" else _QRResult(q, r)


def eig(a):
    """Eigenvalues and right eigenvectors of a general square matrix (complex results)."""
    a, = _inexact("jnp.linalg.eig", a)
    _require_2d("jnp.linalg.eig", a)
    w, v = _lax_eig(a, compute_left_eigenvectors=False)
    return _EigResult(w, v)


@staged_as("eigvals")
def eigvals(a):
    """Eigenvalues of a general square matrix (complex)."""
    a, = _inexact("jnp.linalg.eigvals", a)
    _require_2d("jnp.linalg.eigvals", a)
    return _lax_eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _uplo_lower(uplo):
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")
    return uplo != "U"


@staged_as("eigh", static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input=True):
    """Ascending eigenvalues and eigenvectors (columns) of a Hermitian matrix."""
    lower = _uplo_lower(UPLO)
    a, = _inexact("jnp.linalg.eigh", a)
    _require_2d("jnp.linalg.eigh", a)
    v, w = _lax_eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return _EighResult(w, v)


@staged_as("eigvalsh", static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """Ascending eigenvalues of a Hermitian matrix."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


# ---------------------------------------------------------------- solves and inverses

def _solve_batched(a, b):
    """a x = b with b [..., m, k], batch dimensions broadcast against a's."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    return _lax_solve(a, broadcast_to(b, batch + b.shape[-2:]))


@staged_as("solve")
def solve(a, b):
    """x with a @ x = b: b is a vector (m,) or a batch of matrices [..., m, k]."""
    a, b = _inexact("jnp.linalg.solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={a.shape!r}")
    _require_square("solve", a, "The left hand array of {name}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] != b.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, "
                         "this would have been treated as a batched 1-dimensional solve. To "
                         "recover this behavior, use solve(a, b[..., None]).squeeze(-1).")
    if b.ndim == 1:
        _check_rows("solve", a, b[:, None])
        return _solve_batched(a, b[:, None])[..., 0]
    _check_rows("solve", a, b)
    return _solve_batched(a, b)


def _check_rows(name, a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{name}: a.shape={a.shape} and b.shape={b.shape} do not agree: "
                         f"a has {a.shape[-1]} columns and b {b.shape[-2]} rows")


@staged_as("inv")
def inv(a):
    """The inverse of a batch of square matrices (solve against the identity)."""
    a, = _arrays("jnp.linalg.inv", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {a.shape}.")
    return solve(a, broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape))


@staged_as("matrix_power", static_argnames=("n",))
def matrix_power(a, n):
    """a raised to the integer power n (negative: of its inverse) by repeated squaring."""
    a, = _arrays("jnp.linalg.matrix_power", a)
    _require_2d("jnp.linalg.matrix_power", a)
    if a.shape[-2] != a.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(eye(a.shape[-2], dtype=a.dtype), a.shape)
    return _power_by_squaring(inv(a) if n < 0 else a, abs(n))


def _power_by_squaring(a, n):
    if n <= 3:  # JAX multiplies small powers out left to right
        out = a
        for _ in range(n - 1):
            out = out @ a
        return out
    square, result = None, None
    while n > 0:
        square = a if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else result @ square
    return result


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse: singular values at or below rtol * the largest are
    treated as zero (rtol defaults to 10 * max(m, n) * eps)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _pinv_impl(a, rtol, hermitian):
    a, = _inexact("jnp.linalg.pinv", a)
    _require_2d("jnp.linalg.pinv", a)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return empty(a.shape[:-2] + (n, m), a.dtype)
    a = conj(a)
    if rtol is None:
        rtol = 10.0 * max(m, n) * asarray(finfo(a.dtype).eps)
    rtol = asarray(rtol)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    s = where(s > rtol * s[..., 0:1], s, np.inf).astype(u.dtype)
    out = _matmul(_mT(vh), _mT(u) / s[..., None], precision=_HIGHEST)
    return out.astype(a.dtype)


_pinv = custom_jvp(staged_as("pinv", static_argnames=("hermitian",))(_pinv_impl),
                   nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    """The derivative of the pseudo-inverse (Golub & Pereyra), as JAX's."""
    (a,), (da,) = primals, tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    if hermitian:
        a, da = _symmetrize(a), _symmetrize(da)
    s = p @ (_H(p) @ _H(da))
    t = _H(da) @ (_H(p) @ p)
    return p, -p @ (da @ p) + s - s @ (a @ p) + t - p @ (a @ t)


# ---------------------------------------------------------------- least squares

def _lstsq_solution(a, b, rcond):
    """(x, rank, s) of the minimum-norm least-squares solution through the SVD of a."""
    m, n = a.shape
    if a.size == 0:
        return zeros((n,) + b.shape[1:], a.dtype), asarray(0), empty(0, a.dtype)
    eps = finfo(a.dtype).eps
    rcond = float(eps) * max(m, n) if rcond is None else where(rcond < 0, eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    mask = (s > 0) & (s >= asarray(rcond, dtype=s.dtype) * s[0])
    safe_s = where(mask, s, 1).astype(a.dtype)
    s_inv = where(mask, 1 / safe_s, 0)[:, None]
    utb = _matmul(_H(u), b, precision=_HIGHEST)
    return _matmul(_H(vt), s_inv * utb, precision=_HIGHEST), mask.sum(), s


def _lstsq(a, b, rcond, numpy_resid=False):
    a, b = _promote_to_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    b = b[:, None] if vector else b
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    x, rank, s = _lstsq_solution(a, b, rcond)
    m, n = a.shape
    if numpy_resid and (rank < n or m <= n):
        resid = asarray([])
    else:
        resid = norm(b - _matmul(a, x, precision=_HIGHEST), axis=0) ** 2
    return (x.ravel() if vector else x), resid, rank, s


_jit_lstsq = staged_as("_lstsq")(_lstsq)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, residuals, rank, singular values) of the least-squares problem a x ~ b. JAX's
    residuals are always computed; numpy_resid=True gives NumPy's (empty when a is rank
    deficient or not tall; rank must then be concrete)."""
    a, b = _arrays("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


# ---------------------------------------------------------------- determinants

def _lu_sign_parity(pivots):
    """The number of row swaps of an LU factorization."""
    iota = lax.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    return count_nonzero(pivots != iota, axis=-1)


def _slogdet_small_impl(a):
    det = a[..., 0, 0] if a.shape[-1] == 1 else _det_2x2(a)
    return sign(det), real(log(absolute(det)))


def _sign_and_logdet_dot(x, sgn, ans_dot):
    """(sign_dot, logdet_dot) from d(log det) = ans_dot: complex determinants' phases move."""
    if _dt.kind(x.dtype) == "c":
        return (ans_dot - real(ans_dot).astype(ans_dot.dtype)) * sgn, real(ans_dot)
    return zeros_like(sgn), ans_dot


@custom_jvp
def _slogdet_small(a):
    return _slogdet_small_impl(a)


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sgn, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        ans_dot = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                   - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / _det_2x2(x)
    return (sgn, ans), _sign_and_logdet_dot(x, sgn, ans_dot)


@custom_jvp
def _slogdet_lu(a):
    lu_, pivots, _ = _lax_lu(a)
    diag = _diagonal(lu_, axis1=-2, axis2=-1)
    is_zero = _any(diag == 0, axis=-1)
    parity = _lu_sign_parity(pivots)
    if _dt.kind(a.dtype) == "c":
        sgn = prod(diag / absolute(diag).astype(diag.dtype), axis=-1)
    else:
        sgn = asarray(1, dtype=a.dtype)
        parity = parity + count_nonzero(diag < 0, axis=-1)
    flip = asarray(-2 * (parity % 2) + 1, dtype=a.dtype)
    sgn = where(is_zero, asarray(0, dtype=a.dtype), sgn * flip)
    logdet = where(is_zero, asarray(-np.inf, dtype=a.dtype),
                   _sum(log(absolute(diag)).astype(a.dtype), axis=-1))
    return sgn, real(logdet)


@custom_jvp
def _slogdet_qr(a):
    if _dt.kind(a.dtype) == "c":
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    h, taus = _geqrf(a)
    diag = _diagonal(h, axis1=-2, axis2=-1)
    sign_taus = prod(where(taus[..., :n - 1] != 0, -1, 1), axis=-1)
    return prod(sign(diag), axis=-1) * sign_taus.astype(a.dtype), _sum(log(absolute(diag)),
                                                                        axis=-1)


def _slogdet_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sgn, ans = slogdet(x)
    ans_dot = _trace(solve(x, g), axis1=-1, axis2=-2)
    return (sgn, ans), _sign_and_logdet_dot(x, sgn, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


@staged_as("slogdet", static_argnames=("method",))
def slogdet(a, *, method=None):
    """(sign, log|det|) of a batch of square matrices, by LU (method None or 'lu') or QR."""
    a, = _inexact("jnp.linalg.slogdet", a)
    _require_square("slogdet()", a)
    if method in (None, "lu"):
        small = a.shape[-1] in (1, 2)
        return _SlogdetResult(*(_slogdet_small if small else _slogdet_lu)(a))
    if method == "qr":
        return _SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), "
                     "and 'qr'.")


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    e = lambda i, j: a[..., i, j]  # noqa: E731
    return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0)
            + e(0, 2) * e(1, 0) * e(2, 1) - e(0, 2) * e(1, 1) * e(2, 0)
            - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))


def _cofactor_solve(a, b):
    """(det a, adj(a) b) computed from an LU factorization so that it stays finite when a is
    singular (JAX's derivative of det)."""
    if a.shape[-1] == 1:
        return a[..., 0, 0], b
    lu_, pivots, perm = _lax_lu(a)
    batch = broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    x = broadcast_to(b, batch + b.shape[-2:])
    lu_ = broadcast_to(lu_, batch + lu_.shape[-2:])
    sgn = asarray(-2 * (_lu_sign_parity(pivots) % 2) + 1, dtype=a.dtype)
    partial_det = cumprod(_diagonal(lu_, axis1=-2, axis2=-1), axis=-1) * sgn[..., None]
    lu_ = lu_.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    d = _tri_solve(lu_, ones(x.shape[:-1], x.dtype), left_side=True, lower=False)
    d = broadcast_to(_any(isnan(d) | isinf(d), axis=-1)[..., None, None], x.shape)
    x = where(d, zeros_like(x), x)
    x = _lc.take_rows(x, broadcast_to(perm, batch + perm.shape[-1:]))
    x = _tri_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    x = concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]),
                    axis=-2)
    x = _tri_solve(lu_, x, left_side=True, lower=False)
    return partial_det[..., -1], where(d, zeros_like(x), x)


@custom_jvp
def _det(a):
    sgn, logdet = slogdet(a)
    return sgn * lax.exp(logdet).astype(sgn.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    y, z = _cofactor_solve(primals[0], tangents[0])
    return y, _trace(z, axis1=-1, axis2=-2)


@staged_as("det")
def det(a):
    """The determinant of a batch of square matrices (closed forms for 2x2 and 3x3)."""
    a, = _inexact("jnp.linalg.det", a)
    _require_square("_det()", a)
    return {2: _det_2x2, 3: _det_3x3}.get(a.shape[-1], _det)(a)


# ---------------------------------------------------------------- norms, rank, condition

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector p-norms (2, 1, inf, -inf, 0 or any real p) over axis (all axes when None)."""
    x, = _arrays("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        hint = {"inf": "Use 'jax.numpy.inf' instead.", "-inf": "Use '-jax.numpy.inf' instead."}
        raise ValueError(f"Invalid order '{ord}' for vector norm." + hint.get(ord, ""))
    if ord == np.inf:
        return amax(absolute(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return amin(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _sum(x != 0, dtype=finfo(_dt.to_inexact_dtype(x.dtype)).dtype, axis=axis,
                    keepdims=keepdims)
    if ord == 1:
        return _sum(absolute(x), axis=axis, keepdims=keepdims)
    abs_x = absolute(x)
    p = asarray(ord, dtype=abs_x.dtype)
    return _sum(abs_x ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _frobenius(x, axis, keepdims):
    return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))


def _sum_then_extreme(x, summed, other, ord_, keepdims):
    """max/min over `other` of the sums of |x| over `summed` (the 1 and inf norms)."""
    if not keepdims and other > summed:
        other -= 1
    sums = _sum(absolute(x), axis=summed, keepdims=keepdims)
    if ord_ > 0:
        return amax(sums, axis=other, keepdims=keepdims, initial=0)
    return amin(sums, axis=other, keepdims=keepdims)


def _spectral_norm(x, axis, keepdims, ord_):
    s = svd(moveaxis(x, axis, (-2, -1)), compute_uv=False)
    y = {2: lambda: amax(s, axis=-1, initial=0), -2: lambda: amin(s, axis=-1),
         "nuc": lambda: _sum(s, axis=-1)}[ord_]()
    return expand_dims(y, axis) if keepdims else y


def _matrix_norm_axes(x, ord_, axis, keepdims):
    row, col = axis
    if ord_ is None or ord_ in ("f", "fro"):
        return _frobenius(x, axis, keepdims)
    if ord_ in (1, -1):
        return _sum_then_extreme(x, row, col, ord_, keepdims)
    if ord_ in (np.inf, -np.inf):
        return _sum_then_extreme(x, col, row, ord_, keepdims)
    if ord_ in ("nuc", 2, -2):
        return _spectral_norm(x, axis, keepdims, ord_)
    raise ValueError(f"Invalid order '{ord_}' for matrix norm.")


@staged_as("norm", static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims=False):
    """A vector norm (one axis) or matrix norm (two axes), as numpy.linalg.norm; with
    axis=None, the 2-norm of x flattened (ord None) or the norm over all (1 or 2) axes."""
    x, = _inexact("jnp.linalg.norm", x)
    if axis is None:
        if ord is None:
            return _frobenius(x, None, keepdims)
        axis = tuple(range(x.ndim))
    axis = _axes(axis, x.ndim, allow_none=False, name="jnp.linalg.norm")
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm_axes(x, ord, axis, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes."""
    x, = _arrays("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@staged_as("matrix_rank", static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above rtol * max(S) (default max(m, n) * eps * max(S))."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = _inexact("jnp.linalg.matrix_rank", M)
    if M.ndim < 2:
        return _any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = s.max(-1) * np.asarray(max(M.shape[-2:]), s.dtype) * finfo(s.dtype).eps
    rtol = asarray(rtol)
    return _sum(s > expand_dims(rtol, rtol.ndim), axis=-1)


@staged_as("cond", static_argnames=("p",))
def cond(x, p=None):
    """The condition number of x in the p-norm (2 and -2 from the singular values)."""
    x, = _arrays("jnp.linalg.cond", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={x.shape!r}")
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={x.shape!r}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-2] != x.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={x.shape!r}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), np.inf, r)


# ---------------------------------------------------------------- tensors and products

def tensorinv(a, ind=2):
    """The inverse of a tensor over its first `ind` axes (reshaped to a square matrix)."""
    a, = _arrays("jnp.linalg.tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind!r}")
    head, tail = a.shape[:ind], a.shape[ind:]
    if math.prod(head) != math.prod(tail):
        raise ValueError(f"tensorinv is only possible when the product of the first `ind` "
                         f"dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={a.shape!r} with ind={ind!r}.")
    return reshape(inv(reshape(a, (math.prod(head), math.prod(tail)))), tail + head)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b."""
    a, b = _arrays("jnp.linalg.tensorsolve", a, b)
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError(f"After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a.shape}, b.shape={b.shape}")
    if b.size != math.prod(out_shape):
        raise ValueError(f"Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a.shape}, b.ndim={b.ndim}.")
    return reshape(solve(reshape(a, (b.size, math.prod(out_shape))), b.ravel()), out_shape)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (first and last may be vectors), in the cheapest
    order."""
    arrs = _arrays("jnp.linalg.multi_dot", *arrays)
    shapes = [a.shape for a in arrs]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {shapes}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {shapes}")
    subs = [(i, i + 1) for i in range(len(arrs))]
    subs[0] = subs[0][1:] if arrs[0].ndim == 1 else subs[0]
    subs[-1] = subs[-1][:1] if arrs[-1].ndim == 1 else subs[-1]
    return einsum(*itertools.chain(*zip(arrs, subs)), optimize="auto", precision=precision)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along axis."""
    x1, x2 = _arrays("jnp.linalg.cross", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={x1.shape[axis]!r} and "
                         f"x2.shape[axis]={x2.shape[axis]!r}")
    return _cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two vectors."""
    x1, x2 = _arrays("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim!r} x2.ndim={x2.ndim!r}")
    return x1[:, None] * x2[None, :]


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x, = _arrays("jnp.linalg.matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={x.ndim!r}")
    return _mT(x)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The conjugated dot product of vectors along axis."""
    x1, x2 = _arrays("jnp.linalg.vecdot", x1, x2)
    return _vecdot(x1, x2, axis=axis, precision=precision,
                   preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product (jnp.matmul)."""
    x1, x2 = _arrays("jnp.linalg.matmul", x1, x2)
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """The tensor dot product over axes (jnp.tensordot)."""
    x1, x2 = _arrays("jnp.linalg.tensordot", x1, x2)
    return _tensordot(x1, x2, axes=axes, precision=precision,
                      preferred_element_type=preferred_element_type)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two axes."""
    x, = _arrays("jnp.linalg.diagonal", x)
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the matrices in the last two axes."""
    x, = _arrays("jnp.linalg.trace", x)
    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


def __dir__():
    """jnp.linalg's names only, as dir(jax.numpy.linalg) (not this module's imports)."""
    return list(__all__)


from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "jnp.linalg")  # errors raised below a public function name it
