"""Differential tests of the reduction, dot_general and sort primitives against jax.lax:
eager values, dtypes and weak types on the numpy_ref backend, error classes, and the
JVP / transpose / batching rules through refjax.jvp, refjax.vjp and refjax.vmap."""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax_recordings import as_numpy, fingerprint, of_function, recorded
from hypothesis import given, settings, strategies as hst
from jax import lax as jlax
from jax._src.lax.lax import _convert_element_type as _jax_convert  # weak arrays, tests only

import refjax
from refjax import lax
from refjax.backends.base import make_array
from refjax.core.avals import ShapedArray
from refjax.core.primitives.linalg import Precision

# The transformation tests (JVP, VJP, vmap, grad, make_jaxpr) run on both backends; the eager
# primitive tests are numpy_ref's (test_xla_backend compares every primitive across backends).
both_backends = pytest.mark.backends("numpy_ref", "xla")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32, F16, C64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.complex64)
I32, I8, U8, BOOL = np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(bool)
FLOATS = (F32, F16, BF16)
NUMBERS = FLOATS + (I32, I8, U8, C64)
ALL = NUMBERS + (BOOL,)

few = settings(max_examples=25, deadline=None, database=None)


# ---------------------------------------------------------------- values

def _values(seed, shape, dtype, specials=False, zeros=False):
    """Small quantised values (exact in every float type), optionally with NaN/inf/-0.0."""
    rng = np.random.RandomState(seed)
    if dtype == BOOL:
        return np.asarray(rng.rand(*shape) < 0.5)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -6
        return np.asarray(rng.randint(lo, 7, size=shape)).astype(dtype)
    x = rng.randint(-8, 9, size=shape) / 4.0
    if dtype == C64:
        x = x + 1j * (rng.randint(-8, 9, size=shape) / 4.0)
    x = np.asarray(x)
    if zeros:
        x = np.where(rng.rand(*shape) < 0.3, 0.0, x)
    if specials and dtype != C64:
        picks = rng.rand(*shape)
        x = np.select([picks < 0.08, picks < 0.12, picks < 0.16, picks < 0.24],
                      [np.nan, np.inf, -np.inf, -0.0], x)
    return np.asarray(x).astype(dtype)


def _rj(x, weak=False):
    return make_array(x, ShapedArray(x.shape, x.dtype, weak_type=weak))


def _jx(x, weak=False):
    x = jnp.asarray(x)
    return _jax_convert(x, weak_type=True) if weak else x


shapes = hst.lists(hst.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = hst.lists(hst.integers(1, 4), min_size=1, max_size=3).map(tuple)
seeds = hst.integers(0, 2**31 - 1)


def _tolerance(dtype, n=1):
    """(rtol, atol): exact for integers and bools; a few ulps per accumulated term else."""
    if dtype.kind in "biu":
        return 0, 0
    eps = float(ml_dtypes.finfo(np.float32 if dtype == C64 else dtype).eps)
    return 4 * eps, 16 * eps * max(n, 1)


def assert_matches(ours, theirs, n=1):
    """Same shape, dtype and weak type; values equal (NaN-aware) within dtype tolerance."""
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert np.dtype(ours.dtype) == np.dtype(theirs.dtype), (ours.dtype, theirs.dtype)
    assert ours.weak_type == theirs.weak_type, (ours.weak_type, theirs.weak_type)
    a, b = np.asarray(ours), np.asarray(theirs)
    rtol, atol = _tolerance(np.dtype(a.dtype), n)
    if rtol == 0:
        np.testing.assert_array_equal(a, b)
    else:
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- reductions

REDUCERS = {"reduce_sum": NUMBERS, "reduce_prod": NUMBERS, "reduce_max": ALL,
            "reduce_min": ALL, "reduce_and": (BOOL, I32, U8), "reduce_or": (BOOL, I8, U8)}


@few
@given(hst.data())
def test_reducers_match_jax(data):
    name = data.draw(hst.sampled_from(sorted(REDUCERS)))
    dtype = data.draw(hst.sampled_from(REDUCERS[name]))
    shape = data.draw(shapes)
    axes = tuple(data.draw(hst.permutations(range(len(shape))))[:data.draw(
        hst.integers(0, len(shape)))])
    weak = dtype in NUMBERS and data.draw(hst.booleans())
    specials = name in ("reduce_max", "reduce_min") and data.draw(hst.booleans())
    x = _values(data.draw(seeds), shape, dtype, specials=specials)
    ours = getattr(lax, name)(_rj(x, weak), axes)
    theirs = getattr(jlax, name)(_jx(x, weak), axes)
    assert_matches(ours, theirs, n=int(np.prod([shape[a] for a in axes])))


@few
@given(hst.data())
def test_argmax_argmin_match_jax(data):
    name = data.draw(hst.sampled_from(["argmax", "argmin"]))
    dtype = data.draw(hst.sampled_from((F32, F16, BF16, I32, U8, BOOL)))
    shape = data.draw(nonempty_shapes)
    axis = data.draw(hst.integers(0, len(shape) - 1))
    index_dtype = data.draw(hst.sampled_from([np.int32, np.uint8, np.int8]))
    x = _values(data.draw(seeds), shape, dtype, specials=data.draw(hst.booleans()))
    weak = dtype in NUMBERS and data.draw(hst.booleans())
    ours = getattr(lax, name)(_rj(x, weak), axis, index_dtype)
    assert_matches(ours, getattr(jlax, name)(_jx(x, weak), axis, index_dtype))


@few
@given(hst.data())
def test_cumulative_match_jax(data):
    name = data.draw(hst.sampled_from(["cumsum", "cumprod", "cummax", "cummin"]))
    dtype = data.draw(hst.sampled_from(NUMBERS))
    shape = data.draw(shapes.filter(len))
    axis = data.draw(hst.integers(0, len(shape) - 1))
    reverse = data.draw(hst.booleans())
    specials = name in ("cummax", "cummin") and dtype != C64 and data.draw(hst.booleans())
    x = _values(data.draw(seeds), shape, dtype, specials=specials)
    weak = dtype in NUMBERS and data.draw(hst.booleans())
    ours = getattr(lax, name)(_rj(x, weak), axis, reverse)
    assert_matches(ours, getattr(jlax, name)(_jx(x, weak), axis, reverse), n=shape[axis])


def test_reduce_sum_float16_keeps_dtype_and_is_accurate():
    x = np.full((5000,), 0.1, np.float16)
    ours = lax.reduce_sum(x, (0,))
    assert ours.dtype == np.float16
    assert abs(float(ours) - 5000 * float(np.float16(0.1))) <= 0.25


def test_associative_scan_matches_jax_on_pytrees_and_noncommutative_fn():
    m = _values(3, (5, 3, 2, 2), F32)
    for reverse in (False, True):
        ours = lax.associative_scan(
            lambda a, b: lax.dot_general(a, b, (((3,), (2,)), ((0, 1), (0, 1)))), m,
            reverse=reverse)
        np.testing.assert_allclose(ours, jlax.associative_scan(jnp.matmul, m, reverse=reverse),
                                   rtol=1e-6, atol=1e-6)
    pair = (np.arange(5, dtype=np.float32), np.array([1, 3, 2, 5, 4], np.int32))
    ours = lax.associative_scan(lambda a, b: (lax.add(a[0], b[0]), lax.max(a[1], b[1])), pair,
                                reverse=True, axis=-1)
    theirs = jlax.associative_scan(lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), pair,
                                   reverse=True)
    for o, t in zip(ours, theirs):
        assert_matches(o, t)


# ---------------------------------------------------------------- dot_general

@hst.composite
def dot_problems(draw):
    """Random shapes and dimension numbers: labelled dims, each operand's dims permuted."""
    sizes = lambda k: [draw(hst.integers(1, 3)) for _ in range(k)]  # noqa: E731
    nb, nc, nl, nr = (draw(hst.integers(0, 2)) for _ in range(4))
    b, c, fl, fr = sizes(nb), sizes(nc), sizes(nl), sizes(nr)
    lhs = draw(hst.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)]
                                + [("l", i) for i in range(nl)]))
    rhs = draw(hst.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)]
                                + [("r", i) for i in range(nr)]))
    size = {"b": b, "c": c, "l": fl, "r": fr}
    shape = lambda labels: tuple(size[k][i] for k, i in labels)  # noqa: E731
    where = lambda labels, kind, n: tuple(labels.index((kind, i)) for i in range(n))  # noqa: E731
    dnums = ((where(lhs, "c", nc), where(rhs, "c", nc)), (where(lhs, "b", nb), where(rhs, "b", nb)))
    return shape(lhs), shape(rhs), dnums


DOT_DTYPES = [(d, d) for d in ALL] + [(F32, I32), (F32, F16), (I8, U8), (I8, BOOL), (C64, F32),
                                      (F16, BF16), (I32, U8)]


def _same_error_class(ours_fn, jax_fn):
    """Both raise (the same builtin exception class) or both succeed; returns both results."""
    try:
        theirs = jax_fn()
    except (TypeError, ValueError) as e:
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        with pytest.raises(builtin):
            ours_fn()
        return None, None
    return ours_fn(), theirs


@settings(max_examples=40, deadline=None, database=None)
@given(dot_problems(), hst.sampled_from(DOT_DTYPES), seeds,
       hst.sampled_from([None, np.float32, np.int32, np.float16, np.int8]), hst.booleans())
def test_dot_general_matches_jax(problem, dtype_pair, seed, pet, weak):
    lshape, rshape, dnums = problem
    ld, rd = dtype_pair
    a, b = _values(seed, lshape, ld), _values(seed + 1, rshape, rd)
    weak = weak and ld == rd and ld in NUMBERS
    ours, theirs = _same_error_class(
        lambda: lax.dot_general(_rj(a, weak), _rj(b, weak), dnums, preferred_element_type=pet),
        lambda: jlax.dot_general(_jx(a, weak), _jx(b, weak), dnums, preferred_element_type=pet))
    if theirs is not None:
        assert_matches(ours, theirs, n=int(np.prod([lshape[i] for i in dnums[0][0]])))


def test_dot_and_batch_matmul_match_jax():
    x, v = _values(0, (2, 3), F32), _values(1, (3,), F32)
    for args in ((x, x.T.copy()), (x, v), (v, v), (v, x.T.copy())):
        assert_matches(lax.dot(*args), jlax.dot(*args))
    p, q = _values(2, (4, 2, 3), F32), _values(3, (4, 3, 5), F32)
    assert_matches(lax.batch_matmul(p, q), jlax.batch_matmul(p, q))
    assert_matches(lax.dot(x, x.T.copy(), precision=Precision.HIGHEST),
                   jlax.dot(x, x.T, precision=jlax.Precision.HIGHEST))
    jaxpr = str(refjax.make_jaxpr(lambda a: lax.dot(a, a, precision="highest"))(x[:, :2]))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in jaxpr


# ---------------------------------------------------------------- sort

@few
@given(hst.data())
def test_sort_matches_jax(data):
    shape = data.draw(nonempty_shapes)
    n = data.draw(hst.integers(1, 3))
    dts = [data.draw(hst.sampled_from((F32, F16, BF16, I32, U8, BOOL, C64))) for _ in range(n)]
    seed = data.draw(seeds)
    xs = [_values(seed + i, shape, d, specials=data.draw(hst.booleans()))
          for i, d in enumerate(dts)]
    num_keys = data.draw(hst.integers(1, n))
    dimension = data.draw(hst.integers(-len(shape), len(shape) - 1))
    weak = [d in NUMBERS and data.draw(hst.booleans()) for d in dts]
    if n == 1 and data.draw(hst.booleans()):
        ours = [lax.sort(_rj(xs[0], weak[0]), dimension)]
        theirs = [jlax.sort(_jx(xs[0], weak[0]), dimension)]
    else:
        ours = lax.sort([_rj(x, w) for x, w in zip(xs, weak)], dimension, num_keys=num_keys)
        theirs = jlax.sort([_jx(x, w) for x, w in zip(xs, weak)], dimension, num_keys=num_keys)
        assert isinstance(ours, tuple)
    for o, t in zip(ours, theirs):
        assert_matches(o, t)


def test_sort_key_val_is_stable_with_signed_zeros_and_nans():
    keys = np.array([0.0, -0.0, np.nan, 0.0, -np.nan, -1.0], np.float32)
    vals = np.arange(6, dtype=np.int32)
    for o, t in zip(lax.sort_key_val(keys, vals), jlax.sort_key_val(keys, vals)):
        assert_matches(o, t)


# ---------------------------------------------------------------- errors

def _ones(shape, dtype=np.float32):
    return np.ones(shape, dtype)


ERROR_CASES = [
    ("reduce_sum", lambda L: L.reduce_sum(_ones(3, bool), (0,))),
    ("reduce_prod", lambda L: L.reduce_prod(_ones(3, bool), (0,))),
    ("reduce_sum", lambda L: L.reduce_sum(_ones((2, 2)), (2,))),
    ("reduce_sum", lambda L: L.reduce_sum(_ones((2, 2)), (-1,))),
    ("reduce_max", lambda L: L.reduce_max(_ones((2, 2)), (0, 0))),
    ("reduce_and", lambda L: L.reduce_and(_ones(3), (0,))),
    ("argmax", lambda L: L.argmax(_ones(3), 0, np.float32)),
    ("argmax", lambda L: L.argmax(_ones(3), 1, np.int32)),
    ("argmin", lambda L: L.argmin(_ones((0, 2)), 0, np.int32)),
    ("cumsum", lambda L: L.cumsum(_ones(3), -1)),
    ("cumsum", lambda L: L.cumsum(_ones(3), 1)),
    ("cumsum", lambda L: L.cumsum(_ones(3, bool), 0)),
    ("cummax", lambda L: L.cummax(_ones(3, bool), 0)),
    ("dot_general", lambda L: L.dot_general(_ones((2, 3)), _ones((2, 2)),
                                            (((1,), (0,)), ((), ())))),
    ("dot_general", lambda L: L.dot_general(_ones((4, 2, 3)), _ones((5, 3, 2)),
                                            (((2,), (1,)), ((0,), (0,))))),
    ("dot_general", lambda L: L.dot_general(_ones((4, 2, 3)), _ones((4, 3, 2)),
                                            (((2,), (1,)), ((0,), ())))),
    ("dot_general", lambda L: L.dot_general(_ones((2, 3)), _ones((3, 2)),
                                            (((2,), (0,)), ((), ())))),
    ("dot_general", lambda L: L.dot_general(_ones((3, 3)), _ones((3, 3)),
                                            (((0, 0), (0, 1)), ((), ())))),
    ("dot_general", lambda L: L.dot_general(_ones((3, 3)), _ones((3, 3)),
                                            (((0,), (0,)), ((0,), (1,))))),
    ("preferred_element_type", lambda L: L.dot(_ones((1, 3), np.int32), _ones((3, 1), np.int32),
                                               preferred_element_type=np.int8)),
    ("dot", lambda L: L.dot(_ones((2, 3, 4)), _ones(4))),
    ("batch_matmul", lambda L: L.batch_matmul(_ones(3), _ones((3, 2)))),
    ("batch_matmul", lambda L: L.batch_matmul(_ones((2, 2, 3)), _ones((3, 2)))),
    ("sort", lambda L: L.sort((_ones(4), _ones(3)))),
    ("num_keys", lambda L: L.sort((_ones(4),), num_keys=2)),
    ("num_keys", lambda L: L.sort(_ones(4), num_keys=2)),
    ("sort", lambda L: L.sort(())),
    ("axis", lambda L: L.sort(_ones(()))),
    ("axis", lambda L: L.sort(_ones(3), dimension=1)),
]


@pytest.mark.parametrize("needle,call", ERROR_CASES)
def test_bad_input_raises_jax_error_class(needle, call):
    with pytest.raises((TypeError, ValueError)) as theirs:
        call(jlax)
    builtin = next(c for c in type(theirs.value).__mro__ if c.__module__ == "builtins")
    with pytest.raises(builtin) as ours:
        call(lax)
    assert needle.lower() in str(ours.value).lower(), str(ours.value)


# ---------------------------------------------------------------- JVP, transpose, batching

@hst.composite
def differentiable_cases(draw):
    """(refjax fn, jax fn, float32 args) for each primitive family, ties and zeros included."""
    kind = draw(hst.sampled_from(["reduce", "cumulative", "dot", "sort", "sort_key_val"]))
    seed = draw(seeds)
    if kind == "dot":
        lshape, rshape, dnums = draw(dot_problems())
        return (lambda a, b: lax.dot_general(a, b, dnums),
                lambda a, b: jlax.dot_general(a, b, dnums),
                [_values(seed, lshape, F32), _values(seed + 1, rshape, F32)])
    shape = draw(nonempty_shapes)
    x = _values(seed, shape, F32, zeros=True)
    if kind == "reduce":
        name = draw(hst.sampled_from(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]))
        axes = tuple(sorted(draw(hst.sets(hst.integers(0, len(shape) - 1)))))
        return (lambda v: getattr(lax, name)(v, axes),
                lambda v: getattr(jlax, name)(v, axes), [x])
    axis = draw(hst.integers(0, len(shape) - 1))
    if kind == "cumulative":
        name = draw(hst.sampled_from(["cumsum", "cumprod", "cummax", "cummin"]))
        reverse = draw(hst.booleans())
        return (lambda v: getattr(lax, name)(v, axis, reverse),
                lambda v: getattr(jlax, name)(v, axis, reverse), [x])
    if kind == "sort_key_val":
        keys = _values(seed + 2, shape, I32)
        return (lambda v: lax.sort_key_val(keys, v, axis)[1],
                lambda v: jlax.sort_key_val(keys, v, axis)[1], [x])
    num_keys = draw(hst.integers(1, 2))
    y = _values(seed + 1, shape, F32)
    return (lambda a, b: lax.sort((a, b), axis, num_keys=num_keys),
            lambda a, b: jlax.sort((a, b), axis, num_keys=num_keys), [x, y])


def _close(ours, theirs):
    for o, t in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5, atol=1e-5)


@both_backends
@settings(max_examples=20, deadline=None, database=None)
@given(differentiable_cases(), seeds)
def test_jvp_matches_jax(case, seed):
    f_rj, f_jx, args = case
    tangents = [_values(seed + i, a.shape, F32) for i, a in enumerate(args)]
    _close(refjax.jvp(f_rj, args, tangents), recorded(
        "jvp", lambda: as_numpy(jax.jvp(f_jx, args, tangents)),
        fingerprint(of_function(f_jx), args, tangents)))


@both_backends
@settings(max_examples=20, deadline=None, database=None)
@given(differentiable_cases(), seeds)
def test_vjp_matches_jax(case, seed):
    f_rj, f_jx, args = case
    def cotangents(out):
        return jax.tree.map(lambda o: _values(seed, o.shape, F32), out)

    def on_jax():
        out, pullback = jax.vjp(f_jx, *args)
        return as_numpy((out, pullback(cotangents(out))))
    out, pulled = recorded("vjp", on_jax, fingerprint(of_function(f_jx), args, seed))
    ours_out, ours_pullback = refjax.vjp(f_rj, *args)
    _close(ours_out, out)
    _close(ours_pullback(cotangents(out)), pulled)


@both_backends
@settings(max_examples=20, deadline=None, database=None)
@given(differentiable_cases(), hst.data())
def test_vmap_matches_jax(case, data):
    f_rj, f_jx, args = case
    size = data.draw(hst.integers(1, 3))
    in_axes, batched = [], []
    for i, a in enumerate(args):
        axis = data.draw(hst.sampled_from([None] + list(range(a.ndim + 1))))
        stacked = np.stack([_values(i + k, a.shape, F32) for k in range(size)], axis or 0)
        in_axes.append(axis)
        batched.append(a if axis is None else stacked)
    if all(ax is None for ax in in_axes):
        in_axes[0], batched[0] = 0, np.stack([args[0]] * size)
    _close(refjax.vmap(f_rj, in_axes)(*batched), jax.vmap(f_jx, in_axes)(*batched))


@both_backends
@few
@given(hst.data())
def test_vmap_of_nondifferentiable_reductions_matches_jax(data):
    name = data.draw(hst.sampled_from(["argmax", "argmin", "reduce_and", "reduce_or"]))
    dtype = I32 if name.startswith("arg") else BOOL
    shape = data.draw(nonempty_shapes.filter(lambda s: len(s) >= 2))
    x = _values(data.draw(seeds), shape, dtype)
    in_axis = data.draw(hst.integers(0, len(shape) - 1))
    axis = data.draw(hst.integers(0, len(shape) - 2))
    if name.startswith("arg"):
        f_rj = lambda v: getattr(lax, name)(v, axis, np.int32)  # noqa: E731
        f_jx = lambda v: getattr(jlax, name)(v, axis, np.int32)  # noqa: E731
    else:
        f_rj = lambda v: getattr(lax, name)(v, (axis,))  # noqa: E731
        f_jx = lambda v: getattr(jlax, name)(v, (axis,))  # noqa: E731
    assert_matches(refjax.vmap(f_rj, in_axis)(x), jax.vmap(f_jx, in_axis)(x))


@both_backends
def test_reduce_prod_derivative_with_zeros_has_no_nans():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]], np.float32)
    ours = refjax.grad(lambda v: lax.reduce_prod(v, (0, 1)))(x)
    np.testing.assert_array_equal(ours, np.zeros_like(x))
    ours = refjax.grad(lambda v: lax.reduce_sum(lax.reduce_prod(v, (1,)), (0,)))(x)
    np.testing.assert_array_equal(ours, jax.grad(lambda v: jlax.reduce_prod(v, (1,)).sum())(x))


@both_backends
def test_integer_and_boolean_outputs_have_zero_tangents():
    x = _values(0, (3, 4), F32)
    for f in (lambda v: lax.argmax(v, 1, np.int32), lambda v: lax.reduce_or(lax.gt(v, 0.0), (0,))):
        _, t = refjax.jvp(f, (x,), (x,))
        assert np.asarray(t).dtype == jax.dtypes.float0


@both_backends
def test_jaxprs_print_like_jax():
    x = np.ones((2, 3), np.float32)
    cases = [("reduce_sum", ((0, 1),)), ("reduce_max", ((1,),)), ("argmax", (1, np.int32)),
             ("cumsum", (1,)), ("cummax", (1, True)), ("sort", ())]
    for name, params in cases:
        ours = str(refjax.make_jaxpr(lambda v: getattr(lax, name)(v, *params))(x))
        theirs = str(jax.make_jaxpr(lambda v: getattr(jlax, name)(v, *params))(x))
        assert ours.split() == theirs.split(), (ours, theirs)


def test_sort_transpose_rejects_keys():
    from refjax.core.primitives.sorting import sort_p
    from refjax.core.transforms.ad import UndefinedPrimal
    aval = ShapedArray((3,), np.float32)
    with pytest.raises(ValueError, match="keys"):
        sort_p.transpose([None], UndefinedPrimal(aval), dimension=0, is_stable=True, num_keys=1)


def test_all_families_have_every_rule():
    from refjax.core.primitives import linalg, reductions, sorting
    prims = [reductions.reduce_sum_p, reductions.reduce_max_p, reductions.reduce_min_p,
             reductions.reduce_prod_p, reductions.reduce_and_p, reductions.reduce_or_p,
             reductions.argmax_p, reductions.argmin_p, reductions.cumsum_p, reductions.cumprod_p,
             reductions.cummax_p, reductions.cummin_p, linalg.dot_general_p, sorting.sort_p]
    backend = refjax.get_backend("numpy_ref")
    for p in prims:
        assert p.abstract_eval and p.jvp and p.batch and backend.rule(p), p
    for p in (reductions.reduce_sum_p, reductions.cumsum_p, linalg.dot_general_p, sorting.sort_p):
        assert p.transpose, p
