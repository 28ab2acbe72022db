"""qdwh: the polar decomposition x = u h by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31 (2010)), written with
lax.linalg's qr, cholesky and triangular_solve and lax's loops (no primitive of its own)."""
import numpy as np

from .. import dtypes
from ..trace import as_value, get_aval
from . import elementwise as ew
from . import structural as st
from .control_flow import while_loop
from .decompositions import cholesky, qr
from .linalg_common import eye, matmul, mH, rows, shape
from .reductions import reduce_max, reduce_sum
from .solvers import triangular_solve

# c above this: a QR-based step (well-conditioned for the early, large weights); else the
# cheaper Cholesky-based one.
_CHOLESKY_CUTOFF = 100


def _weights(low):
    """The dynamic weights (a, b, c) for a lower bound `low` of the smallest singular value
    of the iterate, and the bound's next value."""
    l2 = low * low
    dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
    sqd = (1 + dd) ** 0.5
    a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
    b = (a - 1) ** 2 / 4
    c = a + b - 1
    return (a, b, c), low * (a + b * l2) / (1 + c * l2)


def _schedule(eps, max_iterations):
    """The weights of the steps until the bound is within 10 eps / 2 of 1 (at most
    max_iterations steps), starting from eps."""
    steps, low = [], eps
    while low + 10 * eps / 2 < 1 and len(steps) < max_iterations:
        weights, low = _weights(low)
        steps.append(weights)
    return steps


def _qr_step(u, a, b, c):
    """u <- (b/c) u + (a - b/c) u (I + c u^H u)^-1, the inverse through the QR factors of
    [sqrt(c) u; I] (no inverse is formed)."""
    n = shape(u)[-1]
    stacked = st.concatenate([ew.mul(u, c ** 0.5), eye(n, n, get_aval(u).dtype)], 0)
    q, _ = qr(stacked, full_matrices=False)
    m = shape(u)[0]
    update = matmul(rows(q, 0, m), mH(rows(q, m, m + n)))
    return ew.add(ew.mul(u, b / c), ew.mul(update, (a - b / c) / c ** 0.5))


def _cholesky_step(u, a, b, c):
    """The same update with (I + c u^H u)^-1 = L^-H L^-1 from a Cholesky factor L."""
    n = shape(u)[-1]
    gram = ew.add(ew.mul(matmul(mH(u), u), c), eye(n, n, get_aval(u).dtype))
    factor = cholesky(gram, symmetrize_input=False)
    p = triangular_solve(factor, mH(u), left_side=True, lower=True)
    z = mH(triangular_solve(factor, p, left_side=True, lower=True, transpose_a=True,
                            conjugate_a=True))
    return ew.add(ew.mul(u, b / c), ew.mul(z, a - b / c))


def _changed(u, previous, tol):
    """Whether the step moved u by more than tol (Frobenius norm)."""
    diff = ew.abs(ew.sub(u, previous))
    return ew.gt(ew.sqrt(reduce_sum(ew.mul(diff, diff), (0, 1))), tol)


def _scaled(x):
    """x / alpha with alpha = sqrt(|x|_1 |x|_inf) >= |x|_2 (x itself when it is zero)."""
    absx = ew.abs(x)
    one, inf = reduce_max(reduce_sum(absx, (0,)), (0,)), reduce_max(reduce_sum(absx, (1,)), (0,))
    inverse = ew.mul(ew.rsqrt(one), ew.rsqrt(inf))
    inverse = ew.select_n(ew.eq(one, 0), inverse, ew.full_like(inverse, 1))
    return ew.mul(x, ew.convert_element_type(inverse, get_aval(x).dtype))


def _qdwh(x, max_iterations, eps):
    steps = _schedule(eps, max_iterations)
    tol = (10 * eps / 2) ** (1 / 3)
    u, moving = _scaled(x), True
    for a, b, c in steps:
        previous = u
        if c > _CHOLESKY_CUTOFF:
            u = _qr_step(u, a, b, c)
        else:
            u = _cholesky_step(u, a, b, c)
            moving = _changed(u, previous, tol)
    moving = ew.full((), True, np.bool_) if moving is True else moving

    def halley(state):
        k, u, _ = state
        new = _cholesky_step(u, 3.0, 1.0, 3.0)
        return ew.add(k, 1), new, _changed(new, u, tol)
    start = ew.weak_scalar(len(steps), dtypes.default_int())
    k, u, moving = while_loop(lambda s: ew.bitwise_and(s[2], ew.lt(s[0], max_iterations)),
                              halley, (start, u, moving))
    u = ew.sub(ew.mul(u, 1.5), ew.mul(matmul(u, matmul(mH(u), u)), 0.5))  # Newton-Schulz
    h = matmul(mH(u), x)
    return u, ew.div(ew.add(h, mH(h)), 2), k, ew.bitwise_not(moving)


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """The polar decomposition x = u h of a full-rank M x N x (M >= N): (u, h, num_iters,
    is_converged), u with orthonormal columns, h Hermitian positive semidefinite. The
    iteration stops when a step moves u by less than (10 eps / 2)^(1/3), or after
    max_iterations (default 10). dynamic_shape=(m, n): x's true size, its top-left corner
    (the rest is treated as zeros, and is zero in u and h). is_hermitian is unused (as in
    JAX)."""
    x = as_value(x)
    m_full, n_full = shape(x)
    if m_full < n_full:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(dtypes.finfo(get_aval(x).dtype).eps) if eps is None else float(eps)
    m, n = (m_full, n_full) if dynamic_shape is None else tuple(int(d) for d in dynamic_shape)
    corner = st.slice(x, (0, 0), (m, n))
    u, h, k, converged = _qdwh(corner, max_iterations, eps)
    u = st.pad(u, st._zero_scalar(u), ((0, m_full - m, 0), (0, n_full - n, 0)))
    return u, st.pad(h, st._zero_scalar(h), ((0, n_full - n, 0), (0, n_full - n, 0))), k, converged
