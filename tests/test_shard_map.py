"""Collectives, shard_map, pmap: notebook examples, NumPy/JAX references, transforms, errors."""
import itertools
import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst

import refjax as jax
import refjax.numpy as jnp
from refjax import lax
from refjax.api.experimental.shard_map import shard_map
from refjax.core.transforms.shard_map import pmap, smap
from refjax.sharding import PartitionSpec as P

pytestmark = pytest.mark.backends("numpy_ref", "xla")


# Real JAX is a test dependency and conftest.py starts it with 8 CPU devices: the comparisons
# with it run always (a missing JAX fails them rather than skipping them).
import jax as JAX  # noqa: E402

RNG = np.random.default_rng(0)
MESH8 = jax.make_mesh((8,), ("x",))
MESH24 = jax.make_mesh((2, 4), ("x", "y"))


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---------------------------------------------------------------- the notebook's examples

def test_notebook_elementwise_and_local_shape():
    @jax.jit
    def f_elementwise(x):
        return 2 * jnp.sin(x) + 1

    arr = jnp.arange(32)
    out = shard_map(f_elementwise, mesh=MESH8, in_specs=P("x"), out_specs=P("x"))(arr)
    _close(out, 2 * np.sin(np.arange(32)) + 1)
    assert out.dtype == np.float32
    seen = []

    def f(x):
        seen.append(x.shape)
        return x * 2

    y = shard_map(f, mesh=MESH8, in_specs=P("x"), out_specs=P("x"))(arr)
    assert seen == [(4,)] and y.shape == (32,)
    _close(y, np.arange(32) * 2)


def test_notebook_blockwise_sum_and_psum():
    x = jnp.arange(32)
    out = shard_map(lambda b: jnp.sum(b, keepdims=True), mesh=MESH8, in_specs=P("x"),
                    out_specs=P("x"))(x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [6, 22, 38, 54, 70, 86, 102, 118])
    total = shard_map(lambda b: lax.psum(b.sum(), "x"), mesh=MESH8, in_specs=P("x"),
                      out_specs=P())(x)
    assert total.shape == () and total.dtype == np.int32 and int(total) == 496


def _layer_data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(32,)), rng.normal(size=(32, 4)), rng.normal(size=(4,))


@jax.jit
def layer(x, weights, bias):
    return jax.nn.sigmoid(x @ weights + bias)


@jax.jit
@partial(shard_map, mesh=MESH8, in_specs=(P("x"), P("x", None), P(None)), out_specs=P(None))
def layer_sharded(x, weights, bias):
    return jax.nn.sigmoid(jax.lax.psum(x @ weights, "x") + bias)


def test_notebook_layer_sharded():
    x, w, b = _layer_data()
    expected = [0.02138914, 0.89311206, 0.5989201, 0.97742504]
    _close(layer_sharded(x, w, b), expected)
    _close(layer_sharded(x, w, b), layer(x, w, b))
    text = str(jax.make_jaxpr(layer_sharded)(x, w, b))
    assert "shard_map[" in text and "psum_invariant[axes=('x',)]" in text
    assert "in_specs=(P('x',), P('x', None), P(None,))" in text


def test_notebook_layer_sharded_grad_matches_plain_layer():
    x, w, b = _layer_data()
    loss = lambda f: lambda *a: jnp.sum(f(*a) ** 2)  # noqa: E731
    got = jax.grad(loss(layer_sharded), argnums=(0, 1, 2))(x, w, b)
    want = jax.grad(loss(layer), argnums=(0, 1, 2))(x, w, b)
    for g, r in zip(got, want):
        _close(g, r)


# ---------------------------------------------------------------- collectives under vmap

def _vmap_i(f, *args, **kw):
    return np.asarray(jax.vmap(f, axis_name="i", **kw)(*args))


def test_vmap_psum_is_replicated():
    np.testing.assert_array_equal(_vmap_i(lambda v: lax.psum(v, "i"), jnp.arange(3.)), [3, 3, 3])
    # an unbatched operand counts once per lane
    out = _vmap_i(lambda v: lax.psum(2.0, "i") + 0 * v, jnp.arange(3.))
    np.testing.assert_array_equal(out, [6, 6, 6])


X4 = RNG.normal(size=(4, 3, 8)).astype(np.float32)

VMAP_CASES = {
    "psum": (lambda v: lax.psum(v, "i"), lambda x: np.broadcast_to(x.sum(0), x.shape)),
    "pmean": (lambda v: lax.pmean(v, "i"), lambda x: np.broadcast_to(x.mean(0), x.shape)),
    "pmax": (lambda v: lax.pmax(v, "i"), lambda x: np.broadcast_to(x.max(0), x.shape)),
    "pmin": (lambda v: lax.pmin(v, "i"), lambda x: np.broadcast_to(x.min(0), x.shape)),
    "axis_index": (lambda v: lax.axis_index("i") + 0 * v[0, 0],
                   lambda x: np.arange(4, dtype=np.float32)),
    "all_gather": (lambda v: lax.all_gather(v, "i"), lambda x: np.broadcast_to(x, (4,) + x.shape)),
    "all_gather_axis2": (lambda v: lax.all_gather(v, "i", axis=2),
                         lambda x: np.broadcast_to(np.moveaxis(x, 0, 2), (4, 3, 8, 4))),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                         lambda x: np.broadcast_to(np.concatenate(list(x), 1), (4, 3, 32))),
    "psum_scatter_tiled": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                           lambda x: np.moveaxis(x.sum(0).reshape(3, 4, 2), 1, 0)),
    "ppermute": (lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3)]),
                 lambda x: np.concatenate([np.zeros_like(x[:1]), x[:3]])),
    "all_to_all_tiled": (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
                         lambda x: np.stack([np.concatenate([x[s][:, 2 * j:2 * j + 2]
                                                             for s in range(4)], 0)
                                             for j in range(4)])),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_collective_under_vmap_matches_numpy(name):
    f, ref = VMAP_CASES[name]
    _close(_vmap_i(f, X4), ref(X4))


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_collective_in_jit_inside_vmap_and_pmap(name):
    """The vmap/pmap body runs with its axis bound, so an inner jit stages collectives that
    need the axis size (all_gather, ppermute, ...)."""
    f, ref = VMAP_CASES[name]
    _close(jax.vmap(jax.jit(f), axis_name="i")(X4), ref(X4))
    _close(pmap(jax.jit(f), axis_name="i")(X4), ref(X4))


def test_jit_cache_is_keyed_on_the_axis_sizes():
    gather = jax.jit(lambda v: lax.all_gather(v, "i", tiled=True))
    assert jax.vmap(gather, axis_name="i")(np.ones((4, 2), np.float32)).shape == (4, 8)
    assert jax.vmap(gather, axis_name="i")(np.ones((2, 2), np.float32)).shape == (2, 4)
    for n in (2, 4):
        mesh = jax.make_mesh((n,), ("i",))
        # all_gather's result is equal on every lane but typed varying (as in JAX): P() needs
        # check_vma=False
        out = shard_map(gather, mesh=mesh, in_specs=P("i"), out_specs=P(),
                        check_vma=False)(np.arange(2.0 * n))
        _close(out, np.arange(2.0 * n))
    with pytest.raises(NameError, match="all_gather: unbound axis name 'i'"):
        gather(np.ones(2, np.float32))


XB = np.array([[True, False], [False, False], [True, True], [False, True]])
BOOL_KEEPERS = {
    "all_gather": lambda v: lax.all_gather(v, "i"),
    "all_to_all": lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True),
    "ppermute": lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)]),
    # of an invariant value: pvary of one already varying over "i" is JAX's ValueError
    "pvary": lambda v: lax.pvary(lax.pmax(v, "i"), "i"),
    "pmax": lambda v: lax.pmax(v, "i"),
    "pmin": lambda v: lax.pmin(v, "i"),
}


@pytest.mark.parametrize("name", sorted(BOOL_KEEPERS))
def test_collectives_keep_bool(name):
    f = BOOL_KEEPERS[name]
    by_vmap = jax.vmap(f, axis_name="i")(np.tile(XB, (1, 2)))
    assert by_vmap.dtype == np.bool_
    mesh = jax.make_mesh((2,), ("i",))
    sharded = shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(XB)
    assert sharded.dtype == np.bool_


def test_psum_counts_bools_and_psum_scatter_rejects_them():
    out = jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(XB)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.broadcast_to(XB.sum(0), XB.shape))
    with pytest.raises(TypeError, match="reduce_scatter over axis 'i' does not accept dtype bool"):
        jax.vmap(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(XB)
    mesh = jax.make_mesh((2,), ("i",))
    with pytest.raises(TypeError, match="reduce_scatter over axis 'i' does not accept dtype bool"):
        shard_map(lambda v: lax.psum_scatter(v, "i", tiled=True), mesh=mesh, in_specs=P("i"),
                  out_specs=P("i"))(XB)


def test_xla_pmax_pmin_and_zero_size_blocks_match_numpy_ref():
    """XLA's CPU all-reduce rejects complex max, drops NaNs and keeps the first of +0/-0;
    zero-size all-gather / reduce-scatter fail its verifier."""
    z = (np.arange(16) % 3 + 1j * np.arange(16)).astype(np.complex64).reshape(8, 2)
    f = np.array([[np.nan, 1, 2, 3], [-0.0, 0, 0, -0.0], [0, -0.0, -0.0, -0.0],
                  [np.nan] * 4], np.float32)
    empty = np.zeros((8, 0), np.float32)
    cases = [
        (lambda b: lax.pmax(b, ("x", "y")), z, P(("x", "y"))),
        (lambda b: lax.pmin(b, "y"), z, P(("x", "y"))),
        (lambda b: lax.pmax(b, "y"), f, P(None, "y")),
        (lambda b: lax.pmin(b, "y"), f, P(None, "y")),
        (lambda b: lax.all_gather(b, "y", axis=1, tiled=True), empty, P("x")),
        (lambda b: lax.psum_scatter(b, "y", scatter_dimension=1, tiled=True), empty, P("x")),
        (lambda b: lax.ppermute(b, "x", [(0, 1), (1, 0)]), empty, P("x")),
    ]
    for body, x, spec in cases:
        f = shard_map(body, mesh=MESH24, in_specs=spec, out_specs=spec, check_vma=False)
        want = f(x)
        with jax.backend("xla"):
            got = f(x)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        np.testing.assert_array_equal(np.signbit(np.asarray(got).real),
                                      np.signbit(np.asarray(want).real))


def test_untiled_psum_scatter_and_all_to_all():
    y = RNG.normal(size=(4, 4, 3)).astype(np.float32)
    _close(_vmap_i(lambda v: lax.psum_scatter(v, "i"), y), y.sum(0))
    _close(_vmap_i(lambda v: lax.all_to_all(v, "i", 0, 1), y), np.transpose(y, (1, 2, 0)))


def test_nested_axes():
    z = np.arange(12.).reshape(2, 3, 2)
    both = jax.vmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")
    _close(both(z), np.broadcast_to(z.sum((0, 1)), z.shape))
    index = jax.vmap(jax.vmap(lambda v: lax.axis_index(("i", "j")), axis_name="j"),
                     axis_name="i")(z)
    np.testing.assert_array_equal(index, np.arange(6).reshape(2, 3))
    outer = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(z)
    _close(outer, np.broadcast_to(z.sum(0), z.shape))


LINEAR = ["psum", "pmean", "all_gather", "all_gather_axis2", "all_gather_tiled",
          "psum_scatter_tiled", "ppermute", "all_to_all_tiled"]


@pytest.mark.parametrize("name", LINEAR)
def test_collective_transpose_is_adjoint(name):
    """<f(x), w> = <x, f^T(w)> lane-wise summed: the transpose rules are the adjoints."""
    f = VMAP_CASES[name][0]
    x = RNG.normal(size=X4.shape).astype(np.float32)
    y, pullback = jax.vjp(jax.vmap(f, axis_name="i"), x)
    w = RNG.normal(size=y.shape).astype(np.float32)
    (ct,) = pullback(w)
    _close(np.vdot(np.asarray(y), w), np.vdot(x, np.asarray(ct)), tol=1e-3)


def test_untiled_all_to_all_transpose_is_adjoint():
    f = jax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")
    x = RNG.normal(size=(4, 3, 4)).astype(np.float32)
    y, pullback = jax.vjp(f, x)
    w = RNG.normal(size=y.shape).astype(np.float32)
    _close(np.vdot(np.asarray(y), w), np.vdot(x, np.asarray(pullback(w)[0])), tol=1e-3)


@pytest.mark.parametrize("name", sorted(set(VMAP_CASES) - {"ppermute"}))
def test_collective_under_vmap_matches_jax(name):
    f = VMAP_CASES[name][0]
    real = JAX.vmap(lambda v: _as_jax(f)(v), axis_name="i")(X4)
    _close(_vmap_i(f, X4), real)
    if name in LINEAR:
        w = RNG.normal(size=np.shape(real)).astype(np.float32)
        grad = lambda lib, fn: lib.vmap(lib.grad(lambda v, w: (fn(v) * w).sum()),  # noqa: E731
                                        axis_name="i")
        _close(grad(jax, f)(X4, w), grad(JAX, _as_jax(f))(X4, w), tol=1e-4)


def _as_jax(f):
    """Run a refjax-written lambda with jax.lax in place of refjax's lax."""
    import jax.lax as real_lax
    globs = dict(f.__globals__, lax=real_lax, jnp=JAX.numpy)
    return type(f)(f.__code__, globs, f.__name__, f.__defaults__, f.__closure__)


# ---------------------------------------------------------------- shard_map on a 2x4 mesh

A = np.arange(96, dtype=np.float32).reshape(8, 12)


def test_two_axis_specs_and_collectives():
    same = shard_map(lambda b: b * 2, mesh=MESH24, in_specs=P("x", "y"), out_specs=P("x", "y"))
    _close(same(A), A * 2)
    flip = shard_map(lambda b: b, mesh=MESH24, in_specs=P(("x", "y")), out_specs=P(("y", "x")))
    _close(flip(A), A.reshape(2, 4, 1, 12).transpose(1, 0, 2, 3).reshape(8, 12))
    total = shard_map(lambda b: lax.psum(b, ("x", "y")), mesh=MESH24, in_specs=P("x", "y"),
                      out_specs=P())
    _close(total(A), A.reshape(2, 4, 4, 3).sum((0, 2)))
    gather = lambda b: lax.all_gather(b, "y", axis=1, tiled=True)  # noqa: E731
    rows = shard_map(gather, mesh=MESH24, in_specs=P("x", "y"), out_specs=P("x"),
                     check_vma=False)
    _close(rows(A), A)
    # as in JAX, an all_gather result is typed varying over its axis: P("x") (replicated over
    # "y") is rejected by the static check
    with pytest.raises(ValueError, match="replicated across mesh axis 'y'"):
        shard_map(gather, mesh=MESH24, in_specs=P("x", "y"), out_specs=P("x"))(A)


def test_collectives_in_control_flow_and_jit_inside_body():
    w = np.float32(1.5)
    loop = shard_map(lambda b, w: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(w, "x"), 0.),
                     mesh=MESH24, in_specs=(P("x"), P()), out_specs=P())
    _close(loop(A[:, 0], w), 9.0)
    inner_jit = shard_map(lambda b, w: jax.jit(lambda v: lax.psum(v, "y"))(w), mesh=MESH24,
                          in_specs=(P("x"), P()), out_specs=P())
    _close(inner_jit(A[:, 0], w), 6.0)
    scan = shard_map(lambda b: lax.scan(lambda c, v: (c + lax.psum(v, "x"), c), 0., b),
                     mesh=MESH24, in_specs=P("x"), out_specs=(P(), P()))
    carry, ys = scan(np.arange(8.))
    _close(carry, 28.0)
    _close(ys, [0., 4., 10., 18.])


def test_pytrees_and_integer_outputs():
    f = shard_map(lambda d: ({"s": d["a"] * 2, "i": lax.axis_index("x") + jnp.zeros(1, "int32")},
                             lax.psum(d["b"], "y")),
                  mesh=MESH24, in_specs=({"a": P("x"), "b": P("y")},),
                  out_specs=({"s": P("x"), "i": P("x")}, P()))
    out, s = f({"a": A, "b": np.ones(4, np.float32)})
    _close(out["s"], A * 2)
    np.testing.assert_array_equal(out["i"], [0, 1])
    _close(s, [4.0])


# ---------------------------------------------------------------- transformations of shard_map

def _loss_sharded(a, w):
    body = lambda b, w: lax.psum(jnp.sum(jnp.sin(b * w)), "x")  # noqa: E731
    return shard_map(body, mesh=MESH24, in_specs=(P("x", None), P()), out_specs=P())(a, w)


def _loss_plain(a, w):
    return jnp.sum(jnp.sin(a * w))


W12 = (np.arange(12, dtype=np.float32) / 10)
A_SMALL = (A / 50).astype(np.float32)


def test_grad_matches_unsharded_and_finite_differences():
    got = jax.grad(_loss_sharded, argnums=(0, 1))(A_SMALL, W12)
    want = jax.grad(_loss_plain, argnums=(0, 1))(A_SMALL, W12)
    for g, r in zip(got, want):
        _close(g, r, tol=1e-4)
    a64, w64 = A_SMALL.astype(np.float64), W12.astype(np.float64)
    eps, i = 1e-3, 5
    dw = np.zeros_like(w64)
    dw[i] = eps
    fd = (np.sum(np.sin(a64 * (w64 + dw))) - np.sum(np.sin(a64 * (w64 - dw)))) / (2 * eps)
    assert abs(float(got[1][i]) - fd) < 1e-2 * max(1, abs(fd))


def test_grad_with_closure_and_pmax():
    g = jax.grad(lambda w: shard_map(lambda b: b * w, mesh=MESH24, in_specs=P("x"),
                                     out_specs=P("x"))(A).sum())(2.)
    _close(g, A.sum())
    x = np.array([1., 5., 3., 5.], np.float32)
    f = shard_map(lambda b: lax.pmax(b, "y"), mesh=MESH24, in_specs=P("y"), out_specs=P())
    _close(f(x), [5.])
    _close(jax.grad(lambda v: f(v).sum())(x), [0, .5, 0, .5])  # ties share the gradient


def test_jit_vmap_jvp_and_second_order():
    _close(jax.jit(_loss_sharded)(A_SMALL, W12), _loss_plain(A_SMALL, W12), tol=1e-4)
    ws = np.stack([W12, 2 * W12])
    _close(jax.vmap(_loss_sharded, in_axes=(None, 0))(A_SMALL, ws),
           jax.vmap(_loss_plain, in_axes=(None, 0))(A_SMALL, ws), tol=1e-4)
    got = jax.jit(jax.vmap(jax.grad(_loss_sharded, argnums=1), in_axes=(None, 0)))(A_SMALL, ws)
    want = jax.vmap(jax.grad(_loss_plain, argnums=1), in_axes=(None, 0))(A_SMALL, ws)
    _close(got, want, tol=1e-4)
    t = jax.jvp(_loss_sharded, (A_SMALL, W12), (A_SMALL, W12))[1]
    _close(t, jax.jvp(_loss_plain, (A_SMALL, W12), (A_SMALL, W12))[1], tol=1e-4)
    hess = jax.hessian(_loss_sharded, argnums=1)(A_SMALL, W12)
    _close(hess, jax.hessian(_loss_plain, argnums=1)(A_SMALL, W12), tol=1e-4)


def test_grad_of_jit_of_shard_map_uses_partial_eval():
    x, w, b = _layer_data()
    text = str(jax.make_jaxpr(jax.grad(lambda w: layer_sharded(x, w, b).sum()))(w))
    assert text.count("shard_map[") >= 2  # the known and the transposed linear part


# ---------------------------------------------------------------- errors

def test_unbound_axis_names():
    with pytest.raises(NameError, match="unbound axis name 'z'.*in scope: 'x', 'y'"):
        shard_map(lambda b: lax.psum(b, "z"), mesh=MESH24, in_specs=P("x"),
                  out_specs=P("x"))(A)
    with pytest.raises(NameError, match="'k'.*in scope: 'i'"):
        jax.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(X4)
    with pytest.raises(NameError, match="unbound axis name 'i'.*none"):
        lax.axis_index("i")
    with pytest.raises(NameError, match="unbound axis name"):  # found when run (under jit)
        jax.jit(jax.vmap(lambda v: lax.psum(v, "k"), axis_name="i"))(X4)


def _vma_errors(lib):
    """The messages of shard_maps whose outputs vary over axes their out_specs replicate them
    over: staged (one output; several, with axes unnamed over which they do or do not vary)
    and eager."""
    mesh = lib.make_mesh((2, 4), ("x", "y"), (lib.sharding.AxisType.Auto,) * 2,
                         devices=lib.devices()[:8])
    a = np.arange(96.0, dtype=np.float32).reshape(8, 12)

    Q = lib.P

    def body(b):
        return lib.lax.psum(b, "x")

    def several(b):
        return b, {"s": b * 2}

    thunks = [lambda: lib.jit(lib.shard_map(body, mesh=mesh, in_specs=Q("x", "y"),
                                            out_specs=Q()))(a),
              lambda: lib.jit(lib.shard_map(several, mesh=mesh, in_specs=Q("x", "y"),
                                            out_specs=(Q(), {"s": Q("x")})))(a),
              lambda: lib.shard_map(body, mesh=mesh, in_specs=Q("x", "y"), out_specs=Q())(a)]
    messages = []
    for thunk in thunks:
        with pytest.raises(ValueError) as e:
            thunk()
        messages.append(str(e.value))
    return messages


def test_varying_output_with_replicated_spec_is_rejected_as_jax():
    """JAX's text; but eagerly JAX names its own internal function ('_rem_singleton'), where
    refjax names the user's."""
    ours, theirs = _vma_errors(jax), _vma_errors(JAX)
    assert ours[:2] == theirs[:2]
    assert "possibly varying over {x,y}" in ours[1] and "* out_specs[1]['s']" in ours[1]
    assert "'_rem_singleton'" in theirs[2]
    assert ours[2] == theirs[2].replace("'_rem_singleton'", "'body'")


_REDUCTIONS_OVER_A_MIX = {
    # (body, out_spec, check_vma): a value split over 'x' only, reduced over ('x', 'y')
    "psum_mix": (lambda b: lax.psum(b, ("x", "y")), P(), True),
    "pmean_mix": (lambda b: lax.pmean(b, ("x", "y")), P(), True),
    "pmax_mix": (lambda b: lax.pmax(b, ("x", "y")), P(), True),
    "psum_invariant_only": (lambda b: lax.psum(b, "y"), P("x"), True),
    "psum_mix_unchecked": (lambda b: lax.psum(b, ("x", "y")), P(), False),
    "pcast_then_psum": (lambda b: lax.psum(lax.pcast(b, "y", to="varying"), ("x", "y")), P(),
                        True),
}


@pytest.mark.parametrize("name", sorted(_REDUCTIONS_OVER_A_MIX))
def test_reductions_over_varying_and_invariant_axes_match_jax(name):
    """JAX's check_vma rejects psum/pmean over a mix of axes the value varies and does not
    vary over (pmax and unchecked bodies are fine); refjax now does too, naming the axes."""
    body, spec, check = _REDUCTIONS_OVER_A_MIX[name]
    x = np.arange(8.0, dtype=np.float32)
    real_mesh = JAX.make_mesh((2, 4), ("x", "y"),
                              axis_types=(JAX.sharding.AxisType.Auto,) * 2)
    run = lambda lib, mesh, f: lib.shard_map(  # noqa: E731
        f, mesh=mesh, in_specs=lib.sharding.PartitionSpec("x"),
        out_specs=lib.sharding.PartitionSpec(*spec), check_vma=check)(x)
    try:
        want = run(JAX, real_mesh, _as_jax(body))
    except ValueError:
        with pytest.raises(ValueError, match=r"varies over \('x',\) but not over \('y',\)"):
            run(jax, MESH24, body)
        return
    _close(run(jax, MESH24, body), want)


def test_pcast_targets():
    with pytest.raises(ValueError, match="Allowed `to` values"):
        shard_map(lambda b: lax.pcast(b, "y", to="invariant"), mesh=MESH24, in_specs=P("x"),
                  out_specs=P("x"))(A)
    # reduced over y and claimed replicated over it: JAX's error under jit (tests/
    # test_unreduced_loops.py compares the reduced and unreduced casts with JAX)
    with pytest.raises(ValueError, match="replicated across mesh axis 'y'"):
        jax.jit(shard_map(lambda b: lax.pcast(b, "y", to="reduced"), mesh=MESH24,
                          in_specs=P("x"), out_specs=P("x")))(A)
    with pytest.raises(ValueError, match=r"reduced in out_specs P\('x', reduced=\{'y'\}\) "
                                         "can only be used when the mesh passed to shard_map "
                                         "contains axis names all of type `Explicit`"):
        shard_map(lambda b: b, mesh=MESH24, in_specs=P("x"), out_specs=P("x", reduced={"y"}))(A)


def test_non_divisible_and_bad_specs():
    with pytest.raises(ValueError, match=r"f32\[3,8\].*dimension 0 \(of size 3\) over mesh axes"):
        shard_map(lambda b: b, mesh=MESH24, in_specs=P("x", "y"), out_specs=P("x", "y"))(
            np.ones((3, 8), np.float32))
    with pytest.raises(ValueError, match="mesh axis 'q'"):
        shard_map(lambda b: b, mesh=MESH24, in_specs=P("q"), out_specs=P())(A)
    with pytest.raises(ValueError, match="uses mesh axis 'x' twice"):
        shard_map(lambda b: b, mesh=MESH24, in_specs=P("x", "x"), out_specs=P())(A)
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        shard_map(lambda b: b, in_specs=P(), out_specs=P())(A)


@pytest.mark.backends("numpy_ref")  # the oracle checks replication on data; XLA trusts the spec
def test_runtime_replication_check_without_check_vma():
    bad = shard_map(lambda b: b, mesh=MESH24, in_specs=P("x", "y"), out_specs=P(),
                    check_vma=False)
    with pytest.raises(ValueError, match="replicated over mesh axis 'x'.*cpu:4.*cpu:0"):
        bad(A)
    fine = shard_map(lambda b: b * 0 + 1, mesh=MESH24, in_specs=P("x", "y"), out_specs=P(),
                     check_vma=False)
    _close(fine(A), np.ones((4, 3)))


# ---------------------------------------------------------------- pmap and smap

def test_pmap():
    x = np.arange(4.)
    _close(pmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(x), x / 6)
    _close(pmap(lambda v: jax.jit(lambda u: lax.all_gather(u, "i"))(v), axis_name="i")(x),
           np.broadcast_to(x, (4, 4)))
    _close(pmap(lambda v, s: v * s, in_axes=(0, None), static_broadcasted_argnums=1)(x, 3),
           x * 3)
    with pytest.raises(ValueError, match="requires 9 logical devices"):
        pmap(lambda v: v)(np.arange(9.))


def test_smap_uses_the_current_mesh():
    with jax.set_mesh(MESH8):
        out = smap(lambda v: lax.psum(v, "x") * jnp.ones(1), in_axes=0, out_axes=0,
                   axis_name="x")(np.arange(8.))
    _close(out, np.full(8, 28.))


# ---------------------------------------------------------------- real JAX and the xla backend

def test_grads_match_jax_shard_map():
    import jax.lax as jl
    mesh = JAX.make_mesh((2, 4), ("x", "y"), axis_types=(JAX.sharding.AxisType.Auto,) * 2)

    def body(lib, b, w):
        y = lib.all_gather(b * w, "y", axis=1, tiled=True)
        y = lib.ppermute(y, "x", [(0, 1), (1, 0)])
        return lib.psum_scatter(y, "y", scatter_dimension=1, tiled=True)

    specs = dict(in_specs=(P("x", "y"), P()), out_specs=P("x", "y"))
    jspecs = dict(in_specs=(JAX.P("x", "y"), JAX.P()), out_specs=JAX.P("x", "y"))
    ours = lambda a, w: shard_map(partial(body, lax), mesh=MESH24, **specs)(a, w)  # noqa
    theirs = lambda a, w: JAX.shard_map(partial(body, jl), mesh=mesh, **jspecs)(a, w)  # noqa
    w = np.float32(0.5)
    _close(ours(A, w), theirs(A, w))
    ct = RNG.normal(size=A.shape).astype(np.float32)
    loss = lambda f: lambda a, w: (f(a, w) * ct).sum()  # noqa: E731
    for g, r in zip(jax.grad(loss(ours), (0, 1))(A, w), JAX.grad(loss(theirs), (0, 1))(A, w)):
        _close(g, r, tol=1e-3)


def test_xla_backend_lowers_to_jax_shard_map():
    f = shard_map(lambda b: (lax.psum(b, "x"), lax.all_to_all(b, "y", 0, 1, tiled=True)),
                  mesh=MESH24, in_specs=P("x", "y"), out_specs=(P(None, "y"), P("x", "y")))
    want = f(A)
    with jax.backend("xla"):
        got = f(A)
        grads = jax.jit(jax.grad(_loss_sharded, argnums=1))(A_SMALL, W12)
    for g, r in zip(got, want):
        _close(g, r)
    _close(grads, jax.grad(_loss_plain, argnums=1)(A_SMALL, W12), tol=1e-4)


# ---------------------------------------------------------------- random shard_maps

MESH_SHAPES = [(1,), (2,), (4,), (8,), (2, 2), (2, 4), (4, 2), (2, 2, 2), (1, 4), (2, 1, 2)]
AXES = ("a", "b", "c")


@hst.composite
def shard_map_cases(draw):
    shape = draw(hst.sampled_from(MESH_SHAPES))
    names = AXES[:len(shape)]
    where = [draw(hst.sampled_from([0, 1, None])) for _ in names]
    dims = [draw(hst.permutations([n for n, w in zip(names, where) if w == d])) for d in (0, 1)]
    local = (draw(hst.sampled_from([1, 2, 4])), draw(hst.integers(1, 3)))
    op = hst.one_of(
        hst.tuples(hst.just("sin")),
        hst.tuples(hst.sampled_from(["psum", "pmax"]),
                   hst.sets(hst.sampled_from(names), min_size=1).map(sorted)),
        hst.tuples(hst.sampled_from(["all_gather", "psum_scatter", "all_to_all",
                                     "axis_index"]), hst.sampled_from(names)),
        hst.tuples(hst.just("ppermute"), hst.sampled_from(names), hst.integers(1, 3)))
    ops = draw(hst.lists(op, min_size=1, max_size=3))
    return dict(mesh_shape=shape, names=names, dims=dims, local=local, ops=ops)


class Devices:
    """A NumPy simulation of the mesh: one block per device coordinate tuple."""

    def __init__(self, sizes, names):
        self.sizes, self.names = dict(zip(names, sizes)), names
        self.coords = list(itertools.product(*[range(s) for s in sizes]))

    def pos(self, c, axes):
        """Mixed-radix position of device c along `axes` (major to minor)."""
        out = 0
        for a in axes:
            out = out * self.sizes[a] + c[self.names.index(a)]
        return out

    def group(self, c, axes):
        """The devices that differ from c only along `axes`."""
        keep = [i for i, n in enumerate(self.names) if n not in axes]
        return [d for d in self.coords if all(d[i] == c[i] for i in keep)]

    def along(self, c, a):
        i = self.names.index(a)
        return [c[:i] + (k,) + c[i + 1:] for k in range(self.sizes[a])]

    def split(self, x, dims):
        out = {}
        for c in self.coords:
            idx = []
            for d, axes in enumerate(dims):
                n = x.shape[d] // math.prod(self.sizes[a] for a in axes)
                idx.append(slice(self.pos(c, axes) * n, (self.pos(c, axes) + 1) * n))
            out[c] = x[tuple(idx)]
        return out

    def assemble(self, blocks, dims):
        local = next(iter(blocks.values())).shape
        shape = [n * math.prod(self.sizes[a] for a in axes) for n, axes in zip(local, dims)]
        out = np.full(shape, np.nan, np.float32)
        for c, blk in blocks.items():
            idx = tuple(slice(self.pos(c, axes) * n, (self.pos(c, axes) + 1) * n)
                        for n, axes in zip(local, dims))
            assert np.isnan(out[idx]).all() or np.allclose(out[idx], blk, atol=1e-4)
            out[idx] = blk
        return out


def _simulate(op, blocks, dev):
    name = op[0]
    if name == "sin":
        return {c: np.sin(b) for c, b in blocks.items()}
    if name in ("psum", "pmax"):
        red = np.sum if name == "psum" else np.max
        return {c: red([blocks[d] for d in dev.group(c, op[1])], 0) for c in blocks}
    a = op[1]
    n, i = dev.sizes[a], dev.names.index(a)
    if name == "axis_index":
        return {c: b + c[i] for c, b in blocks.items()}
    if name == "ppermute":
        return {c: blocks[dev.along(c, a)[(c[i] - op[2]) % n]] for c in blocks}
    if name == "all_gather":
        return {c: np.concatenate([blocks[d] for d in dev.along(c, a)], 0) for c in blocks}
    if name == "psum_scatter":
        return {c: np.split(sum(blocks[d] for d in dev.along(c, a)), n, 0)[c[i]] for c in blocks}
    return {c: np.concatenate([np.split(blocks[d], n, 0)[c[i]] for d in dev.along(c, a)], 1)
            for c in blocks}


def _apply(op, v, sizes):
    name = op[0]
    if name == "sin":
        return jnp.sin(v)
    if name in ("psum", "pmax"):
        return getattr(lax, name)(v, tuple(op[1]))
    a = op[1]
    if name == "axis_index":
        return v + lax.axis_index(a)
    if name == "ppermute":
        n = sizes[a]
        return lax.ppermute(v, a, [(s, (s + op[2]) % n) for s in range(n)])
    if name == "all_gather":
        return lax.all_gather(v, a, tiled=True)
    if name == "psum_scatter":
        return lax.psum_scatter(v, a, tiled=True)
    return lax.all_to_all(v, a, 0, 1, tiled=True)


def _feasible(ops, local, sizes, start):
    """Keep the ops whose split dimension divides evenly and the psums JAX's check_vma accepts
    (not over a mix of axes the value varies and does not vary over); track varying axes and
    dim 0."""
    kept, rows, vma = [], local[0], set(start)
    for op in ops:
        if op[0] in ("psum_scatter", "all_to_all") and rows % sizes[op[1]]:
            continue
        if op[0] == "psum" and 0 < len(vma & set(op[1])) < len(op[1]):
            continue
        vma = _varying([op], vma)
        rows = rows * sizes[op[1]] if op[0] == "all_gather" else \
            rows // sizes[op[1]] if op[0] in ("psum_scatter", "all_to_all") else rows
        kept.append(op)
    return kept


def _varying(ops, start):
    vma = set(start)
    for op in ops:
        if op[0] in ("psum", "pmax"):
            vma -= set(op[1])
        elif op[0] != "sin":  # all_gather too: equal on every lane, but typed varying as in JAX
            vma.add(op[1])
    return vma


def _entry(axes):
    return None if not axes else axes[0] if len(axes) == 1 else tuple(axes)


@settings(max_examples=30, deadline=None)
@given(shard_map_cases())
def test_random_shard_maps_match_numpy_simulation(case):
    names, dims = case["names"], case["dims"]
    sizes = dict(zip(names, case["mesh_shape"]))
    dev = Devices(case["mesh_shape"], names)
    ops = _feasible(case["ops"], case["local"], sizes, dims[0] + dims[1])
    shape = tuple(n * math.prod(sizes[a] for a in axes) for n, axes in zip(case["local"], dims))
    x = np.random.default_rng(len(ops)).normal(size=shape).astype(np.float32)
    vma = _varying(ops, dims[0] + dims[1])
    out_dims = [[a for a in dims[0] if a in vma] + sorted(vma - set(dims[0] + dims[1])),
                [a for a in dims[1] if a in vma]]
    blocks = dev.split(x, dims)
    for op in ops:
        blocks = _simulate(op, blocks, dev)
    want = dev.assemble(blocks, out_dims)

    def body(v):
        for op in ops:
            v = _apply(op, v, sizes)
        return v

    mesh = jax.make_mesh(case["mesh_shape"], names)
    f = shard_map(body, mesh=mesh, in_specs=P(*map(_entry, dims)),
                  out_specs=P(*map(_entry, out_dims)))
    _close(f(x), want, tol=1e-4)
    # the transpose rules are the adjoints of the JVPs (pmax included)
    t = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    y, tangent = jax.jvp(f, (x,), (t,))
    w = np.random.default_rng(2).normal(size=y.shape).astype(np.float32)
    (ct,) = jax.vjp(f, x)[1](w)
    _close(np.vdot(np.asarray(tangent), w), np.vdot(t, np.asarray(ct)), tol=2e-3)

