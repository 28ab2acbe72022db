"""make_array_from_*, device_put_sharded/replicated: values and layouts against real JAX."""
import jax as real_jax
import numpy as np

import refjax as jax
from refjax.sharding import NamedSharding, PartitionSpec as P

DATA = np.arange(32.0, dtype=np.float32).reshape(4, 8)


def _layout(a):
    return sorted((s.device.id, tuple(sl.indices(n)[:2] for sl, n in zip(s.index, a.shape)))
                  for s in a.addressable_shards)


def _real_sharding(spec):
    mesh = real_jax.sharding.Mesh(np.array(real_jax.devices()[:8]).reshape(2, 4), ("x", "y"))
    return real_jax.sharding.NamedSharding(mesh, real_jax.sharding.PartitionSpec(*spec))


def test_make_array_from_callback_matches_jax():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    for spec in [("x", "y"), (None, "y"), ("y",), ()]:
        ours = jax.make_array_from_callback(DATA.shape, NamedSharding(mesh, P(*spec)),
                                            lambda idx: DATA[idx])
        theirs = real_jax.make_array_from_callback(DATA.shape, _real_sharding(spec),
                                                   lambda idx: DATA[idx])
        np.testing.assert_array_equal(np.asarray(ours), DATA)
        assert _layout(ours) == _layout(theirs)
        for s in ours.addressable_shards:
            np.testing.assert_array_equal(s.data, DATA[s.index])


def test_single_device_arrays_and_process_local_data():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    pieces = [DATA[idx] for idx in s.devices_indices_map(DATA.shape).values()]
    a = jax.make_array_from_single_device_arrays(DATA.shape, s, pieces)
    np.testing.assert_array_equal(np.asarray(a), DATA)
    assert a.sharding == s
    b = jax.make_array_from_process_local_data(s, DATA)
    np.testing.assert_array_equal(np.asarray(b), DATA)


def test_device_put_sharded_and_replicated():
    devs = jax.devices()[:4]
    a = jax.device_put_sharded([DATA[i] for i in range(4)], devs)
    np.testing.assert_array_equal(np.asarray(a), DATA)
    assert [s.device.id for s in a.addressable_shards] == [0, 1, 2, 3]
    for i, s in enumerate(a.addressable_shards):
        np.testing.assert_array_equal(s.data, DATA[i:i + 1])
    r = jax.device_put_replicated(DATA[0], devs)
    assert r.shape == (4, 8)
    np.testing.assert_array_equal(np.asarray(r), np.stack([DATA[0]] * 4))
