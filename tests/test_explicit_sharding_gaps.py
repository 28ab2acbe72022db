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


def each(lib, show, fs, *args):
    """Every f(*args), eagerly and under jit: the types shown, the results returned; a
    refused program shows its error (class, and a ShardingTypeError's first words)."""
    outs = []
    for f in fs:
        for g in (f, lib.jit(f)):
            try:
                out = g(*args)
            except Exception as e:
                show(type(e).__name__, str(e)[:90] if type(e).__name__ == "ShardingTypeError"
                     else "")
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
