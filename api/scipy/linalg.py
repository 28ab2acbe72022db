"""jax.scipy.linalg: factorizations and solves (this module), matrix functions
(linalg_functions) and special matrices (linalg_matrices), with JAX 0.10.2's signatures."""
import warnings

from ...core.primitives import linalg_common as _lc
from .. import lax
from .. import numpy as jnp
from ..lax_linalg import (cholesky as _lax_cholesky, eigh as _lax_eigh,
                          hessenberg as _lax_hessenberg, householder_product, lu as _lax_lu,
                          lu_pivots_to_permutation, lu_solve as _lax_lu_solve, qr as _lax_qr,
                          schur as _lax_schur, svd as _lax_svd,
                          triangular_solve as _tri_solve)
from ..numpy.promotion import staged_as
from .linalg_common import inexact, over_batch

# ---------------------------------------------------------------- Cholesky


def _cholesky_factor(a, lower):
    l_ = _lax_cholesky(a if lower else jnp.conj(a.mT), symmetrize_input=False)
    return l_ if lower else jnp.conj(l_.mT)


@staged_as("_cholesky", static_argnames=("lower",))
def _cholesky(a, lower):
    a, = inexact("jax.scipy.linalg.cholesky", a)
    _require_matrix("cholesky", a)
    return _cholesky_factor(a, lower)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a Hermitian positive-definite a: upper (a = U^H U) by default,
    lower (a = L L^H) with lower=True; only that triangle of a is read."""
    del overwrite_a, check_finite
    return _cholesky(a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the Cholesky factor and its triangle, for cho_solve."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _vector_or_matrix(name, a, b):
    """Whether b is a (batch of) vector(s) for a's solves: 1-D, or JAX's deprecated batched
    1-D form (a.ndim == b.ndim + 1 with matching last dimensions), which warns."""
    if b.ndim == 1:
        return True
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are "
                      "deprecated, and in the future will be treated as a batched 2D solve. "
                      f"Use {name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
                      category=FutureWarning)
        return True
    return False


def _solve_each(name, fn, a, b):
    """fn(a, b) on matrices a [n, n] and b [n, k] (or vectors b [n]), over batch dimensions."""
    _require_matrix(name, a)
    vector = _vector_or_matrix(name, a, b)
    if b.ndim < 1 + (not vector):
        raise ValueError(f"{name}: b must be at least {1 + (not vector)}-dimensional, got "
                         f"b.shape={b.shape}")
    rows = b.shape[-1] if vector else b.shape[-2]
    if a.shape[-1] != rows or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: incompatible shapes a.shape={a.shape} and b.shape={b.shape}"
                         f" (a must be square with as many columns as b has rows)")
    if vector:
        return over_batch(lambda a_, b_: fn(a_, b_[:, None])[:, 0], [a, b], [2, 1])
    return over_batch(fn, [a, b], [2, 2])


@staged_as("_cho_solve", static_argnames=("lower",))
def _cho_solve(c, b, lower):
    c, b = inexact("jax.scipy.linalg.cho_solve", c, b)

    def solve2d(c_, b_):
        y = _tri_solve(c_, b_, left_side=True, lower=lower, transpose_a=not lower,
                       conjugate_a=not lower)
        return _tri_solve(c_, y, left_side=True, lower=lower, transpose_a=lower,
                          conjugate_a=lower)
    return _solve_each("cho_solve", solve2d, c, b)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b, from cho_factor(a)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, bool(lower))


# ---------------------------------------------------------------- triangular and general solves

_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


@staged_as("_solve_triangular", static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = inexact("jax.scipy.linalg.solve_triangular", a, b)
    return _solve_each("solve_triangular", lambda a_, b_: _tri_solve(
        a_, b_, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal), a, b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) x = b for triangular a; trans 0/'N' (a), 1/'T' (a^T) or 2/'C' (a^H)."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


@staged_as("_solve", static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a, lower):
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = inexact("jax.scipy.linalg.solve", a, b)
    vector = b.ndim == 1
    b = b[:, None] if vector else b
    x = _solve_pos(a, b, lower)
    return x[..., 0] if vector else x


def _solve_pos(a, b, lower):
    """a x = b for Hermitian positive-definite a, through its Cholesky factor; the derivative
    solves with the same factor (custom_linear_solve, symmetric)."""
    def solve2d(a_, b_):
        factors = (_cholesky_factor(lax.stop_gradient(a_), lower), lower)
        return lax.custom_linear_solve(lambda x: a_ @ x, b_,
                                       solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    return _solve_each("solve", solve2d, a, b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a x = b. assume_a 'gen', 'sym' and 'her' solve by LU; 'pos' by Cholesky (reading
    the `lower` triangle)."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, bool(lower))


def det(a, overwrite_a=False, check_finite=True):
    """The determinant (jnp.linalg.det)."""
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse (jnp.linalg.inv)."""
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)


# ---------------------------------------------------------------- LU

@staged_as("lu_factor", static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L and U packed in one matrix, and LAPACK's row-swap pivots."""
    del overwrite_a, check_finite
    a, = inexact("jax.scipy.linalg.lu_factor", a)
    _require_matrix("lu_factor", a)
    lu_, pivots, _ = _lax_lu(a)
    return lu_, pivots


@staged_as("lu_solve", static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), from lu_factor(a)."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = inexact("jax.scipy.linalg.lu_solve", lu_, b)
    _require_matrix("lu_solve", lu_)
    perm = lu_pivots_to_permutation(pivots, lu_.shape[-2])
    core = (lambda lu2, p, b2: _lax_lu_solve(lu2, p, b2, trans))
    vector = _vector_or_matrix("lu_solve", lu_, b)
    if vector:
        return over_batch(lambda lu2, p, b1: core(lu2, p, b1[:, None])[:, 0], [lu_, perm, b],
                          [2, 1, 1])
    return over_batch(core, [lu_, perm, b], [2, 1, 2])


@staged_as("lu", static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u (l unit lower trapezoidal, u upper); (p @ l, u) with
    permute_l=True. Batches of matrices are factored one by one."""
    del overwrite_a, check_finite
    a, = inexact("jax.scipy.linalg.lu", a)
    _require_matrix("lu", a)
    lu_, _, perm = _lax_lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    # JAX's p is real even for complex a (jnp.real of the 0/1 matrix)
    p = (perm[..., None, :] == jnp.arange(m, dtype=perm.dtype)[:, None]).astype(
        jnp.finfo(a.dtype).dtype)
    l_ = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=a.dtype)
    u = jnp.triu(lu_)[..., :k, :]
    if permute_l:
        return jnp.matmul(p, l_, precision=lax.Precision.HIGHEST), u
    return p, l_, u


# ---------------------------------------------------------------- QR, SVD, eigh, Schur

@staged_as("_qr", static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = inexact("jax.scipy.linalg.qr", a)
    _require_matrix("qr", a)
    q, r, *p = _lax_qr(a, pivoting=pivoting, full_matrices=mode != "economic")
    out = (r,) if mode == "r" else (q, r)
    return out + tuple(p)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) with a = q r ('full' or 'economic'), (r,) for mode 'r'; with pivoting, also the
    column permutation p (a[:, p] = q r)."""
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, bool(pivoting))


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(Q @ c (mode 'left') or c @ Q (mode 'right'), r) for the economic QR of a; Q conjugated
    with conjugate=True; with pivoting, also the column permutation."""
    del overwrite_a, overwrite_c
    a, c = inexact("jax.scipy.linalg.qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    _require_matrix("qr_multiply", a)
    vector = c.ndim == 1
    c = (c[:, None] if mode == "left" else c[None, :]) if vector else c
    m, n = a.shape[-2:]
    k = min(m, n)
    _check_qr_multiply(a, c, mode, m, k)
    q, r, *p = _lax_qr(a, pivoting=pivoting, full_matrices=False)
    q = jnp.conj(q) if conjugate else q
    cq = jnp.matmul(q, c) if mode == "left" else jnp.matmul(c, q)
    cq = cq.ravel() if vector else cq
    return (cq, jnp.triu(r)) + tuple(p)


def _check_qr_multiply(a, c, mode, m, k):
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
                         f"(expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")


@staged_as("_svd", static_argnames=("full_matrices", "compute_uv"))
def _svd(a, full_matrices, compute_uv):
    a, = inexact("jax.scipy.linalg.svd", a)
    _require_matrix("svd", a)
    return _lax_svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """(u, s, vh) with a = u diag(s) vh, s descending; s alone with compute_uv=False."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, bool(full_matrices), bool(compute_uv))


@staged_as("_eigh", static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a, b, lower, eigvals_only, eigvals, type):
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = inexact("jax.scipy.linalg.eigh", a)
    _require_matrix("eigh", a)
    v, w = _lax_eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """(w, v): ascending eigenvalues and eigenvectors (columns) of a Hermitian a; w alone with
    eigvals_only. The generalized problem (b) is not supported, as in JAX."""
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, bool(lower), bool(eigvals_only), eigvals, type)


@staged_as("_schur", static_argnames=("output",))
def _schur(a, output):
    a, = inexact("jax.scipy.linalg.schur", a)
    _require_matrix("schur", a)
    if output == "complex":
        a = a.astype(_lc.complex_dtype(a.dtype))
    return _lax_schur(a)


def schur(a, output="real"):
    """(t, z) with a = z t z^H: t quasi-upper-triangular ('real') or upper triangular
    ('complex'), z unitary."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    return _schur(a, output)


@staged_as("hessenberg", static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form h of a (a = q h q^H), and q with calc_q=True."""
    del overwrite_a, check_finite
    a, = inexact("jax.scipy.linalg.hessenberg", a)
    _require_matrix("hessenberg", a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = _lax_hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    q = householder_product(packed[..., 1:, :-1], taus)
    q = jnp.pad(q, [(0, 0)] * (q.ndim - 2) + [(1, 0), (1, 0)])
    return h, q.at[..., 0, 0].set(1)


def _require_matrix(name, a):
    if a.ndim < 2:
        raise ValueError(f"jax.scipy.linalg.{name}: expected a (batch of) matrices, got an "
                         f"array of shape {a.shape}")


from .linalg_functions import (  # noqa: E402,F401
    block_diag, eigh_tridiagonal, expm, expm_frechet, funm, polar, rsf2csf, solve_sylvester,
    sqrtm)
from .linalg_matrices import (  # noqa: E402,F401
    circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion, hadamard, hankel,
    helmert, hilbert, invhilbert, invpascal, leslie, pascal, toeplitz)

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
    "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet",
    "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert", "hessenberg",
    "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve", "pascal",
    "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
    "solve_triangular", "sqrtm", "svd", "toeplitz"]


def __dir__():
    """jax.scipy.linalg's names only, as dir(jax.scipy.linalg)."""
    return list(__all__)


from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "jax.scipy.linalg")  # errors raised below a public function name it
