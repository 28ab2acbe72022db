"""The array-API backend's convolution, windowed reductions, pooling derivatives, generic
reduce, 64-bit mulhi, ragged_dot and host callbacks, on array-api-strict, against real JAX (and
the numpy_ref oracle where JAX and the oracle part ways). Run with the package importable:

    pytest contrib/refjax-array-api/tests/test_rules_vs_jax.py
"""
import jax
import numpy as np
import pytest
from jax._src.lax.windowed_reductions import _select_and_scatter as jax_select_and_scatter

import refjax
from refjax.backends import register_backend
from refjax.core.primitives.windowed import select_and_scatter
from refjax_array_api.backend import ArrayApiStrictBackend

register_backend("array_api", ArrayApiStrictBackend)


def _run(backend, fn, *args):
    with refjax.backend(backend):
        out = fn(refjax, *args)
    return [np.asarray(o) for o in jax.tree_util.tree_leaves(out)]


def _vs_jax(fn, *args):
    """fn on the array-api-strict backend and on real JAX, as lists of NumPy arrays."""
    return _run("array_api", fn, *args), [np.asarray(o) for o in
                                         jax.tree_util.tree_leaves(fn(jax, *args))]


def _assert_same(ours, theirs):
    """Equal dtypes, shapes and values (NaN where NaN), bit for bit."""
    assert len(ours) == len(theirs)
    for a, r in zip(ours, theirs):
        assert (a.dtype, a.shape) == (r.dtype, r.shape)
        np.testing.assert_array_equal(a, r)


RNG = np.random.default_rng(0)


def _ints(shape, lo=-3, hi=4, dtype=np.float32):
    """Small integers (as floats: sums of their products are exact in any order)."""
    return RNG.integers(lo, hi, size=shape).astype(dtype)


X, W = _ints((4, 6, 7, 6), 1) * np.sign(_ints((4, 6, 7, 6))), _ints((3, 2, 2, 6))
X[X == 0] = 2.0  # NHWC and HWIO with 3 feature groups; no zero meets the inf weight below
NHWC = ("NHWC", "HWIO", "NHWC")


def _with_inf(j, w):
    return j.numpy.asarray(w).at[0, 0, 0, 0].set(np.inf)


@pytest.mark.parametrize("fn, w", [
    (lambda j, x, w: j.lax.conv_general_dilated(  # strides, both dilations, negative padding
        x, w, (2, 1), ((2, -1), (1, 3)), (2, 1), (1, 2), ("NHWC", "HWIO", "NCHW"),
        feature_group_count=3), W),
    (lambda j, x, w: j.lax.conv_general_dilated(x, w, (1, 2), "SAME", None, None, NHWC,
                                                batch_group_count=2), _ints((3, 3, 6, 4))),
    (lambda j, x, w: j.lax.conv_general_dilated(  # int8 products and sums wrap as XLA's
        (x * 40).astype(np.int8), (w * 60).astype(np.int8), (1, 1), "VALID", None, None,
        NHWC, feature_group_count=6), _ints((2, 2, 1, 6)))])
def test_convolutions_match_jax(fn, w):
    _assert_same(*_vs_jax(fn, X, w))


@pytest.mark.parametrize("padding, lhs_dilation", [(((2, 2), (0, 0)), None),
                                                  (((0, 0), (0, 0)), (3, 1))])
def test_padding_and_holes_against_an_infinite_weight_follow_the_oracle(padding, lhs_dilation):
    """XLA on CPU sometimes multiplies padding and lhs-dilation holes by the weight (0 * inf
    = NaN); the oracle (and so this backend) lets them contribute nothing. The oracle's
    choice, left to its owners."""
    fn = lambda j, x, w: j.lax.conv_general_dilated(  # noqa: E731
        x, _with_inf(j, w), (1, 1), padding, lhs_dilation, None, NHWC, feature_group_count=3)
    ours, oracle = _run("array_api", fn, X, W), _run("numpy_ref", fn, X, W)
    _assert_same(ours, oracle)
    assert not np.isnan(ours[0]).any() and np.isnan(np.asarray(fn(jax, X, W))).any()


POOL = np.array([[1.0, 3.0, 3.0, -0.0, 2.0], [3.0, 0.0, 5.0, 5.0, -1.0],
                 [np.nan, 2.0, 1.0, 1.0, 4.0], [2.0, 2.0, -np.inf, 0.0, 2.0]], np.float32)
WINDOW = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)))


def _pool(op, init):
    def fn(j, x):
        return j.lax.reduce_window(x, np.float32(init), op(j), **WINDOW)
    return fn


def _keep_first_max(j, a, b):
    """Of two (value, index) pairs the larger value, NaN largest, the smaller index on ties:
    commutative and associative, so the order a window is folded in does not matter (XLA's
    is its own)."""
    nan_a, nan_b = j.numpy.isnan(a[0]), j.numpy.isnan(b[0])
    tie = (a[0] == b[0]) | (nan_a & nan_b)
    keep = (nan_a & ~nan_b) | (a[0] > b[0]) | (tie & (a[1] < b[1]))
    return j.lax.select(keep, a[0], b[0]), j.lax.select(keep, a[1], b[1])


@pytest.mark.parametrize("fn", [
    lambda j, x: j.grad(lambda v: _pool(lambda j: j.lax.max, -np.inf)(j, v).sum())(x),
    lambda j, x: j.grad(lambda v: _pool(lambda j: j.lax.min, np.inf)(j, v).sum())(x),
    lambda j, x: j.jvp(lambda v: _pool(lambda j: j.lax.max, -np.inf)(j, v), (x,),
                       (x * 10 + 1,)),
    lambda j, x: j.lax.reduce_window(  # a user's computation, ints with base dilation
        x.astype(np.int32), np.int32(1), lambda a, b: a * b + 1, (2, 2), (1, 1),
        ((1, 0), (0, 2)), (2, 1), (1, 2)),
    lambda j, x: j.lax.reduce_window(  # two operands: the max and where it is
        (x, j.lax.broadcasted_iota(np.int32, x.shape, 1)), (np.float32(-np.inf), np.int32(-1)),
        lambda a, b: _keep_first_max(j, a, b), (2, 2), (1, 1), "SAME"),
    lambda j, x: j.lax.reduce(  # a generic reduce: the argmax of each row, NaN first
        (x, j.lax.broadcasted_iota(np.int32, x.shape, 1)), (np.float32(-np.inf), np.int32(-1)),
        lambda a, b: _keep_first_max(j, a, b), (1,))])
def test_pooling_derivatives_and_users_reductions_match_jax(fn):
    """Ties select the first element, padding is never selected, NaN wins; a user's
    computation is folded over each window in row-major order from the init value."""
    _assert_same(*_vs_jax(fn, POOL))


def test_select_and_scatter_matches_jax():
    """The generic form with a user's select (le: the last minimum of ties) and scatter (mul)."""
    source = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)
    args = (lambda a, b: a <= b, (2, 3), (1, 2), ((0, 0), (1, 1)), source, np.float32(2.0),
            lambda a, b: a * b)
    with refjax.backend("array_api"):
        ours = np.asarray(select_and_scatter(POOL[:, :5], *args))
    _assert_same([ours], [np.asarray(jax_select_and_scatter(POOL[:, :5], *args))])


def test_64_bit_mulhi_matches_jax_on_edges_and_random_operands():
    with refjax.enable_x64(True), jax.enable_x64(True):
        for dtype in (np.int64, np.uint64):
            info = np.iinfo(dtype)
            edges = np.array([info.min, info.min + 1, 0, 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32,
                              info.max - 1, info.max], dtype)
            values = np.concatenate([edges, RNG.integers(info.min, info.max, 40, dtype,
                                                         endpoint=True)])
            x, y = np.meshgrid(values, values)
            _assert_same(*_vs_jax(lambda j, a, c: j.lax.mulhi(a, c), x, y))


def test_ragged_dot_matches_jax():
    """An empty group, and an inf in one group's rhs, spread to every row as XLA does."""
    lhs = RNG.integers(-3, 4, size=(7, 4)).astype(np.float32)
    rhs = RNG.integers(-3, 4, size=(3, 4, 5)).astype(np.float32)
    sizes = np.array([3, 0, 4], np.int32)
    fn = lambda j, a, c, g: j.lax.ragged_dot(a, c, g)  # noqa: E731
    _assert_same(*_vs_jax(fn, lhs, rhs, sizes))
    rhs[1, 0, 0] = np.inf
    _assert_same(*_vs_jax(fn, lhs, rhs, sizes))


def test_host_callbacks_print_and_return_as_jax(capsys):
    """debug_print's text, pure_callback under jit and vmap, io_callback's side effects in
    order, debug_callback's Arrays on this backend; a wrong result shape is JAX's error."""
    def program(j, x):
        j.debug.print("x={x} sum={s}", x=x, s=x.sum())
        y = j.pure_callback(lambda v: np.sort(np.asarray(v))[::-1].copy(),
                            j.ShapeDtypeStruct(x.shape, x.dtype), x)
        return j.vmap(lambda r: j.pure_callback(
            lambda v: np.asarray(v) * 2, j.ShapeDtypeStruct(r.shape, r.dtype), r,
            vmap_method="sequential"))(y[None])
    x = np.array([2.0, -1.0, 5.0], np.float32)
    ours = _run("array_api", lambda j, v: j.jit(lambda u: program(j, u))(v), x)
    printed = capsys.readouterr().out
    theirs = jax.jit(lambda u: program(jax, u))(x)
    jax.effects_barrier()
    assert printed == capsys.readouterr().out == "x=[ 2. -1.  5.] sum=6.0\n"
    _assert_same(ours, [np.asarray(theirs)])
    seen = []
    with refjax.backend("array_api"):
        refjax.debug.callback(lambda v: seen.append(type(v._buf).__module__), x)
        refjax.experimental.io_callback(lambda v: seen.append(float(v)), None, np.float32(3))
    assert seen == ["array_api_strict._array_object", 3.0]
    bad = lambda j: j.pure_callback(lambda v: np.zeros(2, np.float32),  # noqa: E731
                                    j.ShapeDtypeStruct((3,), np.float32), x)
    with pytest.raises(Exception) as theirs_error:
        np.asarray(bad(jax))
    with refjax.backend("array_api"), pytest.raises(Exception) as ours_error:
        np.asarray(bad(refjax))
    assert type(ours_error.value).__name__ == type(theirs_error.value).__name__
    assert "Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)" in \
        str(ours_error.value) and "Expected: (3,), Actual: (2,)" in str(theirs_error.value)


def test_zero_dimensional_results_on_numpys_namespace_match_jax():
    """NumPy's namespace returns NumPy scalars (no DLPack) for 0-d results: made arrays."""
    from refjax_array_api.backend import ArrayApiNumpyBackend
    register_backend("array_api_numpy", ArrayApiNumpyBackend)
    fn = lambda j, x: j.jit(lambda v: (j.numpy.sin(v) + 1, v.sum() * 2))(x)  # noqa: E731
    x = np.float32(0.5)
    _assert_same(_run("array_api_numpy", fn, x), [np.asarray(o) for o in fn(jax, x)])
