"""gather, scatter-add and scatter: common cases against real JAX, derivatives, vmap, jit, jaxprs."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
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
@pytest.mark.parametrize("name", ("scatter_add", "scatter"))
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
