"""gather, scatter-add, scatter-mul, scatter-min, scatter-max and scatter: common cases against
real JAX, derivatives, vmap, jit, jaxprs."""
import numpy as np
import pytest

import jax
import refjax
from refjax import lax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

G, S, M = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers, lax.GatherScatterMode
JG, JS = jax.lax.GatherDimensionNumbers, jax.lax.ScatterDimensionNumbers
RNG = np.random.RandomState(0)

# dimension numbers of the common indexing patterns, for an operand of shape (5, 3)
ROWS = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))       # x[i]
COLS = dict(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))       # x[:, i]
POINTS = dict(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))   # x[i, j]
ALONG = dict(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),        # take_along
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
WINDOWS = dict(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,))      # x[i:i+2]


def _x(*shape, dtype=np.float32):
    return RNG.randn(*shape).astype(dtype)


def _idx(*values):
    return np.asarray(values, np.int32)


def assert_same(actual, expected):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, \
        f"{actual.shape} {actual.dtype} vs {expected.shape} {expected.dtype}"
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6, atol=1e-6,
                               equal_nan=True)


def both_gather(x, i, dn, sizes, **kw):
    return (lax.gather(x, i, G(**dn), sizes, **kw),
            jax.lax.gather(x, i, JG(**dn), sizes, **kw))


def both_scatter(name, x, i, u, dn, **kw):
    return (getattr(lax, name)(x, i, u, S(**dn), **kw),
            getattr(jax.lax, name)(x, i, u, JS(**dn), **kw))


def _scatter_dn(dn):
    return dict(update_window_dims=dn["offset_dims"],
                inserted_window_dims=dn["collapsed_slice_dims"],
                scatter_dims_to_operand_dims=dn["start_index_map"],
                operand_batching_dims=dn.get("operand_batching_dims", ()),
                scatter_indices_batching_dims=dn.get("start_indices_batching_dims", ()))


# ---------------------------------------------------------------- values

CASES = [
    ("rows (x[i])", ROWS, _idx([4], [0], [2], [2]), (1, 3)),
    ("columns (take axis=1)", COLS, _idx([2], [0]), (5, 1)),
    ("points (x[i, j])", POINTS, _idx([[0, 1], [4, 2]], [[3, 0], [1, 1]]), (1, 1)),
    ("take_along_axis", ALONG, _idx([[0], [2]], [[1], [1]], [[2], [0]], [[0], [0]],
                                    [[1], [2]]), (1, 1)),
    ("windows (x[i:i+2])", WINDOWS, _idx([1], [3]), (2, 3)),
]


@pytest.mark.parametrize("what, dn, idx, sizes", CASES, ids=[c[0] for c in CASES])
def test_gather_common_cases(what, dn, idx, sizes):
    assert_same(*both_gather(_x(5, 3), idx, dn, sizes))


def test_embedding_lookup():
    table, tokens = _x(10, 4), RNG.randint(0, 10, (2, 6)).astype(np.int32)
    ours, theirs = both_gather(table, tokens[..., None], dict(
        offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4))
    assert_same(ours, theirs)
    assert_same(ours, table[tokens])


def test_logits_at_labels():
    logits, labels = _x(4, 7), _idx(3, 0, 6, 6)
    idx = np.stack([np.arange(4, dtype=np.int32), labels], axis=1)
    ours, _ = both_gather(logits, idx, POINTS, (1, 1))
    np.testing.assert_array_equal(np.asarray(ours), logits[np.arange(4), labels])


@pytest.mark.parametrize("dtype", (np.bool_, np.int8, np.uint32, np.complex64), ids=str)
def test_gather_every_dtype_with_its_fill(dtype):
    x = (RNG.randn(5, 3) * 4).astype(dtype)
    ours, theirs = both_gather(x, _idx([4], [-1], [9]), ROWS, (1, 3), mode="fill")
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds", None))
def test_gather_out_of_bounds_modes(mode):
    idx = _idx([4], [-1], [3], [7], [-9])
    assert_same(*both_gather(_x(5, 3), idx, WINDOWS, (2, 3), mode=mode))
    assert_same(*both_gather(_x(5, 3), idx, ROWS, (1, 3), mode=mode, fill_value=None))


def test_gather_fill_value():
    assert_same(*both_gather(_x(5, 3), _idx([4], [5]), ROWS, (1, 3), mode="fill",
                             fill_value=-7.0))


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds", None))
def test_scatter_add_repeated_and_out_of_bounds(mode):
    x, u = _x(5, 3), _x(6, 3)
    idx = _idx([1], [1], [4], [-1], [7], [1])
    assert_same(*both_scatter("scatter_add", x, idx, u, _scatter_dn(ROWS), mode=mode))
    w = _x(6, 2, 3)
    assert_same(*both_scatter("scatter_add", x, idx, w, _scatter_dn(WINDOWS), mode=mode))


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds"))
def test_scatter_replaces(mode):
    x, u = _x(5, 3), _x(4, 3)
    idx = _idx([1], [4], [-1], [9])
    assert_same(*both_scatter("scatter", x, idx, u, _scatter_dn(ROWS), mode=mode))


def test_scatter_add_integers_and_batching_dims():
    x, u = np.arange(10, dtype=np.int32).reshape(2, 5), np.ones((2, 3), np.int32)
    idx = _idx([[0], [0], [4]], [[1], [2], [1]])
    dn = _scatter_dn(dict(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                          operand_batching_dims=(0,), start_indices_batching_dims=(0,)))
    ours, theirs = both_scatter("scatter_add", x, idx, u, dn)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_scatter_with_an_empty_index_vector():
    """XLA mishandles several updates with an empty index vector (JAX too); refjax does not."""
    u = np.array([1.0, 2.0, 4.0], np.float32)
    idx = np.zeros((3, 0), np.int32)
    out = lax.scatter_add(np.float32(0.5), idx, u, S((), (), ()))
    assert float(out) == 7.5
    assert float(lax.scatter(np.float32(0.5), idx[:1], u[:1], S((), (), ()))) == 1.0
    out = lax.scatter_add(np.zeros(2, np.float32), idx, np.stack([u, u], 1), S((1,), (), ()))
    np.testing.assert_array_equal(np.asarray(out), [7.0, 7.0])


def test_scatter_add_rejects_bool_and_gather_float_indices():
    with pytest.raises(TypeError, match="scatter-add"):
        lax.scatter_add(np.zeros(3, bool), _idx([0]), np.ones(1, bool), S((), (0,), (0,)))
    with pytest.raises(ValueError, match="integer"):
        lax.gather(_x(3), np.zeros((1, 1), np.float32), G((), (0,), (0,)), (1,))


# ---------------------------------------------------------------- derivatives

def _grads(f, jf, *args, argnums=0):
    ours = refjax.grad(f, argnums)(*args)
    theirs = jax.grad(jf, argnums)(*args)
    return ours, theirs


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds"))
def test_gather_grad_matches_jax(mode):
    x, w = _x(5, 3), _x(6, 2, 3)
    idx = _idx([1], [1], [3], [0], [3], [2]) if mode == "promise_in_bounds" else \
        _idx([1], [1], [4], [-1], [7], [3])
    kw = dict(mode=mode, fill_value=0.0 if mode == "fill" else None)
    f = lambda x: (lax.gather(x, idx, G(**WINDOWS), (2, 3), **kw) * w).sum()  # noqa: E731
    jf = lambda x: (jax.lax.gather(x, idx, JG(**WINDOWS), (2, 3), **kw) * w).sum()  # noqa: E731
    assert_same(*_grads(f, jf, x))


def test_scatter_add_grads_match_jax():
    x, u, w = _x(5, 3), _x(4, 3), _x(5, 3)
    idx = _idx([1], [1], [4], [9])
    dn = _scatter_dn(ROWS)

    def f(x, u):
        return (lax.scatter_add(x, idx, u, S(**dn)) ** 2 * w).sum()

    def jf(x, u):
        return (jax.lax.scatter_add(x, idx, u, JS(**dn)) ** 2 * w).sum()
    ours, theirs = _grads(f, jf, x, u, argnums=(0, 1))
    for a, b in zip(ours, theirs):
        assert_same(a, b)


@pytest.mark.parametrize("unique", (False, True))
def test_scatter_derivatives_match_jax(unique):
    """Repeated indices: JAX's id trick gives the tangent of the update that wins."""
    x, u, w = _x(5, 3), _x(4, 3), _x(5, 3)
    idx = _idx([1], [3], [0], [9]) if unique else _idx([1], [1], [4], [1])
    dn, kw = _scatter_dn(ROWS), dict(unique_indices=unique)

    def f(x, u):
        return (lax.scatter(x, idx, u, S(**dn), **kw) * w).sum()

    def jf(x, u):
        return (jax.lax.scatter(x, idx, u, JS(**dn), **kw) * w).sum()
    ours, theirs = _grads(f, jf, x, u, argnums=(0, 1))
    for a, b in zip(ours, theirs):
        assert_same(a, b)
    tx, tu = _x(5, 3), _x(4, 3)
    _, ours = refjax.jvp(lambda x, u: lax.scatter(x, idx, u, S(**dn), **kw), (x, u), (tx, tu))
    _, theirs = jax.jvp(lambda x, u: jax.lax.scatter(x, idx, u, JS(**dn), **kw), (x, u),
                        (tx, tu))
    assert_same(ours, theirs)


def test_non_unique_scatter_has_no_transpose():
    """Its JVP is a scatter-add, so grad works (above); the primitive itself has a transpose
    only for unique indices, as in JAX."""
    from refjax.core.primitives.gather import scatter_p
    from refjax.core.transforms.ad import UndefinedPrimal
    from refjax.core.avals import ShapedArray
    aval = ShapedArray((5,), np.dtype(np.float32))
    with pytest.raises(NotImplementedError, match="unique_indices"):
        scatter_p.transpose(np.ones(5, np.float32), UndefinedPrimal(aval), _idx([0]),
                            np.ones(1, np.float32), dimension_numbers=S((), (0,), (0,)),
                            indices_are_sorted=False, unique_indices=False, mode=M.FILL_OR_DROP)


# ---------------------------------------------------------------- vmap, jit, jaxprs

@pytest.mark.parametrize("in_axes", ((0, None), (None, 0), (1, 0), (0, 1)))
def test_gather_vmap_matches_loop(in_axes):
    xs, idx = _x(3, 5, 4), RNG.randint(-1, 6, (3, 2, 1)).astype(np.int32)
    xs = np.moveaxis(xs, 0, in_axes[0]) if in_axes[0] is not None else xs[0]
    idx = np.moveaxis(idx, 0, in_axes[1]) if in_axes[1] is not None else idx[0]

    def f(x, i):
        return lax.gather(x, i, G(**WINDOWS), (2, 4), mode="fill")
    out = refjax.vmap(f, in_axes=in_axes)(xs, idx)
    members = [f(np.take(xs, k, in_axes[0]) if in_axes[0] is not None else xs,
                 np.take(idx, k, in_axes[1]) if in_axes[1] is not None else idx)
               for k in range(3)]
    assert_same(out, np.stack([np.asarray(m) for m in members]))


@pytest.mark.parametrize("in_axes", ((0, None, None), (None, 0, None), (None, None, 0),
                                     (1, 0, 1), (0, None, 0)))
@pytest.mark.parametrize("name", ("scatter_add", "scatter", "scatter_mul", "scatter_min",
                                  "scatter_max"))
def test_scatter_vmap_matches_loop(name, in_axes):
    xs, us = _x(3, 5, 2), _x(3, 2, 2)
    idx = np.array([[[1], [4]], [[0], [3]], [[2], [9]]], np.int32)
    args = [np.moveaxis(a, 0, ax) if ax is not None else a[0]
            for a, ax in zip((xs, idx, us), in_axes)]

    def f(x, i, u):
        return getattr(lax, name)(x, i, u, S(**_scatter_dn(ROWS)))
    out = refjax.vmap(f, in_axes=in_axes)(*args)
    members = [f(*[np.take(a, k, ax) if ax is not None else a for a, ax in zip(args, in_axes)])
               for k in range(3)]
    assert_same(out, np.stack([np.asarray(m) for m in members]))


def test_jit_matches_eager():
    x, idx, u = _x(5, 3), _idx([1], [1], [7]), _x(3, 3)

    def f(x, u):
        g = lax.gather(x, idx, G(**ROWS), (1, 3), mode="fill")
        return lax.scatter_add(x, idx, g * u, S(**_scatter_dn(ROWS)))
    assert_same(refjax.jit(f)(x, u), f(x, u))


def _params(jaxpr, name):
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == name]
    return eqn.params


def _normalised(params):
    """Params with JAX's and refjax's NamedTuples / enums made comparable."""
    out = {}
    for k, v in params.items():
        if k in ("update_jaxpr", "update_consts"):
            continue
        out[k] = v._asdict() if hasattr(v, "_asdict") else (
            v.name if hasattr(v, "name") else v)
    return sorted(out.items())


@pytest.mark.parametrize("mode", ("clip", "fill", None))
def test_jaxpr_params_match_jax(mode):
    x, idx = _x(5, 3), _idx([4], [0])
    f = lambda m: lambda x: m.gather(x, idx, (G if m is lax else JG)(**ROWS), (1, 3),  # noqa
                                     mode=mode)
    ours = _params(refjax.make_jaxpr(f(lax))(x).jaxpr, "gather")
    theirs = _params(jax.make_jaxpr(f(jax.lax))(x).jaxpr, "gather")
    assert repr(_normalised(ours)) == repr(_normalised(theirs))
    s = lambda m: lambda x: m.scatter_add(x, idx, x[:2], (S if m is lax else JS)(  # noqa
        **_scatter_dn(ROWS)), mode=mode)
    ours = _params(refjax.make_jaxpr(s(lax))(x).jaxpr, "scatter-add")
    theirs = _params(jax.make_jaxpr(s(jax.lax))(x).jaxpr, "scatter-add")
    assert repr(_normalised(ours)) == repr(_normalised(theirs))


# ---------------------------------------------------------------- scatter-mul, -min, -max

COMBINERS = ("scatter_mul", "scatter_min", "scatter_max")


@pytest.mark.parametrize("mode", ("clip", "fill", "promise_in_bounds", None))
@pytest.mark.parametrize("name", COMBINERS)
def test_combining_scatters_repeated_and_out_of_bounds(name, mode):
    x, u = _x(5, 3), _x(6, 3)
    idx = _idx([1], [1], [4], [-1], [7], [1])
    assert_same(*both_scatter(name, x, idx, u, _scatter_dn(ROWS), mode=mode))
    assert_same(*both_scatter(name, x, idx, _x(6, 2, 3), _scatter_dn(WINDOWS), mode=mode))
    assert_same(*both_scatter(name, x, _idx([0, 1], [0, 1], [4, 2]), _x(3), _scatter_dn(POINTS),
                              mode=mode))


@pytest.mark.parametrize("dtype", (np.bool_, np.int8, np.uint32, np.float16, "bfloat16",
                                   np.complex64), ids=str)
@pytest.mark.parametrize("name", COMBINERS)
def test_combining_scatters_dtypes(name, dtype):
    x, u = (RNG.randn(5, 3) * 4).astype(dtype), (RNG.randn(4, 3) * 4).astype(dtype)
    idx = _idx([1], [1], [4], [9])
    if name == "scatter_mul" and dtype is np.bool_:
        with pytest.raises(TypeError, match="scatter-mul"):
            lax.scatter_mul(x, idx, u, S(**_scatter_dn(ROWS)))
        return
    ours, theirs = both_scatter(name, x, idx, u, _scatter_dn(ROWS))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours).astype(np.complex128),
                               np.asarray(theirs).astype(np.complex128), rtol=1e-2)


def test_scatter_min_max_nan_and_signed_zeros():
    x = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0], np.float32)
    idx = _idx([0], [1], [2], [2], [3], [3], [4], [5])
    u = np.array([-0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 1.0, np.nan], np.float32)
    for name in ("scatter_min", "scatter_max"):
        ours, theirs = both_scatter(name, x, idx, u, _scatter_dn(dict(
            offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))))
        assert_same(ours, theirs)
        np.testing.assert_array_equal(np.signbit(np.asarray(ours)), np.signbit(theirs))


def test_scatter_mul_half_floats_round_every_product():
    """As XLA: a float16 product that overflows stays inf."""
    ours, theirs = both_scatter("scatter_mul", np.array([300.0], np.float16), _idx([0], [0]),
                                np.array([300.0, 1 / 300], np.float16), dict(
                                    update_window_dims=(), inserted_window_dims=(0,),
                                    scatter_dims_to_operand_dims=(0,)))
    assert_same(ours, theirs)
    assert np.isinf(np.asarray(ours)).all()


def test_combining_scatters_with_an_empty_index_vector():
    u = np.array([1.0, 2.0, 4.0], np.float32)
    idx = np.zeros((3, 0), np.int32)
    assert float(lax.scatter_mul(np.float32(0.5), idx, u, S((), (), ()))) == 4.0
    assert float(lax.scatter_max(np.float32(0.5), idx, u, S((), (), ()))) == 4.0
    assert float(lax.scatter_min(np.float32(1.5), idx, u, S((), (), ()))) == 1.0


def _both_grads(name, x, u, idx, dn, argnums=(0, 1), **kw):
    w = _x(*x.shape)

    def f(x, u):
        return (getattr(lax, name)(x, idx, u, S(**dn), **kw) ** 2 * w).sum()

    def jf(x, u):
        return (getattr(jax.lax, name)(x, idx, u, JS(**dn), **kw) ** 2 * w).sum()
    return _grads(f, jf, x, u, argnums=argnums)


@pytest.mark.parametrize("mode", ("fill", "promise_in_bounds"))
def test_scatter_mul_grads_match_jax(mode):
    x, u = _x(5, 3), _x(4, 3)
    repeated = _idx([1], [1], [4], [1]) if mode != "fill" else _idx([1], [1], [4], [9])
    assert_same(*_both_grads("scatter_mul", x, u, repeated, _scatter_dn(ROWS), argnums=0,
                             mode=mode))
    unique = _idx([1], [3], [0], [2]) if mode != "fill" else _idx([1], [3], [0], [9])
    for a, b in zip(*_both_grads("scatter_mul", x, u, unique, _scatter_dn(ROWS),
                                 unique_indices=True, mode=mode)):
        assert_same(a, b)


def _product_rule(x, idx, u, w):
    """d/du of sum(w * scatter_mul(x, idx, u)) for rows (ROWS), by hand."""
    grad = np.zeros_like(u)
    for j, (i,) in enumerate(idx):
        if 0 <= i < len(x):
            others = np.prod([u[k] for k, (m,) in enumerate(idx) if m == i and k != j], axis=0)
            grad[j] = w[i] * x[i] * others
    return grad


def test_scatter_mul_updates_derivative_with_repeated_indices():
    """JAX raises NotImplementedError without unique_indices; refjax applies the product rule
    (zero updates included: the product of the others is taken without dividing by them)."""
    x, w, dn = _x(5, 3), _x(5, 3), S(**_scatter_dn(ROWS))
    idx = _idx([1], [3], [1], [1], [9], [3])
    u = _x(6, 3)
    u[0, 0] = u[2, 1] = u[3, 1] = u[1, 2] = 0.0   # one zero, two zeros, a zero alone
    with pytest.raises(NotImplementedError, match="unique_indices"):
        jax.grad(lambda u: jax.lax.scatter_mul(x, idx, u, JS(**_scatter_dn(ROWS))).sum())(u)
    got = refjax.grad(lambda u: (lax.scatter_mul(x, idx, u, dn) * w).sum())(u)
    np.testing.assert_allclose(np.asarray(got), _product_rule(x, idx, u, w), rtol=1e-5,
                               atol=1e-6)


def test_scatter_mul_transpose_is_the_operands_only():
    idx, u, dn = _idx([1], [1]), _x(2, 3), S(**_scatter_dn(ROWS))
    ct = _x(5, 3)
    ours, = refjax.linear_transpose(lambda x: lax.scatter_mul(x, idx, u, dn),
                                    np.zeros((5, 3), np.float32))(ct)
    theirs, = jax.linear_transpose(lambda x: jax.lax.scatter_mul(
        x, idx, u, JS(**_scatter_dn(ROWS))), np.zeros((5, 3), np.float32))(ct)
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", ("scatter_min", "scatter_max"))
def test_scatter_min_max_have_no_transpose(name):
    idx, u, dn = _idx([1]), _x(1, 3), S(**_scatter_dn(ROWS))
    with pytest.raises(NotImplementedError, match=name.replace("_", "-")):
        refjax.linear_transpose(lambda x: getattr(lax, name)(x, idx, u, dn),
                                np.zeros((5, 3), np.float32))(_x(5, 3))


@pytest.mark.parametrize("ties", (False, True))
@pytest.mark.parametrize("name", ("scatter_min", "scatter_max"))
def test_scatter_min_max_grads_match_jax_and_share_ties(name, ties):
    """Tied contenders (the operand and the updates equal to the result) share the tangent
    equally, as in JAX."""
    x = np.array([[0., 1, 2], [5, 5, 5], [4, 3, 2], [0, 0, 0], [1, 1, 1]], np.float32)
    u = np.array([[5., 5, 5], [5, 6, 1], [1, 2, 3], [7, 7, 7]], np.float32) if ties else _x(4, 3)
    idx = _idx([1], [1], [4], [9])
    for a, b in zip(*_both_grads(name, x, u, idx, _scatter_dn(ROWS))):
        assert_same(a, b)
    tx, tu = _x(5, 3), _x(4, 3)
    dn = S(**_scatter_dn(ROWS))
    _, ours = refjax.jvp(lambda x, u: getattr(lax, name)(x, idx, u, dn), (x, u), (tx, tu))
    _, theirs = jax.jvp(lambda x, u: getattr(jax.lax, name)(x, idx, u, JS(**_scatter_dn(ROWS))),
                        (x, u), (tx, tu))
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", ("scatter_min", "scatter_max"))
def test_scatter_min_max_clip_mode_derivatives_follow_the_clamped_windows(name):
    """JAX's rule gathers out-of-bounds windows with NaN fills in CLIP mode too (its
    tangents there are NaN); refjax's are those of the clamped windows, the same as with
    the clamped indices written out."""
    x, u = _x(5, 3), _x(3, 3)
    idx, clamped = _idx([1], [7], [-3]), _idx([1], [4], [0])
    dn = S(**_scatter_dn(ROWS))
    f = lambda i, mode: lambda x, u: (getattr(lax, name)(x, i, u, dn, mode=mode) ** 2).sum()  # noqa
    for a, b in zip(refjax.grad(f(idx, "clip"), (0, 1))(x, u),
                    refjax.grad(f(clamped, "fill"), (0, 1))(x, u)):
        assert_same(a, b)


_AT_UPDATES = {
    "multiply": lambda x, i, v: x.at[i].multiply(v),
    "min": lambda x, i, v: x.at[i].min(v),
    "max": lambda x, i, v: x.at[i].max(v),
    "max_clip": lambda x, i, v: x.at[i].max(v, mode="clip"),
    "min_columns": lambda x, i, v: x.at[:, i[:2]].min(x[:, 1:]),
    "multiply_no_wrap": lambda x, i, v: x.at[i].multiply(v, wrap_negative_indices=False),
}


@pytest.mark.parametrize("name", sorted(_AT_UPDATES))
def test_at_multiply_min_max_are_one_scatter_as_in_jax(name):
    """x.at[int_array].multiply/min/max stage JAX's equations (one scatter-mul/-min/-max)
    and match its values, with repeated, negative and out-of-bounds indices."""
    f = _AT_UPDATES[name]
    x, i = _x(5, 3), np.array([0, 2, -1, 7, 2, 0], np.int32)
    v = _x(6, 3)
    ours = [e.primitive.name for e in refjax.make_jaxpr(f)(x, i, v).eqns]
    theirs = [e.primitive.name for e in jax.make_jaxpr(f)(x, i, v).eqns]
    if name != "multiply_no_wrap":   # refjax scatters at flat targets there
        assert ours == theirs
    assert [p for p in ours if p.startswith("scatter")] == \
        [p for p in theirs if p.startswith("scatter")]
    assert_same(refjax.jit(f)(x, i, v), f(jax.numpy.asarray(x), i, v))
    assert_same(f(refjax.numpy.asarray(x), i, v), f(jax.numpy.asarray(x), i, v))


@pytest.mark.parametrize("op", ("min", "max", "multiply"))
def test_at_updates_with_masks_scatter_at_flat_targets(op):
    x, v = _x(4, 3), np.float32(0.5)
    mask = x > 0
    f = lambda x: getattr(x.at[mask], op)(v)  # noqa: E731
    assert_same(f(refjax.numpy.asarray(x)), f(jax.numpy.asarray(x)))
    names = [e.primitive.name for e in refjax.make_jaxpr(f)(x).eqns]
    assert ("scatter-mul" if op == "multiply" else f"scatter-{op}") in names


@pytest.mark.parametrize("op", ("min", "max"))
def test_at_min_max_grads_match_jax(op):
    x = np.array([0., 5, 4, 0, 1], np.float32)
    v = np.array([5., 5, 4, 7, 2, 2], np.float32)
    i = np.array([1, 1, 2, 9, 4, 4], np.int32)

    def f(x, v):
        return (getattr(x.at[i], op)(v) ** 2).sum()
    for a, b in zip(refjax.grad(f, (0, 1))(x, v), jax.grad(f, (0, 1))(x, v)):
        assert_same(a, b)


def test_at_multiply_grads_match_jax():
    x, v, i = _x(5), _x(3), np.array([1, 1, 3], np.int32)
    f = lambda x: (x.at[i].multiply(v) ** 2).sum()  # noqa: E731
    assert_same(refjax.grad(f)(x), jax.grad(f)(x))
    u = np.array([0, 2], np.int32)
    g = lambda m: lambda v: (m.numpy.asarray(x).at[u].multiply(v, unique_indices=True)  # noqa
                             ** 2).sum()
    assert_same(refjax.grad(g(refjax))(v[:2]), jax.grad(g(jax))(v[:2]))
    with pytest.raises(NotImplementedError):   # JAX: only with unique indices; refjax: always
        jax.grad(lambda v: jax.numpy.asarray(x).at[i].multiply(v).sum())(v)
    w = np.zeros_like(x)
    w[[1, 3]] = 1.0
    np.testing.assert_allclose(
        np.asarray(refjax.grad(lambda v: refjax.numpy.asarray(x).at[i].multiply(v).sum())(v)),
        _product_rule(x[:, None], i[:, None], v[:, None], w[:, None])[:, 0], rtol=1e-6)


@pytest.mark.parametrize("op", ("min", "max", "multiply"))
def test_at_updates_vmap_matches_loop(op):
    xs, vs = _x(3, 5), _x(3, 4)
    idx = np.array([[0, 0, 4, 9], [1, 2, 3, 1], [-1, 2, 2, 0]], np.int32)

    def f(x, i, v):
        return getattr(x.at[i], op)(v)
    out = refjax.vmap(f)(xs, idx, vs)
    assert_same(out, jax.vmap(f)(xs, idx, vs))
    assert_same(out, np.stack([np.asarray(f(refjax.numpy.asarray(xs[k]), idx[k], vs[k]))
                               for k in range(3)]))
