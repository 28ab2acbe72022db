"""Windowed reductions, the generic reduce, cumlogsumexp and reduce_precision against real
JAX: pooling as stax and flax write it, the computations lax recognises, the order a user's
computation is applied in, max pooling's derivatives, and the cases where refjax does better
than JAX (XLA aborts, late or unclear errors)."""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refjax
import refjax.numpy as rnp
from refjax import lax
from refjax.core.primitives import elementwise as ew
from refjax.spec.base import jax_array, refjax_array
from refjax.spec.checks import assert_close, budget, enable_x64

both_backends = pytest.mark.backends("numpy_ref", "xla")


def _randn(seed, shape, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _same(a, b, tol=(1e-6, 1e-6), what="result"):
    assert np.asarray(a).dtype == np.asarray(b).dtype, (np.asarray(a).dtype, np.asarray(b).dtype)
    assert np.shape(a) == np.shape(b), (np.shape(a), np.shape(b))
    assert_close(a, b, tol, what)


def _names(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def _both(f, *args):
    """f written once for either library: (refjax's result, JAX's)."""
    return f(refjax, lax, rnp, *args), f(jax, jax.lax, jnp, *args)


# ---------------------------------------------------------------- pooling

POOLS = {
    "stax max": lambda jx, lx, n, x: lx.reduce_window(x, -n.inf, lx.max, (1, 2, 2, 1),
                                                    (1, 2, 2, 1), "VALID"),
    "flax max SAME": lambda jx, lx, n, x: lx.reduce_window(x, -n.inf, lx.max, (1, 3, 3, 1),
                                                         (1, 2, 2, 1), "SAME"),
    "min": lambda jx, lx, n, x: lx.reduce_window(x, n.inf, lx.min, (1, 2, 3, 1), (1, 1, 2, 1),
                                               [(0, 0), (1, 1), (0, 2), (0, 0)]),
    "avg": lambda jx, lx, n, x: lx.reduce_window(x, 0.0, lx.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                               "VALID") / 4.0,
    "avg dilated": lambda jx, lx, n, x: lx.reduce_window(x, 0.0, lx.add, (1, 2, 2, 1),
                                                       (1, 1, 2, 1), "SAME_LOWER",
                                                       window_dilation=(1, 2, 1, 1),
                                                       base_dilation=(1, 1, 2, 1)),
    "max base-dilated": lambda jx, lx, n, x: lx.reduce_window(x, -n.inf, lx.max, (1, 3, 2, 1),
                                                            (1, 2, 1, 1), [(0, 0), (1, 0),
                                                                           (2, 1), (0, 0)],
                                                            base_dilation=(1, 2, 2, 1)),
}


@both_backends
def test_max_pool_gradient_with_base_dilation_and_negative_padding():
    """JAX's own VJP fails here (its select_and_scatter_add slices off a negative padding);
    refjax's agrees with JAX's forward-mode derivative."""
    x = _randn(0, (5, 4))

    def loss(lx, n):
        def f(y):
            out = lx.reduce_window(y, -n.inf, lx.max, (3, 2), (2, 1), [(1, 0), (2, -1)],
                                   base_dilation=(2, 2))
            return (out * np.arange(out.size, dtype=np.float32).reshape(out.shape)).sum()
        return f
    with pytest.raises(TypeError):
        jax.grad(loss(jax.lax, jnp))(x)
    _same(refjax.grad(loss(lax, rnp))(x), jax.jacfwd(loss(jax.lax, jnp))(x), (1e-5, 1e-5))


@both_backends
@pytest.mark.parametrize("pool", POOLS, ids=list(POOLS))
def test_pooling_values_gradients_and_staging_match_jax(pool):
    x = _randn(0, (2, 6, 5, 3))
    x[0, 0, :2, 0] = 1.0  # ties: the first maximum takes the gradient, as in XLA
    f = POOLS[pool]
    ours, theirs = _both(lambda jx, lx, n: f(jx, lx, n, x))
    _same(ours, theirs)
    grads = _both(lambda jx, lx, n: jx.grad(lambda y: (f(jx, lx, n, y) ** 2).sum())(x))
    _same(*grads, tol=(1e-5, 1e-6), what="gradient")
    jaxprs = _both(lambda jx, lx, n: jx.make_jaxpr(jx.grad(lambda y: (f(jx, lx, n, y) ** 2).sum()))(x))
    assert _names(jaxprs[0].jaxpr) == _names(jaxprs[1].jaxpr)
    jvps = _both(lambda jx, lx, n: jx.jvp(lambda y: f(jx, lx, n, y), (x,), (x * 3,))[1])
    _same(*jvps, what="jvp")


@both_backends
def test_avg_pool_normalised_by_window_counts_as_stax():
    """stax.AvgPool divides by the number of real elements in each (padded) window."""
    x = _randn(1, (1, 5, 5, 2))

    def avg(jx, lx, n):
        sums = lx.reduce_window(x, 0.0, lx.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        counts = lx.reduce_window(n.ones((5, 5)), 0.0, lx.add, (3, 3), (2, 2), "SAME")
        return sums / counts[None, :, :, None]
    _same(*_both(avg))


def test_monoids_bind_the_specialised_primitives_as_jax():
    x = _randn(0, (4, 3))
    cases = [
        lambda lx, n: lx.reduce_window(x, -n.inf, lx.max, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce_window(x, n.inf, lx.min, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce_window(x, 0.0, lx.add, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce_window(x, 1.0, lx.mul, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce_window(x, 1.0, lx.add, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce_window(x.astype(np.int32), -2**31, lx.max, (2, 1), (1, 1), "VALID"),
        lambda lx, n: lx.reduce(x, 0.0, lx.add, (0,)),
        lambda lx, n: lx.reduce(x, 1.0, lx.mul, (0,)),
        lambda lx, n: lx.reduce(x, -n.inf, lx.max, (0, 1)),
        lambda lx, n: lx.reduce(x > 0, False, lx.bitwise_xor, (0,)),
        lambda lx, n: lx.reduce(x > 0, True, lx.bitwise_and, (1,)),
        lambda lx, n: lx.reduce(x.astype(np.int32), 0, lx.bitwise_or, (1,)),
        lambda lx, n: lx.reduce(x, 2.0, lx.add, (0,)),
        lambda lx, n: lx.reduce(x, np.float32(0), lx.add, (0,)),
    ]
    for i, f in enumerate(cases):
        ours = refjax.make_jaxpr(lambda: f(lax, rnp))()
        theirs = jax.make_jaxpr(lambda: f(jax.lax, jnp))()
        assert _names(ours.jaxpr) == _names(theirs.jaxpr), i
        _same(f(lax, rnp), f(jax.lax, jnp), what=f"case {i}")


def test_weak_types_of_reduce_follow_jax():
    """The specialised reductions keep JAX's weak type: weak only if operand and init are."""
    x = np.ones(3, np.float32)
    for weak in (False, True):
        for init in (0.0, np.float32(0), 1.0):
            for ops in ((lax.add, jax.lax.add), (lax.mul, jax.lax.mul)):
                ours = lax.reduce(refjax_array(x, weak), init, ops[0], (0,))
                theirs = jax.lax.reduce(jax_array(x, weak), init, ops[1], (0,))
                assert ours.weak_type == theirs.weak_type, (weak, init, ops[0])
                _same(ours, theirs)


# ---------------------------------------------------------------- a user's computation

def _tens(a, b):
    return a * 10 + b


@both_backends
@pytest.mark.parametrize("case", [
    lambda lx, x: lx.reduce_window(x, 5.0, _tens, (2,), (1,), [(1, 1)]),
    lambda lx, x: lx.reduce_window(x, 5.0, _tens, (2,), (1,), [(1, 1)], base_dilation=(2,)),
    lambda lx, x: lx.reduce_window(x, 5.0, _tens, (3,), (1,), "VALID"),
    lambda lx, x: lx.reduce_window(x.reshape(1, 3), 0.0, _tens, (1, 2), (1, 1), "VALID"),
    lambda lx, x: lx.reduce_window(x, 5.0, _tens, (2,), (1,), "VALID", window_dilation=(2,)),
    lambda lx, x: lx.reduce(x, 5.0, _tens, (0,)),
    lambda lx, x: lx.reduce(x.reshape(3, 1), 5.0, _tens, (0, 1)),
])
def test_computation_order_matches_xla(case):
    """A computation that is not a monoid shows the order: the init value first, window
    elements in row-major order, padding and dilation holes skipped."""
    x = np.array([1.0, 2.0, 3.0], np.float32)
    _same(case(lax, x), case(jax.lax, x))


def _pairs(lx):
    def fn(a, b):
        return lx.add(a[0], b[0]), lx.max(a[1], b[1])
    return fn


@both_backends
def test_variadic_reduce_window_and_reduce():
    x, y = _randn(0, (4, 5)), _randn(1, (4, 5))
    for f in (lambda lx: lx.reduce_window((x, y), (0.0, -np.inf), _pairs(lx), (2, 2), (1, 2),
                                        "SAME"),
              lambda lx: lx.reduce((x, y), (0.0, -np.inf), _pairs(lx), (1,)),
              lambda lx: lx.reduce({"a": x, "b": y}, {"a": 0.0, "b": -np.inf},
                                 lambda u, v: {"a": lx.add(u["a"], v["a"]),
                                               "b": lx.max(u["b"], v["b"])}, (0,))):
        ours, theirs = f(lax), f(jax.lax)
        for a, b in zip(refjax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            _same(a, b)


@both_backends
def test_generic_reductions_differentiate_as_jax():
    x = _randn(0, (3, 4)) * 0.5 + 1.0

    def prod_window(jx, lx):
        return lambda y: lx.reduce_window(y, 1.0, lambda a, b: a * b, (2, 2), (1, 1), "SAME")

    def prod(jx, lx):
        return lambda y: lx.reduce(y, 1.0, lambda a, b: a * b, (0,))
    for make in (prod_window, prod):
        ours = refjax.jvp(make(refjax, lax), (x,), (x,))
        theirs = jax.jvp(make(jax, jax.lax), (x,), (x,))
        _same(ours[1], theirs[1], (1e-5, 1e-5), "jvp")
    _same(refjax.grad(lambda y: prod(refjax, lax)(y).sum())(x),
          jax.grad(lambda y: prod(jax, jax.lax)(y).sum())(x), (1e-5, 1e-5), "grad")
    # JAX raises "Linearization failed to produce known values" here; refjax says why.
    with pytest.raises(ValueError):
        jax.grad(lambda y: prod_window(jax, jax.lax)(y).sum())(x)
    with pytest.raises(ValueError, match="reduce_window"):
        refjax.grad(lambda y: prod_window(refjax, lax)(y).sum())(x)


@both_backends
def test_batched_init_values_are_mapped_member_by_member():
    """JAX raises NotImplementedError for batched init values; refjax maps them."""
    x, inits = _randn(0, (3, 4)), np.array([1.0, 2.0, 0.5], np.float32)

    def window(y, i):
        return lax.reduce_window(y, i, lambda a, b: a * b, (2,), (1,), "VALID")

    def reduce(y, i):
        return lax.reduce(y, i, lambda a, b: a * b, (0,))
    for f in (window, reduce):
        got = refjax.vmap(f)(x, inits)
        _same(got, np.stack([np.asarray(f(x[k], inits[k])) for k in range(3)]))
        with pytest.raises(NotImplementedError):
            jax.vmap(lambda y, i, f=f: {window: jax.lax.reduce_window(
                y, i, lambda a, b: a * b, (2,), (1,), "VALID"),
                reduce: jax.lax.reduce(y, i, lambda a, b: a * b, (0,))}[f])(x, inits)
        assert refjax.vmap(f)(x[:0], inits[:0]).shape[0] == 0


def test_reduction_errors():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="tree structure"):
        lax.reduce_window((x, x), 0.0, lambda a, b: a, (2,))
    with pytest.raises(ValueError, match="at least one operand"):
        lax.reduce_window([], [], lambda a, b: a, (2,))
    with pytest.raises(ValueError, match="output must have the same tree structure"):
        lax.reduce_window(x, 1.0, lambda a, b: (a, b), (2,))
    # JAX fails only in XLA's verifier for a computation of the wrong types.
    for ours, theirs in ((lax, jax.lax),):
        with pytest.raises(ValueError, match="verifier"):
            theirs.reduce(x, 1.0, lambda a, b: (a * b).astype(np.int32), (0,))
        with pytest.raises(TypeError, match=r"reduce: the computation.*i32\[\]"):
            ours.reduce(x, 1.0, lambda a, b: (a * b).astype(np.int32), (0,))
    with pytest.raises(TypeError, match=r"reduce_window_max got the wrong number of "
                                        r"window_dimensions.*\(4,\)"):
        lax.reduce_window(x, -np.inf, lax.max, (2, 2))


# ---------------------------------------------------------------- max pooling's derivatives

@both_backends
@pytest.mark.parametrize("select", ["ge", "le"])
def test_select_and_gather_add_ties_and_specials_match_jax(select):
    """The fold from (-inf, 0) keeps the accumulator where it is >= the element: the first
    maximum of ties, NaNs replaced by later elements, all -inf windows give 0."""
    x = np.array([[1.0, 1.0, np.nan, 2.0, -np.inf, -np.inf, 3.0, np.nan]], np.float32)
    t = np.arange(1.0, 9.0, dtype=np.float32)[None]
    ours_p, theirs_p = {"ge": (ew.ge_p, jax.lax.ge_p), "le": (ew.le_p, jax.lax.le_p)}[select]
    params = {"window_dimensions": (1, 2), "window_strides": (1, 1), "padding": ((0, 0), (1, 1)),
              "base_dilation": (1, 1), "window_dilation": (1, 1)}
    for p in (params, {**params, "base_dilation": (1, 2)}, {**params, "window_dilation": (1, 3)}):
        _same(lax.select_and_gather_add_p.bind(t, x, select_prim=ours_p, **p),
              jax.lax.select_and_gather_add_p.bind(t, x, select_prim=theirs_p, **p))


@both_backends
def test_select_and_scatter_add_ties_and_specials_match_jax():
    """The first element is selected, then the next one wherever select(selected, next)
    fails: the first of ties, NaNs passed over by later elements."""
    x = np.array([[1.0, 1.0, np.nan, 2.0, -np.inf, -np.inf, 3.0, 3.0]], np.float32)
    source = np.arange(1.0, 7.0, dtype=np.float32)[None]
    params = {"window_dimensions": (1, 3), "window_strides": (1, 1),
              "padding": ((0, 0), (0, 0))}
    for prim, jprim in ((ew.ge_p, jax.lax.ge_p), (ew.le_p, jax.lax.le_p)):
        for p in (params, {**params, "padding": ((0, 0), (2, 1))}):
            out_len = 8 + sum(p["padding"][1]) - 2
            s = source[:, :1].repeat(out_len, 1) * np.arange(1, out_len + 1)
            _same(lax.select_and_scatter_add_p.bind(s, x, select_prim=prim, **p),
                  jax.lax.select_and_scatter_add_p.bind(s, x, select_prim=jprim, **p))


def test_select_and_scatter_add_where_xla_aborts():
    """Rank 0 and negative paddings abort XLA inside JAX; refjax's xla rule avoids both, and
    agrees with numpy_ref (a scalar's one window selects it; cropped elements get nothing)."""
    cases = [(np.float32(3.0), np.float32(1.0), {"window_dimensions": (), "window_strides": (),
                                                "padding": ()}),
             (np.ones((1, 2), np.float32), _randn(0, (2, 5)),
              {"window_dimensions": (2, 2), "window_strides": (1, 2),
               "padding": ((0, 0), (-1, 0))})]
    for source, operand, params in cases:
        outs = []
        for backend in ("numpy_ref", "xla"):
            with refjax.backend(backend):
                outs.append(lax.select_and_scatter_add_p.bind(source, operand,
                                                              select_prim=ew.ge_p, **params))
        _same(*outs)
    assert float(outs[0].sum()) == 2.0
    np.testing.assert_array_equal(np.asarray(outs[0])[:, 0], 0)


def test_windows_of_one_element_with_negative_padding():
    """XLA aborts on reduce_window_sum/max/min with such windows; refjax's xla rule pads
    explicitly and agrees with numpy_ref (and with a hand computation)."""
    x = np.arange(5.0, dtype=np.float32)
    params = {"window_dimensions": (1,), "window_strides": (1,), "padding": ((0, -2),),
              "base_dilation": (1,), "window_dilation": (1,)}
    for prim in (lax.reduce_window_sum_p, lax.reduce_window_max_p, lax.reduce_window_min_p):
        for backend in ("numpy_ref", "xla"):
            with refjax.backend(backend):
                np.testing.assert_array_equal(prim.bind(x, **params), x[:3])


@both_backends
def test_max_pool_with_window_dilation_has_jaxs_jvp_and_no_vjp():
    x = _randn(0, (7,))

    def pool(lx, n):
        return lambda y: lx.reduce_window(y, -n.inf, lx.max, (2,), (1,), "VALID",
                                         window_dilation=(2,))
    _same(refjax.jvp(pool(lax, rnp), (x,), (x + 1,))[1],
          jax.jvp(pool(jax.lax, jnp), (x,), (x + 1,))[1])
    for jx, lx, n in ((refjax, lax, rnp), (jax, jax.lax, jnp)):
        with pytest.raises(NotImplementedError, match="window dilation"):
            jx.grad(lambda y: pool(lx, n)(y).sum())(x)


@both_backends
@given(seed=st.integers(0, 2**16), data=st.data())
@budget(0.5)
def test_max_pool_gradients_over_drawn_windows(seed, data):
    """Gradients of max/min pooling (select_and_scatter_add, base dilation included) and of
    sum pooling against JAX's, windows drawn as in the spec (rank 1 at least and padding
    non-negative, where JAX's select_and_scatter_add does not abort)."""
    from refjax.spec.windowed import windows
    shape, params = data.draw(windows(min_rank=1, max_rank=2))
    params["window_dilation"] = (1,) * len(shape)
    params["padding"] = tuple((max(lo, 0), max(hi, 0)) for lo, hi in params["padding"])
    x = (np.random.RandomState(seed).permutation(max(1, int(np.prod(shape)))) / 7.0)
    x = x[:int(np.prod(shape))].reshape(shape).astype(np.float32)
    with enable_x64(False):
        for op, init in ((lambda lx: lx.max, -np.inf), (lambda lx: lx.min, np.inf),
                         (lambda lx: lx.add, 0.0)):
            def loss(lx):
                def f(y):
                    out = lx.reduce_window(y, init, op(lx), **params)
                    return (out * np.arange(out.size, dtype=np.float32).reshape(out.shape)).sum()
                return f
            _same(refjax.jit(refjax.grad(loss(lax)))(x), jax.jit(jax.grad(loss(jax.lax)))(x),
                  (1e-5, 1e-5))


# ---------------------------------------------------------------- cumlogsumexp

@both_backends
@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp_values_and_gradients_match_jax(reverse):
    x = np.array([[1.0, -np.inf, 2.0, np.inf, 0.5], [-3.0, 100.0, -100.0, 0.0, 1e-3]],
                 np.float32)
    _same(lax.cumlogsumexp(x, 1, reverse), jax.lax.cumlogsumexp(x, 1, reverse), (1e-6, 1e-6))
    y = _randn(0, (3, 6))
    grads = _both(lambda jx, lx, n: jx.jit(jx.grad(
        lambda v: (lx.cumlogsumexp(v, 1, reverse) * v).sum()))(y))
    _same(*grads, tol=(1e-5, 1e-5))
    finite, ones = np.array([1.0, -np.inf, 2.0, 0.5], np.float32), np.ones(4, np.float32)
    jvps = _both(lambda jx, lx, n: jx.jit(lambda v, t: jx.jvp(
        lambda u: lx.cumlogsumexp(u, 0, reverse), (v,), (t,))[1])(finite, ones))
    _same(*jvps)


def test_cumlogsumexp_rejects_integers_that_jax_fails_on():
    with pytest.raises(OverflowError):
        jax.lax.cumlogsumexp(jnp.arange(3))
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(rnp.arange(3))


# ---------------------------------------------------------------- reduce_precision

def _all_bit_patterns(dtype, n, seed):
    """Random bit patterns (every exponent, NaNs, infinities and subnormals included)."""
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    info = np.iinfo(bits)
    raw = np.random.RandomState(seed).randint(0, 2**32, size=n * 2, dtype=np.uint64)
    raw = (raw[:n] << np.uint64(32) | raw[n:]) & np.uint64(info.max)
    return raw.astype(bits).view(dtype)


@both_backends
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_reduce_precision_is_bit_exact(dtype):
    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    width = {2: 16, 4: 32, 8: 64}[dtype.itemsize]
    with enable_x64(dtype == np.float64):
        x = _all_bit_patterns(dtype, 4096, width)
        for exponent_bits, mantissa_bits in ((1, 0), (2, 1), (4, 3), (5, 2), (5, 10), (8, 7),
                                             (8, 23), (11, 52), (3, 60), (15, 1)):
            ours = np.asarray(lax.reduce_precision(x, exponent_bits, mantissa_bits))
            theirs = np.asarray(jax.lax.reduce_precision(jnp.asarray(x), exponent_bits,
                                                         mantissa_bits))
            same = (ours.view(f"u{dtype.itemsize}") == theirs.view(f"u{dtype.itemsize}"))
            # NaNs keep their sign; their payload does not (XLA computes bfloat16 in float32
            # and makes its NaNs the canonical one, refjax keeps the input's).
            with np.errstate(invalid="ignore"):
                nans = np.isnan(theirs) & np.isnan(ours)
            nans &= np.signbit(ours) == np.signbit(theirs)
            same = same | nans
            assert same.all(), (exponent_bits, mantissa_bits, x[~same][:4], ours[~same][:4],
                                theirs[~same][:4])


def test_lax_exports_the_functions_and_primitives_jax_does():
    names = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
             "conv_dimension_numbers", "conv_general_permutations", "conv_general_dilated_patches",
             "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple",
             "ConvDimensionNumbers", "padtype_to_pads", "reduce_window",
             "reduce_window_shape_tuple", "reduce", "reduce_xor", "reduce_precision",
             "cumlogsumexp", "conv_general_dilated_p", "reduce_window_p", "reduce_window_sum_p",
             "reduce_window_max_p", "reduce_window_min_p", "select_and_gather_add_p",
             "select_and_scatter_add_p", "reduce_p", "reduce_xor_p", "reduce_precision_p",
             "cumlogsumexp_p", "ge_p", "le_p"]
    for name in names:
        assert hasattr(jax.lax, name), name
        assert hasattr(lax, name), name
        if name.endswith("_p"):
            assert getattr(lax, name).name == getattr(jax.lax, name).name
