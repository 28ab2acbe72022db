"""What the linear-algebra spec entries share: matrix strategies (built from a drawn seed so
that every draw is a generic matrix: well-conditioned, with separated eigenvalues or
singular values where derivatives need them), the half-precision reference (JAX's CPU
kernels have none), and the normalisations that make decompositions with sign or phase
freedom comparable (written once against the lax namespace of refjax or of JAX)."""
import numpy as np
from hypothesis import strategies as st

from .base import COMPLEX, FLOAT, Arg, kind, np_dtype, weak_flag

DTYPES = FLOAT + COMPLEX
FLOATS = FLOAT  # the real-only primitives (cholesky_update, symmetric_product)
_HALF = ("float16", "bfloat16")
# Decompositions: rounding errors grow with the condition of the problem (kept below ~10).
TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (2e-4, 2e-5),
       "complex64": (2e-4, 2e-5), "float64": (1e-10, 1e-12), "complex128": (1e-10, 1e-12)}
FD_TOL = (2e-5, 2e-6)

_SEEDS = st.integers(0, 2 ** 32 - 1)
SIDES = st.sampled_from((1, 2, 3, 2, 3, 0))
BATCH = st.sampled_from(((), (), (2,), (1,)))


# ---------------------------------------------------------------- building matrices

def _gauss(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _unitary(rng, n, complex_):
    q, r = np.linalg.qr(_gauss(rng, (n, n), complex_))
    return q * np.sign(np.diagonal(r).real + 0.5)  # any fixed choice: q stays unitary


def _spread(rng, n, low, gap):
    """n values from `low` up, consecutive ones at least `gap` apart, in random order."""
    return rng.permutation(low + gap * np.arange(n) + rng.uniform(0, gap / 2, n))


def general(rng, m, n, complex_):
    """Entries uniform in [-2, 2]."""
    x = rng.uniform(-2, 2, (m, n))
    return x + 1j * rng.uniform(-2, 2, (m, n)) if complex_ else x


def hermitian(rng, n, _, complex_, low=-1.5):
    """Q diag(w) Q^H (n x n) with eigenvalues w from `low` up, 0.6 apart."""
    q = _unitary(rng, n, complex_)
    return (q * _spread(rng, n, low, 0.6)) @ q.conj().T


def positive_definite(rng, n, _, complex_):
    """Hermitian with eigenvalues from 1 up (condition number below ~3n)."""
    return hermitian(rng, n, n, complex_, low=1.0)


def well_conditioned(rng, m, n, complex_):
    """U diag(s) V^H with singular values from 1 up, 0.7 apart (distinct, none tiny)."""
    k = min(m, n)
    u, v = _unitary(rng, m, complex_)[:, :k], _unitary(rng, n, complex_)[:, :k]
    return (u * _spread(rng, k, 1.0, 0.7)) @ v.conj().T


def distinct_eigenvalues(rng, n, _, complex_):
    """V D V^-1 with V near the identity and D's eigenvalues separated: complex ones for
    complex matrices, for real ones a mix of real ones and conjugate pairs (2x2 blocks)."""
    v = np.eye(n) + 0.3 * _gauss(rng, (n, n), complex_)
    if complex_:
        d = np.diag(_spread(rng, n, -1.5, 0.8) + 1j * rng.uniform(-1, 1, n))
    else:
        d = np.diag(_spread(rng, n, -1.5, 0.8))
        if n >= 2 and rng.uniform() < 0.5:
            d[:2, :2] = [[d[0, 0], 1.0], [-1.0, d[0, 0]]]  # eigenvalues d00 +- i
    return v @ d @ np.linalg.inv(v)


def triangular(rng, n, _, complex_):
    """Entries in [-0.5, 0.5] off the diagonal, diagonal magnitudes in [1, 2]: a triangle of
    it is well-conditioned (the other triangle is noise the solve must not read)."""
    x = 0.25 * general(rng, n, n, complex_)
    signs = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    return x - np.diag(np.diagonal(x)) + np.diag(signs * rng.uniform(1, 2, n))


def matrices(build, dtype, batch, m, n):
    """A strategy of arrays of dtype and shape batch + (m, n), each matrix build(rng, m, n,
    complex) from a drawn seed (square builders take m == n)."""
    complex_ = kind(dtype) == "c"

    def make(seed):
        rng = np.random.RandomState(seed)
        out = [build(rng, m, n, complex_) for _ in range(int(np.prod(batch)))]
        return cast(np.reshape(out, tuple(batch) + (m, n)), dtype)
    return _SEEDS.map(make)


def vectors(dtype, batch, n, scale=1.0):
    """A strategy of arrays of dtype and shape batch + (n,), entries in [-2, 2] * scale."""
    def row(rng, _, n, complex_):
        return scale * general(rng, 1, n, complex_)
    return matrices(row, dtype, batch, 1, n).map(lambda x: x.reshape(tuple(batch) + (n,)))


def cast(x, dtype):
    """x (float64 or complex128) as dtype `dtype` (the real part for real dtypes)."""
    x = np.asarray(x)
    if kind(dtype) != "c":
        x = np.real(x)
    return x.astype(np_dtype(dtype))


def matrix_arg(draw, build, dtype, batch, m, n=None):
    """An Arg of m x n (n x n if n is None) matrices from `build`, weakly typed at times (for
    Python-scalar dtypes)."""
    n = m if n is None else n
    return Arg(tuple(batch) + (m, n), dtype, draw(weak_flag(dtype)),
               values=matrices(build, dtype, batch, m, n))


def ones(*shape, dtype=np.float32):
    """A NumPy array of ones (the operands of invalid cases)."""
    return np.ones(shape, dtype)


def plain_arg(draw, dtype, shape, values):
    """An Arg whose values come from the strategy `values`."""
    return Arg(tuple(shape), dtype, draw(weak_flag(dtype)), values=values)


# ---------------------------------------------------------------- the reference

def wide_reference(fn):
    """A reference fn(jax, *args, **params) for JAX's CPU kernels, which have no half
    precision: half-float arguments are computed in float32, results rounded back."""
    def reference(jax, *args, **params):
        half = next((a.dtype for a in args if np.dtype(a.dtype).name in _HALF), None)
        if half is None:
            return fn(jax, *args, **params)
        wide = [a.astype(np.float32) if a.dtype == half else a for a in args]
        outs = fn(jax, *wide, **params)
        if isinstance(outs, (list, tuple)):
            return [o.astype(half) if o.dtype == np.float32 else o for o in outs]
        return outs.astype(half)
    return reference


def normalized_reference(raw, normalize):
    """A reference whose JAX outputs, raw(jax, *args, **params) (half floats computed as
    wide_reference does), are compared through normalize(jax.lax, args, outputs): after the
    rounding, as refjax's outputs are."""
    wide = wide_reference(raw)

    def reference(jax, *args, **params):
        return normalize(jax.lax, args, wide(jax, *args, **params))
    return reference


# ---------------------------------------------------------------- normalisations
#
# Written with lax operations only (`lax` is refjax.lax or jax.lax): their dtypes and weak
# types are the same in both, so what is compared is the decomposition's.

def _complex(x):
    """Whether x has a complex dtype."""
    return np.dtype(x.dtype).kind == "c"


def _matmul(lax, a, b):
    """a @ b over the last two dims, batched over the others."""
    batch = tuple(range(a.ndim - 2))
    return lax.dot_general(a, b, (((a.ndim - 1,), (a.ndim - 2,)), (batch, batch)))


def _mh(lax, x):
    """x's conjugate transpose (last two dims)."""
    xt = lax.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))
    return lax.conj(xt) if _complex(x) else xt


def _down(lax, row, like):
    """row [..., n] broadcast down the rows of `like` [..., m, n] (or of that shape)."""
    shape = tuple(getattr(like, "shape", like))
    return lax.broadcast_in_dim(row, shape, tuple(range(len(shape) - 2)) + (len(shape) - 1,))


def _across(lax, col, like):
    """col [..., m] broadcast across the columns of `like` [..., m, n]."""
    return lax.broadcast_in_dim(col, like.shape, tuple(range(like.ndim - 1)))


def _masked(lax, mask, x):
    """x where mask, else 0."""
    return lax.select(mask, x, lax.full(x.shape, 0, x.dtype))


def _phase(lax, v):
    """The phase (sign, if real) of each column's largest entry: [..., n]."""
    if v.size == 0:
        return lax.full(v.shape[:-2] + v.shape[-1:], 1, v.dtype)
    k = lax.argmax(lax.abs(lax.stop_gradient(v)), v.ndim - 2, np.int32)
    on = lax.eq(lax.broadcasted_iota(np.int32, v.shape, v.ndim - 2), _down(lax, k, v))
    pivot = lax.reduce_sum(_masked(lax, on, v), (v.ndim - 2,))
    if not _complex(v):
        return lax.sign(pivot)
    # |pivot| as sqrt(re^2 + im^2): refjax has no derivative of a complex abs
    size = lax.sqrt(lax.real(lax.mul(pivot, lax.conj(pivot))))
    return lax.div(pivot, lax.convert_element_type(size, v.dtype))


def phase_normalized(lax, v):
    """v's columns times the conjugate phase (sign, if real) of their largest entry: the
    same for every choice of phase a decomposition may make."""
    phase = _phase(lax, v)
    return lax.mul(v, _down(lax, lax.conj(phase) if _complex(v) else phase, v))


def eig_normalized(lax, w, *vectors):
    """Eigenvalues in lexicographic (real, imaginary) order, the eigenvectors' columns in
    the same order and phase-normalised: geev orders them and fixes each vector's sign as
    it goes, which LAPACK does not specify."""
    if w.size == 0:
        return [w, *vectors]
    n = w.shape[-1]
    iota = lax.broadcasted_iota(np.int32, w.shape, w.ndim - 1)
    perm = lax.sort((lax.real(w), lax.imag(w), iota), dimension=w.ndim - 1, num_keys=2)[2]
    square = w.shape + (n,)
    picks = lax.convert_element_type(  # picks[..., i, j] = (i == perm[j])
        lax.eq(lax.broadcasted_iota(np.int32, square, w.ndim - 1), _down(lax, perm, square)),
        w.dtype)
    batch = tuple(range(w.ndim - 1))
    ordered = lax.dot_general(w, picks, (((w.ndim - 1,), (w.ndim - 1,)), (batch, batch)))
    return [ordered] + [phase_normalized(lax, _matmul(lax, v, picks)) for v in vectors]


def svd_invariants(lax, s, u, vt, k):
    """s, the first k singular vectors with u's phases normalised (vt's rows follow them),
    and the projectors onto the remaining columns of u and rows of vt (any basis of those
    subspaces is as good as another)."""
    u1, vt1 = lax.slice_in_dim(u, 0, k, axis=u.ndim - 1), lax.slice_in_dim(vt, 0, k,
                                                                             axis=vt.ndim - 2)
    phase = _phase(lax, u1)
    cphase = lax.conj(phase) if _complex(u) else phase
    outs = [s, lax.mul(u1, _down(lax, cphase, u1)), lax.mul(vt1, _across(lax, phase, vt1))]
    if u.shape[-1] > k:
        u2 = lax.slice_in_dim(u, k, u.shape[-1], axis=u.ndim - 1)
        outs.append(_matmul(lax, u2, _mh(lax, u2)))
    if vt.shape[-2] > k:
        v2 = _mh(lax, lax.slice_in_dim(vt, k, vt.shape[-2], axis=vt.ndim - 2))
        outs.append(_matmul(lax, v2, _mh(lax, v2)))
    return outs


def schur_invariants(lax, x, t, q=None):
    """What every Schur form of x shares: the real parts of t's diagonal sorted (its 2x2
    blocks, for real x, hold a conjugate pair's real part twice), the imaginary parts too,
    t's zeros below the first subdiagonal; with q: q t q^H - x == 0 and q^H q."""
    rows = lax.broadcasted_iota(np.int32, t.shape, t.ndim - 2)
    cols = lax.broadcasted_iota(np.int32, t.shape, t.ndim - 1)
    diag = lax.reduce_sum(_masked(lax, lax.eq(rows, cols), t), (t.ndim - 1,))
    parts = [lax.real(diag), lax.imag(diag)] if _complex(t) else [diag]
    outs = [lax.sort(p, dimension=p.ndim - 1) for p in parts]
    outs.append(_masked(lax, lax.ge(rows, lax.add(cols, lax.full(cols.shape, 2, np.int32))),
                            t))
    if q is not None:
        outs += [lax.sub(_matmul(lax, _matmul(lax, q, t), _mh(lax, q)), x),
                 _matmul(lax, _mh(lax, q), q)]
    return outs
