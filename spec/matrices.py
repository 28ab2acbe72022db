"""What the linear-algebra spec entries share: matrix strategies (built from a drawn seed so
that every draw is a generic matrix: well-conditioned, with separated eigenvalues or
singular values where derivatives need them), the half-precision reference (JAX's CPU
kernels have none), and the normalisations that make decompositions with sign or phase
freedom comparable (written once against the numpy namespace of refjax or of JAX)."""
import numpy as np
from hypothesis import strategies as st

from .base import FLOAT, COMPLEX, Arg, kind, np_dtype, weak_flag

DTYPES = FLOAT + COMPLEX
FLOATS = FLOAT
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


# ---------------------------------------------------------------- normalisations

def phase_normalized(jnp, v):
    """v's columns times the conjugate phase (sign, if real) of their largest entry: the
    same for every choice of phase a decomposition may make."""
    return v * jnp.conj(_phase(jnp, v))


def _phase(jnp, v):
    """The phase (sign) of each column's largest entry, as a row [..., 1, n]."""
    if v.size == 0:
        return jnp.ones(v.shape[:-2] + (1, v.shape[-1]), v.dtype)
    k = jnp.argmax(jnp.abs(v), axis=-2)
    pivot = jnp.take_along_axis(v, jnp.expand_dims(k, -2), axis=-2)
    return pivot / jnp.abs(pivot)


def svd_invariants(jnp, s, u, vt, k):
    """s, the first k singular vectors with u's phases normalised (vt's rows follow them),
    and the projectors onto the remaining columns of u and rows of vt (any basis of those
    subspaces is as good as another)."""
    u1, vt1 = u[..., :, :k], vt[..., :k, :]
    phase = _phase(jnp, u1)
    u1, vt1 = u1 * jnp.conj(phase), vt1 * jnp.swapaxes(phase, -1, -2)
    outs = [s, u1, vt1]
    if u.shape[-1] > k:
        u2 = u[..., :, k:]
        outs.append(u2 @ jnp.conj(jnp.swapaxes(u2, -1, -2)))
    if vt.shape[-2] > k:
        v2 = jnp.conj(jnp.swapaxes(vt[..., k:, :], -1, -2))
        outs.append(v2 @ jnp.conj(jnp.swapaxes(v2, -1, -2)))
    return outs


def schur_invariants(jnp, x, t, q=None):
    """What every Schur form of x shares: the real parts of t's diagonal sorted (its 2x2
    blocks, for real x, hold a conjugate pair's real part twice), the imaginary parts too,
    t's zeros below the first subdiagonal; with q: q t q^H == x and q^H q == I."""
    diag = jnp.diagonal(t, axis1=-2, axis2=-1)
    outs = [jnp.sort(jnp.real(diag), axis=-1), jnp.sort(jnp.imag(diag), axis=-1),
            jnp.tril(t, -2)]
    if q is not None:
        qh = jnp.conj(jnp.swapaxes(q, -1, -2))
        outs += [q @ t @ qh - x, qh @ q]
    return outs
