"""The seed documents' device API and Array's placement methods, each scenario run on refjax
(both backends) and on real JAX side by side: live_arrays, process_indices, host_ids,
copy_to_host_async, Array.delete / is_deleted (a deleted array raises on use), device,
committed, on_device_size_in_bytes, lax.axis_size."""
import numpy as np
import pytest
from side_by_side import both

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def mesh_of(jax, shape=(4, 2)):
    return jax.make_mesh(shape, ("x", "y")[:len(shape)],
                         axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def placement_scenario(jax, jnp):
    mesh = mesh_of(jax)
    a = jnp.ones((8, 2))
    s = jax.NamedSharding(mesh, jax.P("x"))
    b = jax.device_put(a, s)
    on0 = jax.device_put(a, jax.devices()[0])
    return [
        lambda: a.committed, lambda: (a + 1).committed, lambda: jax.jit(lambda x: x)(a).committed,
        lambda: jax.device_put(a).committed, lambda: on0.committed, lambda: (on0 + 1).committed,
        lambda: jax.device_put(np.ones(2)).committed, lambda: b.committed,
        lambda: (b + 1).committed, lambda: (b + a).committed,
        lambda: jax.jit(lambda x: x.sum())(b).committed,
        lambda: jax.jit(lambda x: x, out_shardings=s)(a).committed,
        lambda: jax.jit(lambda x: x, in_shardings=s)(a).committed,
        lambda: jax.jit(lambda x: jax.lax.with_sharding_constraint(x, s))(a).committed,
        lambda: a.device, lambda: on0.device, lambda: b.device,
        lambda: jax.device_put(a, jax.devices()[3]).device,
        lambda: b.on_device_size_in_bytes(), lambda: a.on_device_size_in_bytes(),
        lambda: jax.device_put(a, jax.NamedSharding(mesh, jax.P())).on_device_size_in_bytes(),
        lambda: jax.device_put(jnp.ones((8, 8)),
                               jax.NamedSharding(mesh, jax.P("y", "x"))).on_device_size_in_bytes(),
        lambda: jnp.zeros(3, jnp.bool_).on_device_size_in_bytes(),
        lambda: jnp.zeros((), jnp.int8).on_device_size_in_bytes(),
        lambda: jnp.zeros(0).on_device_size_in_bytes(),
        lambda: jnp.zeros((3, 5), jnp.bfloat16).on_device_size_in_bytes(),
        lambda: [(b.addressable_data(i), b.addressable_data(i).sharding,
                  b.addressable_data(i).committed) for i in (0, 3, 7)],
        lambda: (a.addressable_data(0), a.addressable_data(0).sharding),
        lambda: a.is_ready(), lambda: b.is_ready(),
        lambda: jax.sharding.make_single_device_sharding(jax.devices()[2]),
    ]


def test_committed_device_and_size_as_jax():
    theirs, ours = both(placement_scenario)
    assert ours == theirs


def test_committed_jit_fast_path_keeps_commitment():
    """A jitted function seen with uncommitted arguments, then called with committed ones of
    the same types: the results are committed (the fast path must not take them)."""
    f = refjax.jit(lambda x: x * 2)
    a = refjax.numpy.ones(3)
    assert not f(a).committed and not f(a).committed
    c = refjax.device_put(a, refjax.devices()[0])
    assert f(c).committed and not f(a).committed


def deleted_scenario(jax, jnp):
    a = jnp.arange(3.0)
    b = a * 2
    a.delete()
    f = jax.jit(lambda x: x * 2)
    return [
        lambda: a.is_deleted(), lambda: b.is_deleted(), lambda: a.shape, lambda: a.dtype,
        lambda: a.sharding, lambda: a.committed, lambda: a.is_fully_replicated,
        lambda: a.delete(), lambda: a.is_deleted(),
        lambda: a.block_until_ready(), lambda: a.device, lambda: a.on_device_size_in_bytes(),
        lambda: a.addressable_shards, lambda: a.copy_to_host_async(),
        lambda: jax.copy_to_host_async([a]), lambda: jax.device_get(a), lambda: repr(a),
        lambda: str(a), lambda: np.asarray(a), lambda: a[0], lambda: a.item(0), lambda: a + 1,
        lambda: f(a), lambda: f(b), lambda: f(a), lambda: jax.jit(lambda y: y + a)(1.0),
        lambda: jnp.sum(a), lambda: b,
    ]


def test_deleted_array_raises_on_use_as_jax():
    theirs, ours = both(deleted_scenario)
    assert ours == theirs
    assert ("RuntimeError", "Array has been deleted with shape=float32[3].") in ours


def test_deleted_array_error_classes():
    """Also is_ready of a deleted array, where JAX 0.10.2 crashes the process (segmentation
    fault): refjax raises the RuntimeError other uses give."""
    a = refjax.numpy.ones(2)
    a.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32"):
        a.is_ready()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        a.addressable_data(0)
    with pytest.raises(refjax.errors.JaxRuntimeError, match="deleted or donated buffer"):
        a.block_until_ready()
    assert issubclass(refjax.errors.JaxRuntimeError, RuntimeError)


def test_live_arrays_tracks_creation_and_deletion():
    a = refjax.numpy.arange(5.0)
    b = a + 1
    ids = {id(x) for x in refjax.live_arrays()}
    assert id(a) in ids and id(b) in ids
    b.delete()
    ids = {id(x) for x in refjax.live_arrays()}
    assert id(a) in ids and id(b) not in ids
    other = "xla" if refjax.current_backend_name() == "numpy_ref" else "numpy_ref"
    with refjax.backend(other):
        c = refjax.numpy.zeros(2)
    assert id(c) not in {id(x) for x in refjax.live_arrays()}
    assert all(type(x) is type(a) for x in refjax.live_arrays())


def process_scenario(jax, jnp):
    x = jnp.ones(3)
    return [lambda: jax.process_indices(), lambda: jax.host_ids(), lambda: jax.process_count(),
            lambda: jax.process_index(), lambda: jax.host_count(), lambda: jax.host_id(),
            lambda: jax.copy_to_host_async(x) is x, lambda: jax.copy_to_host_async([x, 1.0]),
            lambda: jax.jit(lambda v: jax.copy_to_host_async(v) * 2)(x),
            lambda: len(jax.local_devices()), lambda: jax.local_device_count(),
            lambda: jax.device_count(), lambda: jax.devices()[5], lambda: jax.default_backend(),
            lambda: type(jax.live_arrays()).__name__]


def test_process_and_host_functions_as_jax():
    theirs, ours = both(process_scenario)
    assert ours == theirs


def test_host_ids_warns_as_jax():
    with pytest.warns(UserWarning, match="renamed to jax.process_indices"):
        assert refjax.host_ids() == [0]


def traced_scenario(jax, jnp):
    x = jnp.ones(3)
    return [lambda: jax.jit(lambda v: v.committed)(x), lambda: jax.jit(lambda v: v.delete())(x),
            lambda: jax.jit(lambda v: v.is_deleted())(x),
            lambda: jax.jit(lambda v: v.on_device_size_in_bytes())(x)]


def test_placement_methods_on_tracers_raise_as_jax():
    theirs, ours = both(traced_scenario)
    assert [c for c, _ in ours] == [c for c, _ in theirs]


def axis_size_scenario(jax, jnp):
    mesh = mesh_of(jax)
    inp = np.arange(16).reshape(8, 2)

    def smap(body):
        return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P("x")))
    return [lambda: jax.lax.axis_size("x"),
            lambda: smap(lambda x: x * jax.lax.axis_size("x"))(inp),
            lambda: smap(lambda x: x * jax.lax.axis_size(("x", "y")))(inp),
            lambda: smap(lambda x: x * jax.lax.axis_size("y"))(inp),
            lambda: jax.vmap(lambda x: x * jax.lax.axis_size("i"), axis_name="i")(inp),
            lambda: jax.vmap(jax.vmap(lambda x: x * jax.lax.axis_size(("i", "j")), axis_name="j"),
                             axis_name="i")(inp)]


def test_axis_size_as_jax():
    theirs, ours = both(axis_size_scenario)
    assert [c for c, _ in ours] == [c for c, _ in theirs]
    assert [r for c, r in ours if c == "ok"] == [r for c, r in theirs if c == "ok"]
