"""Sharding types on Explicit mesh axes where refjax lagged JAX (issue #15's remaining gaps):
`.at[...]` updates of sharded arrays (the updates resharded to the operand's slice type),
dynamic indexing under vmap (a gather), typing rules of collectives, callbacks, RNG, tile,
stack and ragged_dot_general, and vmap's check of how mapped inputs are sharded. Each
program runs on real JAX 0.10.2 (8 CPU devices) and on refjax and is compared: typeof text,
values, layouts shard by shard, error classes (and ShardingTypeErrors' messages)."""
import numpy as np
import pytest

from test_explicit_sharding import put, same_as_jax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def each(lib, show, fs, *args, worded=("ShardingTypeError",)):
    """Every f(*args), eagerly and under jit: the types shown, the results returned; a
    refused program shows its error (class, and the first words of those `worded`)."""
    outs = []
    for f in fs:
        for g in (f, lib.jit(f)):
            try:
                out = g(*args)
            except Exception as e:
                show(type(e).__name__, str(e)[:120] if type(e).__name__ in worded else "")
                continue
            show(lib.typeof(out))
            outs.append(out)
    return tuple(outs)


def updates(lib, k):
    idx = lib.numpy.array([1, 3])
    return [lambda x: x.at[1].set(5.0), lambda x: x.at[2:6].add(1.0),
            lambda x: x.at[idx].multiply(2.0), lambda x: x.at[-1].min(10.0),
            lambda x: x.at[idx].max(x[0]), lambda x: x.at[idx].get(),
            lambda x: x.at[1:3].set(lib.numpy.ones((2, 8))), lambda x: x.at[idx, 1:3].add(7.0),
            lambda x: x.at[::-2].subtract(1.0)][k]


@pytest.mark.parametrize("spec", [(None, "Y"), (None, ("X", "Y"))])
def test_at_updates_reshard_the_updates_to_the_operands_slice(spec):
    """The operand sharded along dimensions the index leaves whole: the updates (a scalar, a
    row, a replicated block) take the slice's type and the scatter keeps the operand's; a
    slice the mesh axis does not divide is refused (JAX's ValueError) when typed."""
    def program(lib, show):
        return each(lib, show, [updates(lib, k) for k in range(9)], put(lib, (8, 8), *spec))
    shown = same_as_jax(program)
    assert [s for s in shown if "Error" in str(s)] == ["ValueError "] * 2


def test_at_updates_along_a_sharded_dimension_are_refused_as_by_jax():
    def program(lib, show):
        return each(lib, show, [updates(lib, k) for k in (0, 2, 5, 7)],
                    put(lib, (8, 8), "X", "Y"))
    shown = same_as_jax(program)
    assert sum("Error" in str(s) for s in shown) == 8


# ---------------------------------------------------------------- dynamic indexing under vmap

def lane_programs(lib):
    lax, jnp = lib.lax, lib.numpy
    return [lambda r, ks: lib.vmap(lambda k: r[k])(ks),
            lambda r, ks: lib.vmap(lambda k: lax.dynamic_slice_in_dim(r, k, 2))(ks),
            lambda r, ks: lib.vmap(lambda k, row: r[k] * row)(ks, jnp.ones((4, 4))),
            lambda r, ks: lib.vmap(lambda k, u: lax.dynamic_update_slice(r, u, (k, 0)))(
                ks, jnp.ones((4, 1, 4), np.float32)),
            lambda r, ks: lib.vmap(lambda k, rr: lax.dynamic_slice(rr, (k, 0), (2, 4)))(
                ks, lib.sharding.reshard(jnp.stack([r] * 4), lib.P(None, None, "Y")))]


@pytest.mark.parametrize("spec", [(None, "Y"), ("X", None)])
def test_dynamic_indexing_under_vmap_is_a_gather(spec):
    """vmap over start indices batches dynamic_slice (and dynamic_update_slice) into one
    gather (scatter), as JAX does: rows of an operand sharded along its columns keep the
    columns' type; along a sharded row dimension JAX's gather refuses, and so does refjax."""
    def program(lib, show):
        ks = lib.numpy.array([0, 3, 5, 9], dtype=np.int32)
        return each(lib, show, lane_programs(lib), put(lib, (8, 4), *spec), ks)
    shown = same_as_jax(program)
    errors = [s for s in shown if "Error" in str(s)]
    assert len(errors) == (2 if spec[0] is None else 8)


def test_vmap_checks_how_its_inputs_are_sharded_along_the_mapped_axis():
    """Mapped inputs sharded alike along the mapped dimension are mapped (the type inside
    drops it); otherwise JAX's ValueErrors: inconsistent specs, an unmapped input sharded
    over the vmapped mesh axis, an spmd_axis_name naming other axes."""
    def program(lib, show):
        x, y = put(lib, (8, 4), "X", None), put(lib, (8, 4), "X", "Y")
        z, w = put(lib, (8, 4), None, "Y"), put(lib, (4, 8), None, "X")
        inside = lambda a, b: (show(lib.typeof(a), lib.typeof(b)), a * 2.0)[1]  # noqa: E731
        fs = [lambda: lib.vmap(inside)(x, y), lambda: lib.vmap(inside)(x, z),
              lambda: lib.vmap(inside, in_axes=(0, 1))(x, w),
              lambda: lib.vmap(inside, in_axes=(0, None))(x, y),
              lambda: lib.vmap(inside, in_axes=(0, None))(z, w),
              lambda: lib.vmap(inside, spmd_axis_name="Y")(x, y),
              lambda: lib.vmap(inside, spmd_axis_name="X")(x, y),
              lambda: lib.vmap(lambda a, b: a + b)(x, np.ones((8, 4), np.float32))]
        return each(lib, show, [lambda f=f: f() for f in fs], worded=("ValueError",))
    shown = same_as_jax(program)
    assert sum("ValueError" in str(s) for s in shown) == 8
