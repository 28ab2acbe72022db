"""jax.scipy.linalg's matrix functions: expm (and its Frechet derivative), sqrtm, funm,
polar, rsf2csf, solve_sylvester, eigh_tridiagonal, block_diag."""
from fractions import Fraction
from math import factorial

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import linalg_common as _lc
from ...core.transforms.jvp import jvp
from .. import lax
from .. import numpy as jnp
from ..lax_linalg import eigh as _lax_eigh, qdwh as _qdwh, svd as _lax_svd
from ..numpy.promotion import _arrays, promote_dtypes, staged_as
from .linalg_common import inexact, over_batch, require_square

_HIGHEST = lax.Precision.HIGHEST

# ---------------------------------------------------------------- expm: scaling and squaring
# with Pade approximants (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"): theta_m bounds the 1-norm for which degree m is accurate enough.

_THETAS = {"single": ((3, 0.4258730016922831), (5, 1.880152677804762), (7, 3.92572478313866)),
           "double": ((3, 0.01495585217958292), (5, 0.253939833006323),
                      (7, 0.9504178996162932), (9, 2.097847961257068),
                      (13, 5.371920351148152))}


def _pade_coefficients(m):
    """b_0..b_m of the [m/m] Pade approximant of exp, scaled so that b_m = 1."""
    c = [Fraction(factorial(2 * m - j) * factorial(m),
                  factorial(2 * m) * factorial(j) * factorial(m - j)) for j in range(m + 1)]
    return [float(cj / c[m]) for cj in c]


def _dot(a, b):
    return jnp.matmul(a, b, precision=_HIGHEST)


def _pade(a, m):
    """(U, V): the odd and even parts of the degree-m Pade numerator (P = V + U, Q = V - U)."""
    b = _pade_coefficients(m)
    eye = jnp.eye(a.shape[0], dtype=a.dtype)
    powers = {0: eye, 2: _dot(a, a)}
    for k in range(4, (6 if m == 13 else m) + 1, 2):
        powers[k] = _dot(powers[k - 2], powers[2])
    if m == 13:  # Higham's evaluation reusing A^6
        a6 = powers[6]
        u = _dot(a6, b[13] * a6 + b[11] * powers[4] + b[9] * powers[2])
        u = _dot(a, u + sum(b[j] * powers[j - 1] for j in (7, 5, 3, 1)))
        v = _dot(a6, b[12] * a6 + b[10] * powers[4] + b[8] * powers[2])
        return u, v + sum(b[j] * powers[j] for j in (6, 4, 2, 0))
    u = _dot(a, sum(b[j] * powers[j - 1] for j in range(m, 0, -2)))
    return u, sum(b[j] * powers[j] for j in range(m - 1, -1, -2))


def _expm_2d(a, upper_triangular, max_squarings):
    precision = "double" if _dt.finfo(a.dtype).bits == 64 else "single"
    degrees, thetas = zip(*_THETAS[precision])
    norm1 = jnp.linalg.norm(a, 1)
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / thetas[-1])))
    a = a / (2 ** n_squarings).astype(a.dtype)
    index = jnp.digitize(norm1, jnp.array(thetas[:-1], dtype=norm1.dtype))
    u, v = lax.switch(index, [lambda x, m=m: _pade(x, m) for m in degrees], a)
    p, q = u + v, v - u
    from .linalg import solve_triangular
    r = solve_triangular(q, p) if upper_triangular else jnp.linalg.solve(q, p)
    square = lambda i, r_: lax.cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, r_)  # noqa: E731
    r = lax.fori_loop(0, max_squarings, square, r)
    return jnp.where(n_squarings > max_squarings, jnp.full_like(r, np.nan), r)


@staged_as("expm", static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of a (batch of) square matrices by scaling and squaring with a
    Pade approximant; NaN where more than max_squarings squarings would be needed."""
    A, = inexact("jax.scipy.linalg.expm", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape!r}.")
    if A.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"A.dtype={A.dtype} is not supported.")
    return over_batch(lambda a: _expm_2d(a, upper_triangular, max_squarings), [A], [2])


@staged_as("expm_frechet", static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm=True):
    """(expm(A), L(A, E)): the Frechet derivative of expm at A in direction E (its JVP)."""
    del method
    A, E = _arrays("jax.scipy.linalg.expm_frechet", A, E)
    require_square("expm_frechet", A, "A")
    require_square("expm_frechet", E, "E")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                         f"E.shape={E.shape}")
    expm_a, frechet = jvp(lambda x: expm(x), (A,), (E,))
    return (expm_a, frechet) if compute_expm else frechet


# ---------------------------------------------------------------- Schur-based functions

def _require_2d_square(name, a):
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name}: expected square array_like input, got shape {a.shape}")


def _sqrtm_triu(t):
    """The upper triangular square root of an upper triangular t, column by column (Higham's
    recurrence); entries whose numerator vanishes are 0 (so a zero block stays zero)."""
    n = t.shape[0]
    d = jnp.sqrt(jnp.diagonal(t))
    u = jnp.diag(d)
    for j in range(n):
        for i in range(j - 1, -1, -1):
            s = _dot(u[i, i + 1:j], u[i + 1:j, j]) if j > i + 1 else jnp.zeros((), t.dtype)
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (d[i] + d[j]))
            u = u.at[i, j].set(value)
    return u


@staged_as("sqrtm")
def _sqrtm(A):
    A, = _arrays("jax.scipy.linalg.sqrtm", A)
    _require_2d_square("jax.scipy.linalg.sqrtm", A)
    from .linalg import schur
    t, z = schur(A, output="complex")
    return _dot(_dot(z, _sqrtm_triu(t)), jnp.conj(z.T))


def sqrtm(A, blocksize=1):
    """The principal square root of a square matrix (complex result), from its complex Schur
    form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


def _givens_step(t, z, m, eps):
    """Zero t[m, m-1] of a real Schur form's 2x2 block by a complex Givens rotation (when it
    is not already negligible)."""
    block = t[m - 1:m + 1, m - 1:m + 1]
    mu = jnp.linalg.eigvals(block) - t[m, m]
    r = jnp.linalg.norm(jnp.stack([mu[0], t[m, m - 1]])).astype(t.dtype)
    active = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
    safe_r = jnp.where(active, r, 1)
    c, s = jnp.where(active, mu[0] / safe_r, 1), jnp.where(active, t[m, m - 1] / safe_r, 0)
    g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
    t = t.at[m - 1:m + 1, m - 1:].set(g @ t[m - 1:m + 1, m - 1:])
    t = t.at[:m + 1, m - 1:m + 1].set(t[:m + 1, m - 1:m + 1] @ jnp.conj(g.T))
    z = z.at[:, m - 1:m + 1].set(z[:, m - 1:m + 1] @ jnp.conj(g.T))
    return t.at[m, m - 1].set(0), z


def _rsf2csf_2d(t, z):
    t, z = promote_dtypes(t, z)
    dtype = _lc.complex_dtype(t.dtype)
    t, z = t.astype(dtype), z.astype(dtype)
    eps = jnp.finfo(dtype).eps
    for m in range(t.shape[0] - 1, 0, -1):
        t, z = _givens_step(t, z, m, eps)
    return t, z


@staged_as("rsf2csf", static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (t, z) from a real Schur form (T, Z): t upper triangular."""
    del check_finite
    T, Z = _arrays("jax.scipy.linalg.rsf2csf", T, Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    return over_batch(_rsf2csf_2d, [T, Z], [2, 2])


def _parlett(f, t):
    """Parlett's recurrence (Golub & Van Loan, Algorithm 11.1.1): f(t) for upper triangular t
    from f on its diagonal; also the smallest |t_jj - t_ii| it divided by."""
    n = t.shape[0]
    minden = jnp.abs(t[0, 0])
    for p in range(1, n):
        for i in range(n - p):
            j = i + p
            s = t[i, j] * (f[j, j] - f[i, i])
            if j > i + 1:
                s = s + _dot(t[i, i + 1:j], f[i + 1:j, j]) - _dot(f[i, i + 1:j], t[i + 1:j, j])
            den = t[j, j] - t[i, i]
            f = f.at[i, j].set(jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s))
            minden = jnp.minimum(minden, jnp.abs(den))
    return f, minden


def funm(A, func, disp=True):
    """func(A) for a square matrix, from func on the eigenvalues (complex Schur form and
    Parlett's recurrence); with disp=False also scipy's error estimate."""
    A, = _arrays("jax.scipy.linalg.funm", A)
    _require_2d_square("funm", A)
    from .linalg import schur
    t, z = rsf2csf(*schur(A))
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, minden = _parlett(f, t)
    f = z @ f @ jnp.conj(z.T)
    if disp:
        return f
    tol = jnp.finfo(jnp.finfo(f.dtype).dtype).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    bound = tol / minden * jnp.linalg.norm(jnp.triu(t, 1), 1)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(tol, bound)))
    return f, err


# ---------------------------------------------------------------- polar, Sylvester

def _polar_2d(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "svd":
        u, s, vh = _lax_svd(a, full_matrices=False)
        unitary, s = u @ vh, s.astype(u.dtype)
        vector = jnp.conj(vh.T) if side == "right" else u
        return unitary, (vector * s[None, :]) @ jnp.conj(vector.T)
    if method != "qdwh":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    if m >= n and side == "right":
        return _qdwh(a, eps=eps, max_iterations=max_iterations)[:2]
    if m < n and side == "left":
        unitary, posdef = _qdwh(jnp.conj(a.T), eps=eps, max_iterations=max_iterations)[:2]
        return jnp.conj(unitary.T), jnp.conj(posdef.T)
    raise NotImplementedError(f"method='qdwh' only supports mxn matrices where m < n where "
                              f"side='right' and m >= n side='left', got {a.shape} with "
                              f"side={side!r}")


@staged_as("polar", static_argnames=("side", "method"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p): a = u p (side 'right') or p u ('left'), u with orthonormal columns (rows) and p
    Hermitian positive semidefinite; by QDWH iteration or from the SVD."""
    a, = _arrays("jax.scipy.linalg.polar", a)
    if a.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    return over_batch(lambda x: _polar_2d(x, side, method, eps, max_iterations), [a], [2])


def _sylvester_2d(a, b, c, tol):
    """X with A X + X B = C as one linear system (I kron B^T + A kron I on X's rows); NaN when
    some eigenvalues of A and -B are within tol (no unique solution)."""
    m, n = c.shape
    system = jnp.kron(a, jnp.eye(n, dtype=a.dtype)) + jnp.kron(jnp.eye(m, dtype=a.dtype), b.T)
    x = jnp.linalg.solve(system, c.ravel()).reshape(m, n)
    gaps = jnp.abs(jnp.linalg.eigvals(a)[:, None] + jnp.linalg.eigvals(b)[None, :])
    return jnp.where(jnp.any(gaps < tol), jnp.full_like(x, np.nan), x)


@staged_as("solve_sylvester", static_argnames=("method",))
def solve_sylvester(A, B, C, *, method="schur", tol=1e-08):
    """X with A X + X B = C (A [m, m], B [n, n], C [m, n], batched), NaN where A and -B share
    an eigenvalue (within tol). `method` ('schur' or 'eigen') is checked; both solve the same
    system."""
    A, B, C = inexact("jax.scipy.linalg.solve_sylvester", A, B, C)
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    return over_batch(lambda a, b, c: _sylvester_2d(a, b, c, tol), [A, B, C], [2, 2, 2])


# ---------------------------------------------------------------- eigh_tridiagonal, block_diag

def _check_tridiagonal(alpha, beta):
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported:
        raise TypeError(f"Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and "
                        f"{beta.dtype}")


def _selected(select, select_range, n):
    if select == "a":
        return 0, n
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return int(select_range[0]), int(select_range[1]) + 1
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _sturm_count(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """How many eigenvalues of the tridiagonal matrix lie below each x: the negative pivots of
    the LDL^T factorization of T - x I (Sturm sequence), pivots kept away from 0 by pivmin."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, state):
        q, count = state
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = jnp.where(q <= pivmin, count + 1, count)
        return jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q), count
    return lax.fori_loop(1, alpha.shape[0], step, (q, count))[1]


def _bisection_eigenvalues(alpha, beta_abs, beta_sq, tol, start, stop):
    """Eigenvalues start..stop-1 (ascending) by bisection on Sturm counts from Gershgorin
    bounds, to within eps * |T| (or tol), as LAPACK's stebz and JAX do."""
    n, finfo = alpha.shape[0], np.finfo(alpha.dtype)
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    low, high = jnp.amin(alpha - row_sums), jnp.amax(alpha + row_sums)
    t_norm = jnp.maximum(jnp.abs(low), jnp.abs(high))
    one = np.ones([], alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.amax(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm if tol is None else jnp.maximum(tol, finfo.eps * t_norm)
    targets = jnp.arange(start, stop, dtype=np.int32)
    slack = jnp.array(n, alpha.dtype) * 2.1 * finfo.eps * t_norm
    lower = jnp.broadcast_to(low - slack - 2 * 2.1 * pivmin, targets.shape)
    upper = jnp.broadcast_to(high + slack + 2.1 * pivmin, targets.shape)

    def body(state):
        i, lower, mid, upper = state
        counts = _sturm_count(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower, upper = jnp.where(counts <= targets, mid, lower), jnp.where(counts > targets, mid,
                                                                           upper)
        return i + 1, lower, 0.5 * (lower + upper), upper
    cond = lambda s: (s[0] < finfo.nmant + 1) & (abs_tol < jnp.amax(s[3] - s[1]))  # noqa: E731
    return lax.while_loop(cond, body, (0, lower, 0.5 * (upper + lower), upper))[2]


@staged_as("eigh_tridiagonal", static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Ascending eigenvalues (and eigenvectors, columns) of the Hermitian tridiagonal matrix
    with diagonal d and superdiagonal e: the eigenvalues by bisection (as JAX), the
    eigenvectors from the dense matrix's eigendecomposition (JAX's inverse iteration from
    `key`'s random start is not needed for them)."""
    del key
    alpha, beta = _arrays("jax.scipy.linalg.eigh_tridiagonal", d, e)
    _check_tridiagonal(alpha, beta)
    n = alpha.shape[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype))
    start, stop = _selected(select, select_range, n)
    beta_sq = jnp.real(beta * jnp.conj(beta))
    w = _bisection_eigenvalues(jnp.real(alpha), jnp.sqrt(beta_sq) if jnp.iscomplexobj(beta)
                               else jnp.abs(beta), beta_sq, tol, start, stop)
    if eigvals_only:
        return w
    t = jnp.diag(jnp.real(alpha).astype(alpha.dtype)) + jnp.diag(beta, 1) + jnp.diag(
        jnp.conj(beta), -1)
    return w, _lax_eigh(t, subset_by_index=(start, stop))[0]


@staged_as("block_diag")
def block_diag(*arrs):
    """The block-diagonal matrix with the given (at most 2-D) arrays as blocks."""
    arrs = tuple(promote_dtypes(*_arrays("jax.scipy.linalg.block_diag", *arrs))) if arrs else (
        jnp.zeros((1, 0)),)
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got {a} at argument {i}.")
    blocks = [jnp.atleast_2d(a) for a in arrs]
    total = sum(b.shape[1] for b in blocks)
    starts = np.cumsum([0] + [b.shape[1] for b in blocks])
    return jnp.concatenate([jnp.pad(b, ((0, 0), (s, total - s - b.shape[1])))
                            for b, s in zip(blocks, starts)], axis=0)
