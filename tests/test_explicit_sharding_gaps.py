"""Sharding types on Explicit mesh axes where refjax lagged JAX (issue #15's remaining gaps):
`.at[...]` updates of sharded arrays (the updates resharded to the operand's slice type),
dynamic indexing under vmap (a gather), typing rules of collectives, callbacks, RNG, tile,
stack and ragged_dot_general, and vmap's check of how mapped inputs are sharded. Each
program runs on real JAX 0.10.2 (8 CPU devices) and on refjax and is compared: typeof text,
values, layouts shard by shard, error classes (and ShardingTypeErrors' messages)."""
import numpy as np
import pytest

import refjax

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


# (the programs come in parts: the default run takes each test's first part, thorough all)
AT_PARTS = [((0,), 0), ((5, 7), 2), ((1, 2, 8), 0), ((3, 4, 6), 0)]


@pytest.mark.parametrize("spec", [(None, "Y"), (None, ("X", "Y"))])
@pytest.mark.parametrize("part", AT_PARTS)
def test_at_updates_reshard_the_updates_to_the_operands_slice(part, spec):
    """The operand sharded along dimensions the index leaves whole: the updates (a scalar, a
    row, a replicated block) take the slice's type and the scatter keeps the operand's; a
    slice the mesh axis does not divide (program 7) is refused (JAX's ValueError) when
    typed."""
    ks, errors = part

    def program(lib, show):
        return each(lib, show, [updates(lib, k) for k in ks], put(lib, (8, 8), *spec))
    shown = same_as_jax(program)
    assert [s for s in shown if "Error" in str(s)] == ["ValueError "] * errors


def test_at_updates_along_a_sharded_dimension_are_refused_as_by_jax():
    def program(lib, show):
        return each(lib, show, [updates(lib, k) for k in (0, 2, 5, 7)],
                    put(lib, (8, 8), "X", "Y"))
    shown = same_as_jax(program)
    assert sum("Error" in str(s) for s in shown) == 8


@pytest.mark.parametrize("part", [(2,), (0, 1)])
def test_at_with_out_sharding_runs_on_auto_axes_as_in_jax(part):
    """out_sharding=, which JAX's refusals ask for, runs the update (or read) with the mesh's
    axes Auto and types the result as given. For x.at[2].get(out_sharding=) under jit JAX
    0.10.2 ignores the out_sharding (it stages a slice, refused on the sharded dimension);
    refjax honours it there too."""
    def program(lib, show):
        idx, P = lib.numpy.array([1, 3]), lib.P
        fs = [lambda x: x.at[1].set(5.0, out_sharding=P("X", "Y")),
              lambda x: x.at[idx].add(1.0, out_sharding=P(None, "Y")),
              lambda x: x.at[idx].get(out_sharding=P(None, "Y"))]
        return each(lib, show, [fs[k] for k in part], put(lib, (8, 8), "X", "Y"))
    assert not [s for s in same_as_jax(program) if "Error" in str(s)]
    mesh = refjax.make_mesh((2, 4), ("X", "Y"),
                            axis_types=(refjax.sharding.AxisType.Explicit,) * 2)
    with refjax.set_mesh(mesh):
        x = put(refjax, (8, 8), "X", "Y")
        row = refjax.jit(lambda x: x.at[2].get(out_sharding=refjax.P("Y")))(x)
        assert str(refjax.typeof(row)) == "float32[8@Y]"
        np.testing.assert_array_equal(np.asarray(row), np.arange(16, 24, dtype=np.float32))


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


@pytest.mark.parametrize("spec, part, errors", [
    ((None, "Y"), (0,), 0), (("X", None), (0, 3), 4), ((None, "Y"), (1, 4), 0),
    (("X", None), (1, 4), 2), ((None, "Y"), (2, 3), 2), (("X", None), (2,), 2)])
def test_dynamic_indexing_under_vmap_is_a_gather(spec, part, errors):
    """vmap over start indices batches dynamic_slice (and dynamic_update_slice) into one
    gather (scatter), as JAX does: rows of an operand sharded along its columns keep the
    columns' type; along a sharded row dimension JAX's gather refuses, and so does refjax
    (a replicated update of a sharded operand too, program 3)."""
    def program(lib, show):
        ks = lib.numpy.array([0, 3, 5, 9], dtype=np.int32)
        fs = lane_programs(lib)
        return each(lib, show, [fs[k] for k in part], put(lib, (8, 4), *spec), ks)
    shown = same_as_jax(program)
    assert sum("Error" in str(s) for s in shown) == errors


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


# ---------------------------------------------------------------- typing rules

@pytest.mark.parametrize("part", [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)])
def test_stack_tile_unstack_rng_and_ragged_dot_are_typed_as_by_jax(part):
    """The rules JAX's tile, stack, unstack, rng_bit_generator and ragged_dot_general carry:
    results typed from the operands (or out_sharding=), JAX's ShardingTypeError where an
    operand is sharded along a tiled or unstacked dimension or operands differ, and
    ragged_dot_general's NotImplementedError asking for out_sharding."""
    def program(lib, show):
        jnp, lax = lib.numpy, lib.lax
        x, y = put(lib, (8, 4), "X", None), put(lib, (8, 4), None, "Y")
        zeros = jnp.zeros((4,), np.uint32)
        fs = [lambda: jnp.stack([x, x * 2], axis=1), lambda: jnp.stack([x, y]),
              lambda: jnp.tile(x, (1, 2)), lambda: jnp.tile(x, (2, 1)),
              lambda: jnp.tile(y, (3, 1, 1)), lambda: lax.unstack(y, 0)[3],
              lambda: lax.unstack(x, 0)[1], lambda: lax.unstack(x, 1)[2],
              lambda: lax.rng_bit_generator(zeros, (8, 4), out_sharding=lib.P(None, "Y"))[1],
              lambda: lax.rng_bit_generator(lib.reshard(zeros, lib.P("Y")), (2, 8))[0],
              lambda: lax.ragged_dot(x, jnp.ones((2, 4, 3)), jnp.array([3, 5], np.int32)),
              lambda: lib.random.uniform(lib.random.key(3), (8, 4), out_sharding=lib.P("X"))]
        return each(lib, show, [fs[k] for k in part],
                    worded=("ShardingTypeError", "NotImplementedError"))
    shown = same_as_jax(program)
    assert sum("Error" in str(s) for s in shown) == 2  # programs 1, 3, 6 and 10


def test_where_jax_fails_inside_jit_refjax_types_and_computes():
    """pure_callback on a sharded value: eagerly and on a jit argument both type its result
    replicated (the host computes the whole value); on a value jit closes over, JAX 0.10.2
    fails lowering it (a bare AssertionError, "Unhandled OpSharding type") where refjax
    returns the callback's values. ragged_dot with out_sharding=: JAX's CPU decomposition
    refuses its own select (ShardingTypeError); refjax gives the typed grouped products."""
    import jax as real_jax
    results = {}
    for lib in (refjax, real_jax):
        mesh = lib.make_mesh((2, 4), ("X", "Y"),
                             axis_types=(lib.sharding.AxisType.Explicit,) * 2)
        with lib.set_mesh(mesh):
            x = put(lib, (8, 4), "X", None)
            call = lambda v: lib.pure_callback(  # noqa: E731
                lambda a: np.asarray(a) * 2, lib.ShapeDtypeStruct(v.shape, v.dtype), v)
            ragged = lambda v: lib.lax.ragged_dot(  # noqa: E731
                v, lib.numpy.ones((2, 4, 3)), lib.numpy.array([3, 5], np.int32),
                out_sharding=lib.P("X", None))
            results[lib] = [_outcome(lib, f) for f in (
                lambda: call(x), lambda: lib.jit(call)(x), lib.jit(lambda: call(x)),
                lambda: ragged(x), lambda: lib.jit(ragged)(x))]
    rows = np.arange(32, dtype=np.float32).reshape(8, 4)
    theirs, ours = results[real_jax], results[refjax]
    assert theirs[2:] == ["AssertionError", "ShardingTypeError", "ShardingTypeError"]
    assert [t for t, _ in ours[:3]] == [t for t, _ in theirs[:2]] * 1 + ["float32[8,4]"]
    for text, values in ours[:3]:
        assert text == "float32[8,4]"
        np.testing.assert_array_equal(values, rows * 2)
    for text, values in ours[3:]:
        assert text == "float32[8@X,3]"
        np.testing.assert_array_equal(values, np.repeat(rows.sum(1, keepdims=True), 3, 1))


def _outcome(lib, f):
    try:
        out = f()
    except Exception as e:
        return type(e).__name__
    return str(lib.typeof(out)), np.asarray(out)
