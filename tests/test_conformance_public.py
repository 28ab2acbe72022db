"""The public names a backend or conformance test written outside refjax needs, checked against
JAX 0.10.2: refjax.Shard (jax.Shard), refjax.extend.core.primitives (jax.extend.core.primitives,
with jit_p), refjax.backends' interface; and the contrib backend importing only those."""
import ast
import pathlib

import jax as real_jax
import jax.extend.core.primitives as jax_primitives
import numpy as np
import pytest

import refjax
import refjax.backends
import refjax.extend.core
import refjax.extend.core.primitives as primitives
from refjax.sharding import Mesh, NamedSharding, PartitionSpec as P

CONTRIB = pathlib.Path(__file__).resolve().parent.parent / "contrib" / "refjax-array-api" / "src"

# JAX's primitives refjax does not have (so jax.extend.core.primitives names them and refjax's
# does not), each with the reason; every other name must be refjax's primitive of that name.
TOKENS = "tokens and effects ordering: refjax orders effects without tokens"
TYPED_KEYS = "random keys are uint32 arrays in refjax (JAX: typed key arrays and random_* primitives)"
REFS = "refs and mutable state: not implemented yet"
MISSING = {
    "after_all_p": TOKENS, "create_token_p": TOKENS,
    "call_p": "refjax's call-like primitives are jit and closed calls under their own names",
    "closed_call_p": "refjax's call-like primitives are jit and closed calls under their own names",
    "device_put_p": "device_put is an operation on Arrays, not a staged primitive in refjax",
    "empty2_p": "JAX's partial evaluation of cond; refjax keeps residuals otherwise",
    "eq_to_p": "JAX-internal dynamic shapes", "le_to_p": "JAX-internal dynamic shapes",
    "lt_to_p": "JAX-internal dynamic shapes",
    "random_bits_p": TYPED_KEYS, "random_fold_in_p": TYPED_KEYS, "random_gamma_p": TYPED_KEYS,
    "random_seed_p": TYPED_KEYS, "random_split_p": TYPED_KEYS, "threefry2x32_p": TYPED_KEYS,
    "select_and_scatter_p": "the generic select_and_scatter is another engineer's part (rng)",
    "get_p": REFS, "swap_p": REFS,
}


def _jax_names():
    return sorted(n for n in dir(jax_primitives) if n.endswith("_p"))


@pytest.mark.parametrize("name", _jax_names())
def test_each_jax_primitive_name_is_refjaxs_primitive_or_listed(name):
    if name in MISSING:
        assert name not in dir(primitives)  # (remove it from MISSING when it arrives)
        with pytest.raises(AttributeError, match=name):
            getattr(primitives, name)
        return
    ours = getattr(primitives, name)
    assert isinstance(ours, refjax.extend.core.Primitive)
    assert ours.name == getattr(jax_primitives, name).name


def test_jit_p_is_the_primitive_jit_stages():
    closed = refjax.make_jaxpr(refjax.jit(lambda x: x * 2))(1.0)
    assert closed.jaxpr.eqns[0].primitive is primitives.jit_p
    from refjax.extend.core.primitives import jit_p, sin_p  # the `from` form a backend uses
    assert (jit_p.name, sin_p.name) == ("jit", "sin")
    assert "jit_p" in dir(primitives) and "jit_p" not in dir(refjax.lax)  # as in JAX
    assert not hasattr(real_jax.lax, "jit_p")


def test_primitives_registered_later_are_listed():
    from refjax.core.primitive import _REGISTRY, make_primitive
    prim = make_primitive("conf2_late-one")
    try:
        assert primitives.conf2_late_one_p is prim and "conf2_late_one_p" in dir(primitives)
    finally:
        del _REGISTRY["conf2_late-one"]
    with pytest.raises(AttributeError, match="refjax.extend.core.primitives.*conf2_late_one_p"):
        primitives.conf2_late_one_p


# ---------------------------------------------------------------- refjax.Shard

def _shards(array):
    return [(s.device.id, s.index, s.replica_id, np.asarray(s.data).tolist(), s.data.dtype,
             [d.id for d in s.data.devices()]) for s in array.addressable_shards]


@pytest.mark.backends("numpy_ref", "xla")
def test_shards_are_jax_shards(refjax_backend):
    """On a 2x2 mesh split along one axis (so each piece has two replicas), refjax's shards
    are JAX's: devices, indices, replica ids, and data as an Array on the shard's device."""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    ours = refjax.device_put(x, NamedSharding(Mesh(np.array(refjax.devices()[:4]).reshape(2, 2),
                                                   ("a", "b")), P("a")))
    mesh = real_jax.sharding.Mesh(np.array(real_jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    theirs = real_jax.device_put(x, real_jax.sharding.NamedSharding(mesh, real_jax.P("a")))
    assert all(type(s) is refjax.Shard for s in ours.addressable_shards)
    assert _shards(ours) == _shards(theirs)
    assert isinstance(ours.addressable_shards[3].data, refjax.Array)
    assert [s.replica_id for s in ours.addressable_shards] == [0, 1, 0, 1]


@pytest.mark.backends("numpy_ref", "xla")
def test_shard_prints_as_jaxs(refjax_backend):
    ours, theirs = refjax.numpy.arange(3.0), real_jax.numpy.arange(3.0)
    assert repr(ours.addressable_shards[0]) == repr(theirs.addressable_shards[0])
    assert repr(refjax.Shard) != "" and refjax.Shard.__doc__


def test_shard_data_is_a_copy_that_keeps_the_weak_type():
    x = refjax.numpy.asarray(2.0)  # (a weak Python scalar)
    data = refjax.numpy.add(x, 1).addressable_shards[0].data
    assert data.weak_type and float(data) == 3.0
    assert np.asarray(data).flags.writeable is False


# ---------------------------------------------------------------- the backend interface

def test_the_backend_interface_is_public_and_documented():
    names = refjax.backends.__all__
    assert set(names) == {"Backend", "eval_jaxpr", "get_backend", "make_cpu_devices",
                          "register_backend", "register_rule", "run_callback"}
    for name in names:
        assert getattr(refjax.backends, name).__doc__, name
    assert refjax.extend.core.__all__ and all(getattr(refjax.extend.core, n).__doc__
                                              for n in refjax.extend.core.__all__)


PUBLIC_MODULES = {"refjax", "refjax.backends", "refjax.extend", "refjax.extend.core",
                  "refjax.extend.core.primitives", "refjax.sharding", "refjax.numpy",
                  "refjax.lax", "refjax.testing", "refjax.conformance"}


def _refjax_imports(path):
    """(module, names) of each refjax import in a file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((a.name, ()) for a in node.names if a.name.split(".")[0] == "refjax")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "refjax":
            yield node.module, tuple(a.name for a in node.names)


def test_the_contrib_backend_imports_only_public_names():
    found = [(path.name, module, names) for path in sorted(CONTRIB.rglob("*.py"))
             for module, names in _refjax_imports(path)]
    assert found  # (the walk found the package's refjax imports)
    private = [(f, m, n) for f, m, n in found if m not in PUBLIC_MODULES
               or any(x.startswith("_") for x in n)
               or (m == "refjax.backends" and not set(n) <= set(refjax.backends.__all__))]
    assert private == []


def test_the_public_import_check_sees_private_imports(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from refjax.core.jaxpr import eval_jaxpr\nimport refjax.backends.base\n")
    assert list(_refjax_imports(bad)) == [("refjax.core.jaxpr", ("eval_jaxpr",)),
                                          ("refjax.backends.base", ())]
