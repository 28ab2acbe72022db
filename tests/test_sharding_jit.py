"""Layouts: device_put, propagation through jit (the seed notebook's examples), constraints,
memory kinds, and layouts compared shard by shard with real JAX."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax as jax
import refjax.numpy as jnp
from refjax.sharding import NamedSharding, PartitionSpec as P

pytestmark = pytest.mark.backends("numpy_ref", "xla")

ARR = np.arange(32.0, dtype=np.float32).reshape(4, 8)


@pytest.fixture
def mesh():
    return jax.make_mesh((2, 4), ("x", "y"))


def layout(a):
    """device id -> index slices as (start, stop) pairs, for comparing layouts."""
    shape = a.shape
    return {s.device.id: tuple(sl.indices(d)[:2] for sl, d in zip(s.index, shape))
            for s in a.addressable_shards}


def real_mesh_and_put(spec):
    devs = np.array(real_jax.devices()[:8]).reshape(2, 4)
    m = real_jax.sharding.Mesh(devs, ("x", "y"))
    return real_jax.device_put(ARR, real_jax.sharding.NamedSharding(m, real_jax.sharding.PartitionSpec(*spec)))


def test_device_put_layout_matches_devices_indices_map(mesh):
    s = NamedSharding(mesh, P("x", "y"))
    a = jax.device_put(jnp.asarray(ARR), s)
    assert a.sharding == s
    assert layout(a) == {d.id: tuple(sl.indices(n)[:2] for sl, n in zip(idx, ARR.shape))
                         for d, idx in s.devices_indices_map(ARR.shape).items()}
    for shard in a.addressable_shards:
        np.testing.assert_array_equal(shard.data, ARR[shard.index])
    np.testing.assert_array_equal(np.asarray(a), ARR)
    assert layout(a) == layout(real_mesh_and_put(("x", "y")))


def test_elementwise_keeps_sharding_and_contract_drops_axis(mesh):
    a = jax.device_put(ARR, NamedSharding(mesh, P("x", "y")))
    result = jax.jit(lambda x: 2 * jnp.sin(x) + 1)(a)
    assert result.sharding == a.sharding
    # XLA's float32 sin and NumPy's may differ by an ulp; `+ 1` cancels where 2 * sin(x) is
    # near -1, so the bound there is absolute: two ulps (float32 eps) of the O(1) terms.
    np.testing.assert_allclose(np.asarray(result), 2 * np.sin(ARR) + 1, rtol=1e-6,
                               atol=2 * np.finfo(np.float32).eps)
    contracted = jax.jit(lambda x: x.sum(axis=0))(a)
    np.testing.assert_array_equal(np.asarray(contracted), ARR.sum(0))
    assert contracted.sharding.spec == P("y")
    real = real_jax.jit(lambda x: x.sum(axis=0))(real_mesh_and_put(("x", "y")))
    assert layout(contracted) == layout(real)


def test_with_sharding_constraint(mesh):
    a = jax.device_put(ARR, NamedSharding(mesh, P("x", "y")))

    def f(x):
        return jax.lax.with_sharding_constraint(x.sum(axis=0), NamedSharding(mesh, P("x")))

    out = jax.jit(f)(a)
    assert out.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(out), ARR.sum(0))
    assert np.asarray(out.addressable_shards[0].data).shape == (4,)


def test_memory_kinds_through_jit(mesh):
    s_host = NamedSharding(mesh, P("x", "y"), memory_kind="pinned_host")
    s_dev = s_host.with_memory_kind("device")
    arr_host = jax.device_put(ARR, s_host)
    assert arr_host.sharding.memory_kind == "pinned_host"
    out_dev = jax.jit(lambda x: x, out_shardings=s_dev)(arr_host)
    assert out_dev.sharding.memory_kind == "device"
    out_host = jax.jit(lambda x: x, out_shardings=s_host)(jax.device_put(ARR, s_dev))
    assert out_host.sharding.memory_kind == "pinned_host"
    np.testing.assert_array_equal(np.asarray(out_host), ARR)


def test_visualize_array_sharding_draws_jax_table(mesh, capsys):
    """JAX's rich table, character for character, for a placed 2-d array on both backends."""
    for spec in [("x", "y"), (None, "y"), ("y", "x"), ()]:
        jax.debug.visualize_array_sharding(jax.device_put(ARR, NamedSharding(mesh, P(*spec))))
        ours = capsys.readouterr().out
        real_jax.debug.visualize_array_sharding(real_mesh_and_put(spec))
        assert ours == capsys.readouterr().out, spec


def test_invalid_specs_raise_value_error(mesh):
    with pytest.raises(ValueError):
        jax.device_put(ARR, NamedSharding(mesh, P("x", "x")))
    with pytest.raises(ValueError):
        jax.device_put(ARR, NamedSharding(mesh, P("z")))
    with pytest.raises(ValueError):
        jax.device_put(ARR, NamedSharding(mesh, P("x", "y", None)))
    with pytest.raises(ValueError):
        jax.device_put(np.ones((3, 8), np.float32), NamedSharding(mesh, P("x")))


def test_layer_variants_agree():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(32,)), rng.normal(size=(32, 4)), rng.normal(size=(4,))
    mesh1 = jax.make_mesh((8,), ("x",))
    s = NamedSharding(mesh1, P("x"))
    layer = jax.jit(lambda x, w, b: jax.nn.sigmoid(x @ w + b))
    ref = 1 / (1 + np.exp(-(x.astype(np.float32) @ w.astype(np.float32) + b.astype(np.float32))))
    np.testing.assert_allclose(np.asarray(layer(x, w, b)), ref, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(layer(jax.device_put(x, s), jax.device_put(w, s), b)),
                               ref, rtol=1e-5)

    @jax.jit
    def layer_auto(x, w, b):
        x = jax.lax.with_sharding_constraint(x, s)
        w = jax.lax.with_sharding_constraint(w, s)
        return layer(x, w, b)

    np.testing.assert_allclose(np.asarray(layer_auto(x, w, b)), ref, rtol=1e-5)


def test_gradients_come_back_where_the_inputs_live(mesh):
    """grad's seed cotangent is placed like the output, as JAX's is: the gradient of a value
    on device 3 lives on device 3, and a sharded input gets a gradient sharded like it."""
    x = np.arange(4.0, dtype=np.float32)
    on3 = jax.device_put(x, jax.devices()[3])
    g = jax.grad(lambda v: (v * 2).sum())(on3)
    real = real_jax.grad(lambda v: (v * 2).sum())(real_jax.device_put(x, real_jax.devices()[3]))
    assert {d.id for d in g.devices()} == {d.id for d in real.devices()} == {3}
    np.testing.assert_array_equal(np.asarray(g), np.full(4, 2.0, np.float32))
    sharded = jax.device_put(ARR, NamedSharding(mesh, P("x", "y")))
    g = jax.grad(lambda v: jnp.sin(v).sum())(sharded)
    real = real_jax.grad(lambda v: real_jax.numpy.sin(v).sum())(real_mesh_and_put(("x", "y")))
    assert g.sharding.spec == P("x", "y") and layout(g) == layout(real)
    np.testing.assert_allclose(np.asarray(g), np.cos(ARR), rtol=1e-6)


def _output_names(jax, jnp):
    """The specs jit results report on a mesh of Auto axes, in the cases that decide JAX's
    naming: the first argument read (its sharding when the layout is its; unread ones skipped),
    else the canonical spec; jit's own out_shardings kept (an inner jit's not); eager
    operations named as jits."""
    P, wsc = jax.P, jax.lax.with_sharding_constraint
    mesh = jax.make_mesh((4, 2), ("X", "Y"), (jax.sharding.AxisType.Auto,) * 2)
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.arange(32.).reshape(8, 4), P(None, "X"))
        y = jax.device_put(jnp.arange(64.).reshape(4, 16), P("X", None))
        runs = [jax.jit(lambda x, y: wsc(jnp.dot(x, y), P("X", None)))(x, y),
                jax.jit(lambda y: wsc(y * 2, P("X", None)))(y),
                jax.jit(lambda x, y: wsc(y + 1, P("X", None)))(x, y),
                jax.jit(lambda x: wsc(x.reshape(2, 4, 4), P(None, ("X",), None)))(x),
                jax.jit(lambda x: x * 2, out_shardings=P("X", None))(x),
                jax.jit(lambda x: jax.jit(lambda w: w * 2, out_shardings=P("X", None))(x))(x),
                jax.jit(lambda: wsc(jnp.ones((8, 4)), P("X", None)))(),
                jax.lax.with_sharding_constraint(x * 2, P("X", None))]
        # eager operations are jits of one equation: named by the same rule
        z = jax.device_put(jnp.ones((8, 4)), P(("X",), None))
        runs += [y * 2, jnp.sin(y), z + 1]
        # operands laid out differently: merged dimension by dimension, the first one's axes
        # first, replicated where they clash
        for a, b in [(P("X", None), P(None, "Y")), (P(None, "Y"), P("X", None)),
                     (P("X", None), P("Y", None)), (P("X", None), P(None, "X")),
                     (P(None, "X"), P("X", None)), (P("X", "Y"), P("Y", "X")),
                     (P("X", None), P("Y", "X")), (P(None, "X"), P("X", "Y")),
                     (P(None, "Y"), P("Y", "X"))]:
            u, v = (jax.device_put(jnp.ones((8, 8)), s) for s in (a, b))
            runs += [u + v, jax.jit(lambda u, v: u * v + 1)(u, v)]
        # an array with no elements: XLA replicates it (a reference's reads too)
        e = jax.device_put(jnp.zeros((0, 4)), P("X", None))
        runs += [e * 2, jax.jit(lambda e: jnp.sin(e).T)(e), jax.jit(lambda e: e)(e),
                 jax.jit(lambda e: jax.new_ref(e)[...])(e)]
        return [str(r.sharding.spec) for r in runs]


def test_jit_outputs_name_their_shardings_as_jax():
    assert _output_names(jax, jnp) == on_jax(lambda lib: _output_names(lib, lib.numpy))
