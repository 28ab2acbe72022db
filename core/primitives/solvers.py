"""triangular_solve and tridiagonal_solve (linear in their right-hand side) with all of their
rules, and the lax.linalg functions binding them.

  triangular_solve_p.bind(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)
      a [..., m, m] triangular (only the `lower` or upper triangle is read; with
      unit_diagonal its diagonal is taken as ones); b [..., m, n] (left_side) or [..., n, m].
      Solves op(a) @ x = b (left_side) or x @ op(a) = b, op transposing and/or conjugating.
  tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular)
      dl, d, du [..., m]: sub-, main and super-diagonal (dl[0] and du[m-1] unused); b
      [..., m, k]. Solves the tridiagonal system (LAPACK's gtsv, partial pivoting)."""
from ..trace import as_value
from ..transforms import ad
from ..transforms.ad import Zero
from . import elementwise as ew
from . import structural as st
from .linalg_common import (FC, conj, is_complex, linalg_primitive, matmul, mT, shape, tril,
                            triu)

# ---------------------------------------------------------------- triangular_solve


def _triangular_solve_shape(a_shape, b_shape, *, left_side=False, **_):
    if a_shape[0] != a_shape[1]:
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a_shape}.")
    common = -2 if left_side else -1
    if a_shape[-1] != b_shape[common]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} and "
                         f"{b_shape}.")
    return b_shape


triangular_solve_p = linalg_primitive(
    "triangular_solve", (FC, FC), (2, 2), _triangular_solve_shape, lambda a, b, **_: a)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solve op(a) @ x = b (left_side) or x @ op(a) = b for x, a triangular; op(a) is a,
    its transpose and/or its conjugate. A b with one dim fewer than a is a (batch of)
    vector(s)."""
    a, b = as_value(a), as_value(b)
    conjugate_a = bool(conjugate_a) and is_complex(a)
    vector = len(shape(b)) == len(shape(a)) - 1
    if vector:
        b = st.expand_dims(b, (len(shape(b)) if left_side else len(shape(b)) - 1,))
    out = triangular_solve_p.bind(a, b, conjugate_a=conjugate_a, left_side=bool(left_side),
                                  lower=bool(lower), transpose_a=bool(transpose_a),
                                  unit_diagonal=bool(unit_diagonal))
    if vector:
        out = st.squeeze(out, (len(shape(out)) - (1 if left_side else 2),))
    return out


def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    """-op(a)^{-1} op(g_a) x (left) or -x op(g_a) op(a)^{-1}, g_a restricted to the triangle
    a is read from, each product in whichever order is cheaper (as JAX)."""
    m, n = shape(b)[-2:]
    k = 1 if unit_diagonal else 0
    g_a = ew.neg(tril(g_a, -k) if lower else triu(g_a, k))
    g_a = mT(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a
    params = dict(conjugate_a=conjugate_a, left_side=left_side, lower=lower,
                  transpose_a=transpose_a, unit_diagonal=unit_diagonal)

    def a_inverse(rhs):
        return triangular_solve_p.bind(a, rhs, **params)
    if left_side:
        return a_inverse(matmul(g_a, ans)) if m > n else matmul(a_inverse(g_a), ans)
    return a_inverse(matmul(ans, g_a)) if m < n else matmul(ans, a_inverse(g_a))


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    g_a, g_b = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    out = Zero.from_primal(ans)
    if type(g_b) is not Zero:
        out = triangular_solve_p.bind(a, g_b, **params)
    if type(g_a) is not Zero:
        out = ad.add_tangents(out, _triangular_solve_jvp_a(g_a, ans, a, b, **params))
    return ans, out


def _triangular_solve_transpose(ct, a, b, *, transpose_a, **params):
    if ad.is_undefined_primal(a):
        raise ValueError("triangular_solve is linear in b only: its transpose needs a known")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    params = dict(sorted({**params, "transpose_a": not transpose_a}.items()))
    return [None, triangular_solve_p.bind(a, ct, **params)]


triangular_solve_p.def_jvp(_triangular_solve_jvp)
triangular_solve_p.def_transpose(_triangular_solve_transpose)


# ---------------------------------------------------------------- tridiagonal_solve

def _tridiagonal_solve_shape(dl_shape, d_shape, du_shape, b_shape, **_):
    if dl_shape != d_shape or dl_shape != du_shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                        f"shape, got {dl_shape}, {d_shape} and {du_shape}.")
    if dl_shape != b_shape[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        f"equal the dimensions of the diagonal arguments, got b of shape "
                        f"{b_shape} and diagonals of shape {dl_shape}.")
    return b_shape


tridiagonal_solve_p = linalg_primitive(
    "tridiagonal_solve", (FC,) * 4, (1, 1, 1, 2), _tridiagonal_solve_shape,
    lambda *dts, **_: dts[0])


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """The solution x of the tridiagonal system A x = b, A[i, i-1] = dl[i], A[i, i] = d[i],
    A[i, i+1] = du[i] (dl[0] and du[-1] are not read). With perturb_singular, tiny pivots
    are perturbed so that singular systems get a finite answer."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _shift(x, axis, by):
    """x moved one place along `axis`, zero-filled: by=+1 puts x[i] at i+1, by=-1 at i-1."""
    nd = len(shape(x))
    axis, n = axis % nd, shape(x)[axis]
    if n == 0:
        return x
    part = st.slice_in_dim(x, 0, n - 1, axis=axis) if by > 0 else st.slice_in_dim(x, 1, n, axis=axis)
    pads = [(0, 0, 0)] * nd
    pads[axis] = (1, 0, 0) if by > 0 else (0, 1, 0)
    return st.pad(part, st._zero_scalar(part), pads)


def _down_rows(v, like):
    """v [..., m] broadcast along the last dim of `like` [..., m, k]."""
    return st.broadcast_in_dim(v, shape(like), tuple(range(len(shape(v)))))


def tridiagonal_product(dl, d, du, b):
    """A @ b for the tridiagonal A of (dl, d, du), dl[0] and du[-1] not read."""
    dl, du = _shift(_shift(dl, -1, -1), -1, +1), _shift(_shift(du, -1, +1), -1, -1)
    out = ew.add(ew.mul(_down_rows(d, b), b), ew.mul(_down_rows(dl, b), _shift(b, -2, +1)))
    return ew.add(out, ew.mul(_down_rows(du, b), _shift(b, -2, -1)))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    rhs = b_dot
    if not all(type(t) is Zero for t in diags_dot):
        product = tridiagonal_product(*map(ad.instantiate, diags_dot), ans)
        rhs = ad.add_tangents(b_dot, ew.neg(product))
    if type(rhs) is Zero:
        return ans, Zero.from_primal(ans)
    return ans, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    if any(ad.is_undefined_primal(x) for x in (dl, d, du)):
        raise ValueError("tridiagonal_solve is linear in b only: its transpose needs the "
                         "diagonals known")
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    # The transpose's sub-diagonal is du moved down one place, its super-diagonal dl moved up.
    dl_t, du_t = _shift(du, -1, +1), _shift(dl, -1, -1)
    return [None, None, None,
            tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


tridiagonal_solve_p.def_jvp(_tridiagonal_solve_jvp)
tridiagonal_solve_p.def_transpose(_tridiagonal_solve_transpose)
