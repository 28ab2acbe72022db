"""The namespaces the sharding work owns compared with JAX 0.10.2's by dir(): jax.sharding,
jax.experimental.pjit, jax.experimental.shard_map, the top-level device API and Array's
placement methods. Every name refjax still lacks is listed with its reason; a name added
to refjax, or one JAX drops, makes the lists stale and the test fail."""
import warnings

import jax
import jax.experimental.pjit
import jax.experimental.shard_map
import pytest

import refjax

SHARDING_LACKS = {}
SHARDING_EXTRA = {"Device": "refjax.sharding.Device is the device class (kept from before)"}
SHARD_MAP_LACKS = {"jshmap": "JAX's internal module alias", "traceback_util": "JAX internal"}
SHARD_MAP_EXTRA = {"shard_map": "JAX 0.10 keeps it only behind a deprecation __getattr__"}
DEVICE_API = ["devices", "local_devices", "device_count", "local_device_count",
              "process_count", "process_index", "process_indices", "host_count", "host_id",
              "host_ids", "default_backend", "device_put", "device_get", "copy_to_host_async", "block_until_ready",
              "make_mesh", "make_array_from_callback", "make_array_from_single_device_arrays",
              "make_array_from_process_local_data", "shard_map", "live_arrays", "clear_caches",
              "typeof", "reshard", "set_mesh", "NamedSharding", "P", "Device"]
ARRAY_PLACEMENT = ["delete", "is_deleted", "device", "devices", "committed", "sharding",
                   "on_device_size_in_bytes", "copy_to_host_async", "block_until_ready",
                   "addressable_shards", "global_shards", "addressable_data", "is_ready",
                   "is_fully_replicated", "is_fully_addressable"]


def public(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {n for n in dir(module) if not n.startswith("_")}


@pytest.mark.parametrize("ours, theirs, lacks, extra", [
    (refjax.sharding, jax.sharding, SHARDING_LACKS, SHARDING_EXTRA),
    (refjax.experimental.pjit, jax.experimental.pjit, {}, {}),
    (refjax.experimental.shard_map, jax.experimental.shard_map, SHARD_MAP_LACKS,
     SHARD_MAP_EXTRA),
], ids=["sharding", "pjit", "shard_map"])
def test_namespace_as_jax(ours, theirs, lacks, extra):
    assert public(theirs) - public(ours) == set(lacks)
    assert public(ours) - public(theirs) == set(extra)


def test_pjit_is_reachable_as_jax_warns():
    with pytest.warns(DeprecationWarning, match="pjit has been deprecated"):
        from refjax.experimental.pjit import pjit
    assert pjit.__name__ == "pjit"


# in the seed document's API list, removed from JAX before 0.10 (refjax keeps them)
SEED_ONLY = ["device_put_sharded", "device_put_replicated"]


def test_device_api_names_exist_in_both():
    assert [n for n in DEVICE_API if not hasattr(jax, n)] == []
    assert [n for n in DEVICE_API + SEED_ONLY if not hasattr(refjax, n)] == []
    assert [n for n in SEED_ONLY if hasattr(jax, n)] == []


def test_array_placement_methods_exist_in_both():
    theirs, ours = jax.numpy.ones(2), refjax.numpy.ones(2)
    assert [n for n in ARRAY_PLACEMENT if not hasattr(theirs, n)] == []
    assert [n for n in ARRAY_PLACEMENT if not hasattr(ours, n)] == []
