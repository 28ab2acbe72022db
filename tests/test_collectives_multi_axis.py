"""Collectives over several mesh axes and within axis_index_groups, against real JAX."""
import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp
from refjax import lax
from refjax.sharding import PartitionSpec as P

import jax as JAX  # noqa: E402  (conftest.py starts it with 8 CPU devices)

pytestmark = pytest.mark.backends("numpy_ref", "xla")

MESH24 = jax.make_mesh((2, 4), ("x", "y"))
MESH8 = jax.make_mesh((8,), ("i",))
REAL24 = JAX.make_mesh((2, 4), ("x", "y"), axis_types=(JAX.sharding.AxisType.Auto,) * 2)
REAL8 = JAX.make_mesh((8,), ("i",), axis_types=(JAX.sharding.AxisType.Auto,))
X = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
G = [[0, 3], [1, 2], [4, 7], [5, 6]]
UNEVEN = [[0, 1, 2], [3, 4, 5, 6, 7]]
RING = [(i, (i + 3) % 8) for i in range(8)]
XY = P(("x", "y"))


def _tile(v):
    return jnp.concatenate([v * (k + 1) for k in range(8)], 0)


# name: (body, mesh is 2x4, in_specs, out_specs)
CASES = {
    "psum_xy": (lambda v: lax.psum(v, ("x", "y")), True, XY, P()),
    "psum_yx_int": (lambda v: lax.psum((v * 4).astype(jnp.int32), ("y", "x")), True, XY, P()),
    "pmean_xy": (lambda v: lax.pmean(v, ("x", "y")), True, XY, P()),
    "pmax_y": (lambda v: lax.pmax(v, ("y",)), True, XY, P("x")),
    "all_gather_xy": (lambda v: lax.all_gather(v, ("x", "y")), True, XY, P()),
    "all_gather_yx": (lambda v: lax.all_gather(v, ("y", "x")), True, XY, P()),
    "all_gather_yx_tiled_axis1": (lambda v: lax.all_gather(v, ("y", "x"), axis=1, tiled=True),
                                  True, XY, P()),
    "all_gather_2d_spec": (lambda v: lax.all_gather(v, ("x", "y"), axis=2), True, P("x", "y"),
                           P()),
    "axis_index_yx": (lambda v: lax.axis_index(("y", "x")) + jnp.zeros((1, 1), jnp.int32), True,
                      XY, XY),
    "axis_index_xy": (lambda v: lax.axis_index(("x", "y")) + jnp.zeros((1, 1), jnp.int32), True,
                      XY, XY),
    "psum_scatter_xy_tiled": (lambda v: lax.psum_scatter(_tile(v), ("x", "y"), tiled=True), True,
                              XY, XY),
    "psum_scatter_yx": (lambda v: lax.psum_scatter(_tile(v), ("y", "x")), True, XY, XY),
    "ppermute_xy": (lambda v: lax.ppermute(v, ("x", "y"), RING), True, XY, XY),
    "ppermute_yx_partial": (lambda v: lax.ppermute(v, ("y", "x"), [(0, 5), (5, 2), (7, 0)]),
                            True, XY, XY),
    "all_to_all_xy_tiled": (lambda v: lax.all_to_all(_tile(v), ("x", "y"), 0, 1, tiled=True),
                            True, XY, XY),
    "all_to_all_yx": (lambda v: lax.all_to_all(_tile(v), ("y", "x"), 0, 1), True, XY, XY),
    "psum_groups": (lambda v: lax.psum(v, "i", axis_index_groups=G), False, P("i"), P("i")),
    "psum_uneven_groups": (lambda v: lax.psum(v, "i", axis_index_groups=UNEVEN), False, P("i"),
                           P("i")),
    "pmean_groups": (lambda v: lax.pmean(v, "i", axis_index_groups=G), False, P("i"), P("i")),
    "pmax_groups": (lambda v: lax.pmax(v, "i", axis_index_groups=G), False, P("i"), P("i")),
    "pmin_groups": (lambda v: lax.pmin(v, "i", axis_index_groups=G), False, P("i"), P("i")),
    "psum_one_groups": (lambda v: v + lax.psum(1, "i", axis_index_groups=G), False, P("i"),
                        P("i")),
    "all_gather_groups": (lambda v: lax.all_gather(v, "i", axis_index_groups=G), False, P("i"),
                          P("i")),
    "psum_scatter_groups": (lambda v: lax.psum_scatter(_tile(v)[:2], "i", axis_index_groups=G),
                            False, P("i"), P("i")),
    "psum_scatter_groups_tiled": (lambda v: lax.psum_scatter(_tile(v)[:4], "i", tiled=True,
                                                             axis_index_groups=G),
                                  False, P("i"), P("i")),
    "all_to_all_groups": (lambda v: lax.all_to_all(_tile(v)[:2], "i", 0, 1,
                                                   axis_index_groups=G), False, P("i"), P("i")),
}
LINEAR = {"psum_xy", "pmean_xy", "all_gather_xy", "all_gather_yx_tiled_axis1",
          "psum_scatter_xy_tiled", "ppermute_yx_partial", "psum_groups",
          "all_gather_groups", "psum_scatter_groups"}


def _as_jax(f):
    """A refjax-written body with jax.lax and jax.numpy in place of refjax's."""
    import jax.lax as real_lax
    globs = dict(f.__globals__, lax=real_lax, jnp=JAX.numpy)
    if f is not _tile:
        globs["_tile"] = _as_jax(_tile)
    return type(f)(f.__code__, globs, f.__name__, f.__defaults__, f.__closure__)


def _programs(name):
    body, two, ins, outs = CASES[name]
    ours = jax.jit(jax.shard_map(body, mesh=MESH24 if two else MESH8, in_specs=ins,
                                 out_specs=outs, check_vma=False))
    theirs = JAX.jit(JAX.shard_map(_as_jax(body), mesh=REAL24 if two else REAL8,
                                   in_specs=JAX.P(*ins), out_specs=JAX.P(*outs),
                                   check_vma=False))
    return ours, theirs


def _layout(out):
    return sorted((s.device.id, str(s.index)) for s in out.addressable_shards)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_dtypes_and_layouts_match_jax(name):
    ours, theirs = _programs(name)
    got, want = ours(X), theirs(X)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-5)
    assert _layout(got) == _layout(want)


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_gradients_match_jax(name):
    ours, theirs = _programs(name)
    w = np.random.default_rng(1).normal(size=theirs(X).shape).astype(np.float32)
    g = jax.grad(lambda v: (ours(v) * w).sum())(X)
    h = JAX.grad(lambda v: (theirs(v) * w).sum())(X)
    np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-5, atol=1e-4)


def test_multi_axis_gather_order_is_row_major_over_the_names_given():
    """Device (ix, iy) of the 2x4 mesh is lane 4*ix + iy for ('x', 'y'), ix + 2*iy for
    ('y', 'x'): checked against the hand-computed order, independent of JAX."""
    idx = np.arange(8).reshape(2, 4)
    for names, order in ((("x", "y"), idx.ravel()), (("y", "x"), idx.T.ravel())):
        out = jax.shard_map(lambda v: lax.all_gather(v, names)[:, 0, 0], mesh=MESH24,
                            in_specs=XY, out_specs=P(), check_vma=False)(X)
        np.testing.assert_array_equal(out, X[order, 0])


def _nested(body):
    return jax.vmap(jax.vmap(body, axis_name="b"), axis_name="a")(X.reshape(2, 4, 4))


def test_under_nested_vmap_where_jax_fails_with_assertion_errors():
    """JAX's vmap batching rules of multi-axis all_gather and ppermute fail with
    AssertionError ('axis size doesn't match'); refjax computes what shard_map computes,
    checked here against hand-computed lanes (lane (a, b) is 4a + b)."""
    gather = lambda v: lax.all_gather(v, ("a", "b"))  # noqa: E731
    with pytest.raises(AssertionError):
        JAX.vmap(JAX.vmap(_as_jax(gather), axis_name="b"), axis_name="a")(X.reshape(2, 4, 4))
    np.testing.assert_array_equal(_nested(gather), np.broadcast_to(X, (2, 4, 8, 4)))
    index = _nested(lambda v: lax.axis_index(("b", "a")))
    np.testing.assert_array_equal(index, np.arange(8).reshape(4, 2).T)
    moved = np.asarray(_nested(lambda v: lax.ppermute(v, ("b", "a"), RING))).reshape(8, 4)
    np.testing.assert_array_equal(moved, X[[(lane - 3) % 8 for lane in range(8)]])
    scattered = _nested(lambda v: lax.psum_scatter(jnp.tile(v, 8), ("a", "b"), tiled=True))
    np.testing.assert_allclose(np.asarray(scattered).reshape(8, 4),
                               np.tile(X.sum(0), 8).reshape(8, 4), rtol=1e-5)


def test_all_to_all_over_two_axes_transposes_where_jax_fails():
    """JAX's transpose of the untiled all_to_all over ('y', 'x') fails ('Expected cotangent
    type float32[8,4,1] but got float32[8,1,4]'); refjax's passes the dot-product test."""
    ours, theirs = _programs("all_to_all_yx")
    w = np.random.default_rng(1).normal(size=theirs(X).shape).astype(np.float32)
    with pytest.raises(ValueError, match="Expected cotangent type"):
        JAX.grad(lambda v: (theirs(v) * w).sum())(X)
    g = jax.grad(lambda v: (ours(v) * w).sum())(X)
    np.testing.assert_allclose(np.vdot(np.asarray(ours(X)), w), np.vdot(X, np.asarray(g)),
                               rtol=1e-4)


def test_groups_under_vmap_are_computed_where_jax_refuses():
    """JAX: NotImplementedError ('axis_index_groups not supported in vmap'); refjax computes
    them as under pmap and shard_map (checked against a Python loop over the groups)."""
    f = lambda v: lax.psum(v, "i", axis_index_groups=G)  # noqa: E731
    with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap"):
        JAX.vmap(_as_jax(f), axis_name="i")(X)
    want = np.empty_like(X)
    for g in G:
        want[g] = X[g].sum(0)
    np.testing.assert_allclose(jax.vmap(f, axis_name="i")(X), want, rtol=1e-6)


def test_bad_groups_raise_value_errors():
    """JAX fails non-covering groups with an XLA INTERNAL error (hlo verifier) or 'Invalid
    replica id -1'; refjax names the rule, as JAX's own check for pmap does."""
    def run(body):
        return jax.shard_map(body, mesh=MESH8, in_specs=P("i"), out_specs=P("i"),
                             check_vma=False)(X)
    with pytest.raises(ValueError, match="must cover all indices exactly once"):
        run(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2], [3, 4, 5, 6]]))
    with pytest.raises(ValueError, match="all_gather: Replica groups must be equally sized"):
        run(lambda v: lax.all_gather(v, "i", axis_index_groups=UNEVEN))
    with pytest.raises(ValueError, match="must equal x.shape\\[split_axis\\]|size"):
        run(lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=G))
    with pytest.raises(ValueError, match="must cover all indices exactly once"):
        run(lambda v: lax.all_gather(v, "i", axis_index_groups=[[0, 1], [2, 3]]))


def test_multi_axis_errors_name_the_problem():
    def run(body):
        return jax.shard_map(body, mesh=MESH24, in_specs=XY, out_specs=XY, check_vma=False)(X)
    with pytest.raises(ValueError, match="outside the axis of size 8"):
        run(lambda v: lax.ppermute(v, ("x", "y"), [(0, 8)]))
    with pytest.raises(NameError, match="unbound axis name 'z'"):
        run(lambda v: lax.all_gather(v, ("x", "z")))
    with pytest.raises(ValueError, match="must be divisible by"):
        run(lambda v: lax.psum_scatter(v, ("x", "y"), tiled=True))
