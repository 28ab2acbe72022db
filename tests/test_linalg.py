"""lax.linalg beyond the generic property suite: the outputs LAPACK's conventions fix equal
JAX's, the invariants of those it leaves free, JAX's error classes (with messages naming the
operation and the shapes), the places where refjax does better than JAX 0.10.2 (each test
shows what JAX does), perturb_singular, pivots out of range, weak types, and custom_root /
custom_linear_solve as user APIs."""
import jax
import numpy as np
import pytest

import refjax
from refjax.lax import linalg as rl
from refjax.spec.checks import enable_x64

jl = jax.lax.linalg
both_backends = pytest.mark.backends("numpy_ref", "xla")
EPS = 1e-6


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def _rng(seed=0):
    return np.random.RandomState(seed)


def _spd(n=4, seed=0, complex_=False):
    x = _rng(seed).standard_normal((n, n)) + (1j * _rng(seed + 1).standard_normal((n, n))
                                              if complex_ else 0)
    return x @ x.conj().T + n * np.eye(n)


def _close(ours, theirs, rtol=1e-10, atol=1e-12):
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype), (a, b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _fd(f, x, t):
    """Central finite difference of f at x along t (f on NumPy values)."""
    return (np.asarray(f(x + EPS * t)) - np.asarray(f(x - EPS * t))) / (2 * EPS)


def _compiled(module, f):
    """f jitted for JAX (whose op-by-op dispatch compiles each operation) and for refjax on
    xla; eager on numpy_ref."""
    if module is jax or refjax.current_backend_name() == "xla":
        return module.jit(f)
    return f


def _jvp_error(module, f, x, t):
    """max |J t - finite differences| of `module`.jvp(f)."""
    _, jv = _compiled(module, lambda x, t: module.jvp(f, (x,), (t,)))(x, t)
    return np.abs(np.asarray(jv) - _fd(f, x, t)).max()


# ---------------------------------------------------------------- outputs and invariants

@both_backends
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_lapack_fixed_outputs_equal_jax(dtype):
    """LU's pivoting, QR's Householder signs, Cholesky's positive diagonal and geev's
    eigenvector normalisation are conventions LAPACK fixes: refjax returns JAX's outputs."""
    x = _rng().standard_normal((2, 4, 3)).astype(dtype)
    square = x[..., :3, :]
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else {}
    _close(rl.lu(x), jl.lu(x), **tol)
    _close(rl.qr(x), jl.qr(x), **tol)
    _close(rl.qr(x, pivoting=True, full_matrices=False),
           jl.qr(x, pivoting=True, full_matrices=False), **tol)
    _close(rl.cholesky(_spd().astype(dtype)), jl.cholesky(_spd().astype(dtype)), **tol)
    w, vl, vr = rl.eig(square)
    _close([w, vl, vr], jl.eig(square), **tol)
    vr = np.asarray(vr)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, rtol=1e-5)
    largest = np.take_along_axis(vr, np.abs(vr).argmax(-2)[..., None, :], -2)
    np.testing.assert_allclose(largest.imag, 0, atol=1e-6)


@both_backends
@pytest.mark.parametrize("complex_", [False, True])
def test_free_choices_leave_the_invariants(complex_):
    """eigh, svd and schur choose phases and bases LAPACK leaves free: what is invariant
    holds (reconstruction, orthogonality, spectra against NumPy)."""
    rng = _rng(5)
    a = rng.standard_normal((4, 3)) + (1j * rng.standard_normal((4, 3)) if complex_ else 0)
    u, s, vt = map(np.asarray, rl.svd(a))
    np.testing.assert_allclose(u[:, :3] * s @ vt, a, atol=1e-12)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    h = _spd(4, 2, complex_)
    v, w = map(np.asarray, rl.eigh(h))
    np.testing.assert_allclose((v * w) @ v.conj().T, h, atol=1e-11)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=1e-12)
    sq = a[:3]
    t, q = map(np.asarray, rl.schur(sq))
    np.testing.assert_allclose(q @ t @ q.conj().T, sq, atol=1e-12)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(3), atol=1e-12)
    below = np.tril(t, -1 if complex_ else -2)
    np.testing.assert_array_equal(below, 0)


@both_backends
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_inputs_give_jax_results(bad):
    """A factorization that fails gives NaNs, as JAX's kernels do (eig's refuses any
    non-finite input: LAPACK's geev can hang on them)."""
    x = np.array([[1.0, bad], [2.0, 3.0]])
    for name in ("cholesky", "eigh", "svd", "eig", "qr", "lu", "schur", "hessenberg"):
        theirs = jax.tree.leaves(getattr(jl, name)(x))
        ours = jax.tree.leaves(getattr(rl, name)(x))
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)


@both_backends
def test_svd_by_qr_iterations_matches_jax():
    a = _rng(8).standard_normal((4, 3))
    _close(rl.svd(a, algorithm=rl.SvdAlgorithm.QR), jl.svd(a, algorithm=jl.SvdAlgorithm.QR))


# ---------------------------------------------------------------- errors, as JAX raises them

_F = np.ones((2, 3))
_INT = np.eye(2, dtype=np.int32)
ERRORS = [
    ("cholesky of a non-square matrix", lambda m: m.lax.linalg.cholesky(_F), TypeError,
     ["cholesky", "(2, 3)"]),
    ("cholesky_p of a non-square matrix", lambda m: m.lax.linalg.cholesky_p.bind(_F),
     ValueError, ["cholesky", "(2, 3)"]),
    ("eigh of a non-square matrix",
     lambda m: m.lax.linalg.eigh(_F, symmetrize_input=False), ValueError, ["eigh", "(2, 3)"]),
    ("eig of a non-square matrix", lambda m: m.lax.linalg.eig(_F), ValueError, ["eig", "(2, 3)"]),
    ("schur of a non-square matrix", lambda m: m.lax.linalg.schur(_F), ValueError,
     ["schur", "(2, 3)"]),
    ("hessenberg of a non-square matrix", lambda m: m.lax.linalg.hessenberg(_F), ValueError,
     ["hessenberg", "(2, 3)"]),
    ("tridiagonal of a non-square matrix", lambda m: m.lax.linalg.tridiagonal(_F), ValueError,
     ["tridiagonal", "(2, 3)"]),
    ("triangular_solve of a non-square a",
     lambda m: m.lax.linalg.triangular_solve(_F, np.ones((3, 3))), ValueError,
     ["triangular_solve", "(2, 3)"]),
    ("triangular_solve with b not matching",
     lambda m: m.lax.linalg.triangular_solve(np.eye(2), np.ones((3, 3)), left_side=True),
     ValueError, ["triangular_solve", "(2, 2)", "(3, 3)"]),
    ("lu of integers", lambda m: m.lax.linalg.lu(_INT), TypeError, ["lu", "int32"]),
    ("svd of integers", lambda m: m.lax.linalg.svd(_INT), TypeError, ["svd", "int32"]),
    ("qr of booleans", lambda m: m.lax.linalg.qr(_INT > 0), TypeError, ["qr", "bool"]),
    ("eigh of integers without symmetrizing",
     lambda m: m.lax.linalg.eigh(_INT, symmetrize_input=False), TypeError, ["eigh", "int32"]),
    ("svd of a vector", lambda m: m.lax.linalg.svd(np.ones(3)), TypeError, ["svd", "(3,)"]),
    ("triangular_solve of mixed dtypes",
     lambda m: m.lax.linalg.triangular_solve(np.eye(2), np.eye(2, dtype=np.complex128)),
     TypeError, ["triangular_solve", "float64", "complex128"]),
    ("different numbers of batch dims",
     lambda m: m.lax.linalg.triangular_solve(np.eye(2), np.ones((3, 2, 2))), TypeError,
     ["triangular_solve", "batch dimensions"]),
    ("tridiagonal_solve with b not matching",
     lambda m: m.lax.linalg.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(3), np.ones((2, 1))),
     TypeError, ["tridiagonal_solve"]),
    ("a permutation shorter than the pivots",
     lambda m: m.lax.linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2), ValueError,
     ["lu_pivots_to_permutation", "2", "3"]),
    ("householder_product of a wide matrix",
     lambda m: m.lax.linalg.householder_product(_F, np.ones(2)), ValueError, ["(2, 3)"]),
    ("svd with full_matrices and a subset",
     lambda m: m.lax.linalg.svd(_F.T, subset_by_index=(0, 1)), ValueError,
     ["full_matrices", "subset_by_index"]),
    ("eigh by Jacobi on CPU",
     lambda m: m.lax.linalg.eigh(np.eye(2), implementation=m.lax.linalg.EighImplementation.JACOBI),
     NotImplementedError, ["Jacobi"]),
    ("svd by the polar algorithm on CPU",
     lambda m: m.lax.linalg.svd(np.eye(2), algorithm=m.lax.linalg.SvdAlgorithm.POLAR),
     NotImplementedError, ["Polar"]),
    ("eig by MAGMA on CPU",
     lambda m: m.lax.linalg.eig(np.eye(2), implementation=m.lax.linalg.EigImplementation.MAGMA),
     ValueError, ["lapack"]),
    ("schur sorting its eigenvalues", lambda m: m.lax.linalg.schur(np.eye(2), sort_eig_vals=True),
     NotImplementedError, ["sort"]),
]


@both_backends
@pytest.mark.parametrize("what, call, error, words", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_have_jax_classes_and_name_the_operation(what, call, error, words):
    with pytest.raises(error) as theirs:
        call(jax)
    with pytest.raises(error) as ours:
        call(refjax)
    for word in words:
        assert word in str(ours.value), f"{what}: {word!r} not in {ours.value}"
    del theirs
    # nothing is left behind: the same program without the error runs, under jit too
    assert refjax.jit(lambda x: rl.cholesky(x))(np.eye(2)).shape == (2, 2)


@both_backends
def test_mismatched_batch_dims_raise_a_clear_value_error():
    """JAX raises ValueError("Batching dimension 0_0 corresponds to two sizes: 3 and 4");
    refjax's ValueError names the operation and the operands' shapes."""
    a, b = np.ones((3, 2, 2)), np.ones((4, 2, 2))
    with pytest.raises(ValueError, match="Batching dimension 0_0"):
        jl.triangular_solve(a, b)
    with pytest.raises(ValueError, match=r"triangular_solve.*\(3, 2, 2\), \(4, 2, 2\)"):
        rl.triangular_solve(a, b)
    with pytest.raises(ValueError, match=r"tridiagonal_solve.*\(3, 2\)"):
        rl.tridiagonal_solve(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2, 1)))


@pytest.mark.parametrize("call, error", [
    (lambda m: m.lax.linalg.symmetric_product(np.ones((2, 3)), np.ones((3, 3))), ValueError),
    (lambda m: m.lax.linalg.cholesky_update(np.eye(2), np.ones(3)), ValueError)])
def test_messages_name_the_operation_where_jax_does_not(call, error):
    """JAX calls symmetric_product "symmetric_update" and leaves cholesky_update unnamed."""
    with pytest.raises(error) as theirs:
        call(jax)
    with pytest.raises(error) as ours:
        call(refjax)
    name = "symmetric_product" if "symmetric" in str(theirs.value) else "cholesky_update"
    assert name not in str(theirs.value) and name in str(ours.value)


NONDIFF = [("schur", lambda m, x: m.lax.linalg.schur(x)[0]),
           ("hessenberg", lambda m, x: m.lax.linalg.hessenberg(x)[0]),
           ("tridiagonal", lambda m, x: m.lax.linalg.tridiagonal(x)[0]),
           ("householder_product", lambda m, x: m.lax.linalg.householder_product(x, x[0, :2])),
           ("symmetric_product", lambda m, x: m.lax.linalg.symmetric_product(x, x))]


@pytest.mark.parametrize("name, f", NONDIFF, ids=[n for n, _ in NONDIFF])
def test_what_jax_does_not_differentiate_raises_as_jax(name, f):
    x = _spd(3)
    for module in (jax, refjax):
        with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}'"):
            module.jvp(lambda x: f(module, x), (x,), (x,))


def test_derivative_refusals_match_jax():
    """Eigenvector derivatives of eig need enable_eigvec_derivs; svd's full_matrices extra
    columns have none; in both, as in JAX, NotImplementedError."""
    x, t = _rng().standard_normal((3, 3)), _rng(1).standard_normal((3, 3))
    wide = _rng().standard_normal((2, 3))
    for module in (jax, refjax):
        with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
            module.jvp(lambda x: module.lax.linalg.eig(x)[2], (x,), (t,))
        with pytest.raises(NotImplementedError, match="full matrices"):
            module.jvp(lambda x: module.lax.linalg.svd(x)[0], (wide,), (wide,))


@both_backends
def test_eig_is_differentiated_in_reverse_mode_as_jax():
    """JAX 0.10.2 differentiates eig in reverse mode too (its JVP is linear in the tangent,
    through custom_linear_solve): eigenvalues and, opted in, eigenvectors."""
    x = _rng(6).standard_normal((3, 3))

    def loss(m, vectors):
        def f(x):
            outs = m.lax.linalg.eig(x, compute_left_eigenvectors=False,
                                    compute_right_eigenvectors=vectors, enable_eigvec_derivs=True)
            return sum(m.numpy.sum(m.numpy.real(o * m.numpy.conj(o)) * (i + 1))
                       for i, o in enumerate(outs))
        return f
    for vectors in (False, True):
        _close(_compiled(refjax, refjax.grad(loss(refjax, vectors)))(x),
               _compiled(jax, jax.grad(loss(jax, vectors)))(x), rtol=1e-8, atol=1e-10)


def test_batch_sharded_operands_keep_their_layout():
    """A batch sharded over a mesh axis stays sharded along it (the matrix dims replicated),
    on both backends and in JAX."""
    x = np.stack([_spd(3, s) for s in range(4)])
    layouts = []
    for backend in ("numpy_ref", "xla"):
        with refjax.backend(backend):
            mesh = refjax.make_mesh((2,), ("b",))
            sharded = refjax.device_put(x, refjax.NamedSharding(mesh, refjax.P("b")))
            v, w = rl.eigh(sharded)
            layouts.append([tuple(o.sharding.spec) for o in (v, w, rl.cholesky(sharded))])
            _close([w], [jl.eigh(x)[1]])
    mesh = jax.make_mesh((2,), ("b",))
    theirs = jax.device_put(x, jax.sharding.NamedSharding(mesh, jax.P("b")))
    v, w = jl.eigh(theirs)
    expected = [tuple(o.sharding.spec) for o in (v, w, jl.cholesky(theirs))]
    assert layouts[0] == layouts[1]
    assert [s + (None,) * (3 - len(s)) for s in layouts[0]] == \
        [s + (None,) * (3 - len(s)) for s in expected]


# ---------------------------------------------------------------- better than JAX 0.10.2

def test_hessenberg_of_an_empty_matrix():
    """JAX types the taus of a 0 x 0 hessenberg as f64[-1] and fails to lower it."""
    assert "f64[-1]" in str(jax.make_jaxpr(jl.hessenberg)(np.ones((0, 0))))
    for backend in ("numpy_ref", "xla"):
        with refjax.backend(backend):
            a, taus = rl.hessenberg(np.ones((0, 0)))
            assert a.shape == (0, 0) and taus.shape == (0,)


@both_backends
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_is_computed_wide_and_rounded(dtype):
    """JAX's CPU kernels have no half-precision LAPACK (NotImplementedError); refjax computes
    in wider floats and rounds once: JAX's float32 result, rounded."""
    import ml_dtypes
    half = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = _spd(3).astype(half)
    with pytest.raises(NotImplementedError, match="Unsupported dtype"):
        jl.cholesky(x)
    for ours, theirs in [(rl.cholesky(x), jl.cholesky(x.astype(np.float32))),
                         (rl.eigh(x)[1], jl.eigh(x.astype(np.float32))[1]),
                         (rl.svd(x, compute_uv=False), jl.svd(x.astype(np.float32),
                                                                compute_uv=False))]:
        assert ours.dtype == half
        np.testing.assert_allclose(np.asarray(ours, np.float32),
                                   np.asarray(theirs.astype(half), np.float32), rtol=1e-2)


@both_backends
def test_subsets_of_eigenpairs_and_singular_triplets():
    """JAX's CPU kernels refuse subset_by_index (NotImplementedError) and JAX defines no
    derivative of a partial eigh; refjax slices the full decomposition, and differentiates
    it (the slice of the full derivative, checked by finite differences)."""
    h, t = _spd(4), _rng(3).standard_normal((4, 4))
    with pytest.raises(NotImplementedError):
        jl.eigh(h, subset_by_index=(1, 3))
    v, w = rl.eigh(h, subset_by_index=(1, 3))
    full_v, full_w = jl.eigh(h)
    _close(w, full_w[1:3])
    _close(np.abs(np.asarray(v)), np.abs(np.asarray(full_v[:, 1:3])))

    def top(x):
        return rl.eigh(x, subset_by_index=(2, 4))[1]
    assert _jvp_error(refjax, top, h, t + t.T) < 1e-6
    a = _rng(4).standard_normal((4, 3))
    s = rl.svd(a, full_matrices=False, compute_uv=False, subset_by_index=(0, 2))
    _close(s, jl.svd(a, compute_uv=False)[:2])


@both_backends
def test_pivoted_qr_derivative_of_a_wide_matrix():
    """x[:, p] = q r: JAX 0.10.2 differentiates r's last columns against the unpivoted x
    (its JVP is off from finite differences); refjax reads x pivoted."""
    x, t = _rng().standard_normal((2, 4)), _rng(1).standard_normal((2, 4))

    def r_of(module):
        return lambda x: module.lax.linalg.qr(x, pivoting=True)[1]
    assert _jvp_error(jax, r_of(jax), x, t) > 0.1
    assert _jvp_error(refjax, r_of(refjax), x, t) < 1e-6


@both_backends
@pytest.mark.parametrize("name", ["cholesky", "eigh"])
def test_derivative_of_the_triangle_read(name):
    """Without symmetrize_input, cholesky and eigh read one triangle of x; refjax's
    derivative is that of the triangle they read (JAX's assumes a symmetric tangent and
    is off from finite differences for others)."""
    x, t = _spd(3), _rng(1).standard_normal((3, 3))

    def f_of(module):
        fn = getattr(module.lax.linalg, name)
        return lambda x: jax.tree.leaves(fn(x, symmetrize_input=False))[-1]
    assert _jvp_error(jax, f_of(jax), x, t) > 0.01
    assert _jvp_error(refjax, f_of(refjax), x, t) < 1e-6


@both_backends
def test_cholesky_update_batches_under_vmap():
    """JAX has no batching rule for cholesky_update; refjax's is a loop over the batch."""
    rs = np.stack([np.linalg.cholesky(_spd(3, s)).T for s in range(3)])
    ws = _rng(7).standard_normal((3, 3))
    with pytest.raises(NotImplementedError, match="cholesky_update"):
        jax.vmap(jl.cholesky_update)(rs, ws)
    ours = refjax.vmap(rl.cholesky_update)(rs, ws)
    _close(ours, np.stack([jl.cholesky_update(r, w) for r, w in zip(rs, ws)]))
    for r, w, new in zip(rs, ws, np.asarray(ours)):
        np.testing.assert_allclose(new.T @ new, r.T @ r + np.outer(w, w), atol=1e-12)


def test_symmetric_product_of_weak_float32_under_x64():
    """JAX's CPU lowering of symmetric_product computes weakly-typed float32 operands in
    float64 under x64 and fails to compile; refjax keeps their dtype (and weak type)."""
    from jax._src.lax.lax import _convert_element_type  # weak JAX arrays, tests only
    from refjax.spec.base import refjax_array
    a = np.array([[0.5, 1.0]], np.float32)
    with pytest.raises(ValueError, match="verifier errors"):
        jl.symmetric_product(_convert_element_type(a, weak_type=True),
                             _convert_element_type(a @ a.T, weak_type=True))
    ours = rl.symmetric_product(refjax_array(a, True), refjax_array(a @ a.T, True), alpha=2.0,
                                beta=0.5)
    assert ours.dtype == np.float32 and ours.weak_type
    np.testing.assert_allclose(np.asarray(ours), 2.5 * (a @ a.T), rtol=1e-6)


# ---------------------------------------------------------------- corner cases as JAX

@both_backends
def test_perturbed_tridiagonal_solves_of_singular_systems():
    """perturb_singular moves tiny pivots (JAX's kernel, after LAPACK's xLAGTS): singular
    systems get JAX's finite answers; without it, NaN."""
    systems = [([0.], [0.], [0.], [[1.]]),
               ([0., 1., 0.], [1., 1., 1.], [1., 0., 0.], [[1.], [2.], [3.]]),
               ([0., 0.], [0., 0.], [0., 0.], [[1.], [1.]]),
               ([0., 2., 1.], [1., 1., -1e-30], [3., 1., 0.], [[1.], [2.], [3.]])]
    for system in systems:
        args = [np.asarray(v) for v in system]
        _close(rl.tridiagonal_solve(*args, perturb_singular=True),
               jl.tridiagonal_solve(*args, perturb_singular=True), rtol=1e-12)
    plain = rl.tridiagonal_solve(*[np.asarray(v) for v in systems[1]])
    assert np.isnan(np.asarray(plain)).all()


@both_backends
def test_pivots_out_of_range_read_as_jax_reads_them():
    """A negative pivot counts from the end; one past the end reads the last entry and
    writes nothing (JAX's indexing)."""
    pivots = np.array([[2, -1, 5], [1, 1, 2], [0, -3, 7]], np.int32)
    _close(rl.lu_pivots_to_permutation(pivots, 4), jl.lu_pivots_to_permutation(pivots, 4))


@pytest.mark.parametrize("name, call", [
    ("cholesky", lambda m, x: m.lax.linalg.cholesky_p.bind(x)),
    ("lu", lambda m, x: m.lax.linalg.lu_p.bind(x)),
    ("eigh", lambda m, x: m.lax.linalg.eigh(x, symmetrize_input=False)),
    ("triangular_solve", lambda m, x: m.lax.linalg.triangular_solve(x, x))])
def test_weak_types_follow_jax(name, call):
    """Outputs are weak exactly when every operand is (integer pivots included)."""
    from jax._src.lax.lax import _convert_element_type  # weak JAX arrays, tests only
    from refjax.spec.base import refjax_array
    x = _spd(2)
    for weak in (False, True):
        theirs = call(jax, _convert_element_type(x, weak_type=weak))
        ours = call(refjax, refjax_array(x, weak))
        assert [o.weak_type for o in jax.tree.leaves(ours)] == \
            [o.weak_type for o in jax.tree.leaves(theirs)]


def test_lax_linalg_namespace_has_jax_public_names():
    public = {n for n in dir(jax.lax.linalg) if not n.startswith("_")}
    assert public - set(dir(rl)) == set()
    for name in public:
        if name.endswith("_p"):
            assert getattr(rl, name).name == getattr(jax.lax.linalg, name).name
    for name in ("custom_linear_solve", "custom_root", "linear_solve_p"):
        assert hasattr(refjax.lax, name)
    assert refjax.lax.linear_solve_p.name == jax.lax.linear_solve_p.name


# ---------------------------------------------------------------- qdwh

@both_backends
@pytest.mark.parametrize("case", ["real", "float32", "complex", "few iterations", "padded",
                                  "ill-conditioned"])
def test_qdwh_polar_decomposition_matches_jax(case):
    rng = _rng(9)
    x = {"real": rng.standard_normal((4, 3)), "float32": rng.standard_normal((4, 3)).astype(
        np.float32), "complex": rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
         "few iterations": rng.standard_normal((4, 3)),
         "padded": np.pad(rng.standard_normal((4, 3)), ((0, 2), (0, 1))),
         "ill-conditioned": rng.standard_normal((5, 2)) @ np.diag([1e-6, 1])}[case]
    kw = {"few iterations": {"max_iterations": 2}, "padded": {"dynamic_shape": (4, 3)}}.get(
        case, {})
    u, h, iterations, converged = _compiled(refjax, lambda x: rl.qdwh(x, **kw))(x)
    theirs = jl.qdwh(x, **kw)
    tol = dict(rtol=1e-5, atol=1e-6) if case == "float32" else {}
    _close([u, h], theirs[:2], **tol)
    assert (int(iterations), bool(converged)) == (int(theirs[2]), bool(theirs[3]))
    assert iterations.dtype == theirs[2].dtype and iterations.weak_type == theirs[2].weak_type
    if converged:
        np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), x, atol=1e-5)


def test_qdwh_rejects_wide_matrices_as_jax():
    for module in (jax, refjax):
        with pytest.raises(ValueError, match="M >= N"):
            module.lax.linalg.qdwh(np.ones((2, 3)))


# ---------------------------------------------------------------- custom_root

def _newton_sqrt(m, a):
    """sqrt(a) as the root of x^2 - a found by Newton's method, differentiated implicitly."""
    def f(x):
        return x * x - a

    def solve(f, x0):
        return m.lax.fori_loop(0, 30, lambda i, x: x - f(x) / m.grad(f)(x), x0)
    return m.lax.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))


@both_backends
def test_custom_root_value_and_implicit_gradient():
    a = 2.5
    _close(_compiled(refjax, lambda a: _newton_sqrt(refjax, a))(a),
           _compiled(jax, lambda a: _newton_sqrt(jax, a))(a))
    grad = _compiled(refjax, refjax.grad(lambda a: _newton_sqrt(refjax, a)))(a)
    np.testing.assert_allclose(float(grad), 0.5 / np.sqrt(a), rtol=1e-12)
    _close(grad, _compiled(jax, jax.grad(lambda a: _newton_sqrt(jax, a)))(a))
    grid = np.array([1.0, 4.0, 9.0])
    _close(refjax.jit(refjax.vmap(refjax.grad(lambda a: _newton_sqrt(refjax, a))))(grid),
           0.5 / np.sqrt(grid))


def test_custom_root_with_aux_and_tree_errors():
    def solve(f, x):
        return (x[0] / 2, x[1] / 2), {"iterations": 3}

    def f(x):
        return (2 * x[0] - 1.0, 2 * x[1] - 3.0)
    for module in (jax, refjax):
        sol, aux = module.lax.custom_root(f, (0.0, 0.0), lambda f, x: solve(f, (1.0, 3.0)),
                                          lambda g, y: (y[0] / 2, y[1] / 2), has_aux=True)
        # JAX returns the constants of solve as they are (TypedFloat, TypedInt)
        np.testing.assert_allclose([float(sol[0]), float(sol[1]), int(aux["iterations"])],
                                   [0.5, 1.5, 3])
        with pytest.raises(TypeError, match="f\\(\\) output pytree structure must match"):
            module.lax.custom_root(lambda x: [x], 0.0, lambda f, x: x, lambda g, y: y)


# ---------------------------------------------------------------- custom_linear_solve

def _block_solve(m, a, b, has_aux=False, symmetric=False):
    """A pytree right-hand side (two blocks, each with its own matrix)."""
    def matvec(x):
        return (a[0] @ x[0], a[1] @ x[1])

    def solve(_, y):
        x = (_dense_solve(m, m.lax.stop_gradient(a[0]), y[0]),
             _dense_solve(m, m.lax.stop_gradient(a[1]), y[1]))
        return (x, m.numpy.sum(y[0])) if has_aux else x

    def transpose_solve(_, y):
        x = (_dense_solve(m, m.lax.stop_gradient(a[0]).T, y[0]),
             _dense_solve(m, m.lax.stop_gradient(a[1]).T, y[1]))
        return (x, m.numpy.sum(y[0])) if has_aux else x
    return m.lax.custom_linear_solve(matvec, b, solve, None if symmetric else transpose_solve,
                                     symmetric=symmetric, has_aux=has_aux)


def _dense_solve(m, a, y):
    """a^-1 y: jnp.linalg.solve in JAX, LU and lu_solve in refjax."""
    if m is jax:
        return jax.numpy.linalg.solve(a, y)
    lu, _, perm = rl.lu(a)
    return rl.lu_solve(lu, perm, y[:, None], 0)[:, 0]


def _linear_system():
    rng = _rng(11)
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((2, 2)) + 3 * np.eye(2))
    return a, (rng.standard_normal(3), rng.standard_normal(2))


@both_backends
def test_custom_linear_solve_on_a_pytree_with_gradients():
    a, b = _linear_system()
    _close(_block_solve(refjax, a, b), _block_solve(jax, a, b))
    weights = (np.arange(3.0), np.arange(2.0) - 1)

    def loss(m):
        return lambda a, b: sum(m.numpy.sum(x * w) for x, w in zip(_block_solve(m, a, b),
                                                                  weights))
    _close(_compiled(refjax, refjax.grad(loss(refjax), (0, 1)))(a, b),
           _compiled(jax, jax.grad(loss(jax), (0, 1)))(a, b))

    def tangent(m):
        return _compiled(m, lambda b: m.jvp(lambda b: _block_solve(m, a, b), (b,), (b,)))
    _close(tangent(refjax)(b), tangent(jax)(b))


@both_backends
def test_custom_linear_solve_with_aux_and_under_vmap():
    a, b = _linear_system()
    (x, aux) = _block_solve(refjax, a, b, has_aux=True)
    _close([x, aux], list(_block_solve(jax, a, b, has_aux=True)))
    stacked = (np.stack([b[0], 2 * b[0]]), np.stack([b[1], -b[1]]))
    _close(_compiled(refjax, refjax.vmap(lambda b: _block_solve(refjax, a, b)))(stacked),
           _compiled(jax, jax.vmap(lambda b: _block_solve(jax, a, b)))(stacked))


def test_custom_linear_solve_errors_as_jax():
    a, b = _linear_system()
    for module in (jax, refjax):
        with pytest.raises(ValueError, match="matvec\\(\\) output shapes must match b"):
            module.lax.custom_linear_solve(lambda x: x[:2], b[0], lambda mv, y: y)
        with pytest.raises(TypeError, match="matvec\\(\\) output pytree structure must match"):
            module.lax.custom_linear_solve(lambda x: [x], b[0], lambda mv, y: y)
        with pytest.raises(TypeError, match="transpose_solve required"):
            module.grad(lambda b: module.numpy.sum(module.lax.custom_linear_solve(
                lambda x: a[0] @ x, b, lambda mv, y: _dense_solve(module, a[0], y))))(b[0])


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (2, 0)])
def test_lu_jvp_of_non_square_matrices_as_jax(shape, x64):
    """Rectangular (and empty) LU under jvp pads its factors with zeros of their dtype."""
    x = _rng(3).normal(size=shape)
    t = _rng(4).normal(size=shape)
    ours = refjax.jvp(lambda a: rl.lu(a)[0], (x,), (t,))
    theirs = jax.jvp(lambda a: jax.lax.linalg.lu(a)[0], (x,), (t,))
    for o, e in zip(ours, theirs):
        _close(o, e)
