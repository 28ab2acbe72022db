"""Sharding in types on Explicit meshes, over random meshes, specs and eager programs, side
by side with real JAX: jax.typeof of every result (the spec's Explicit axes, `float32[8@x,4]`)
equals JAX's, values equal, and where JAX rejects the program refjax raises the same class."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from side_by_side import both

pytestmark = pytest.mark.backends("numpy_ref", "xla")

SHAPES = {1: [(8,), (4,), (2,)], 2: [(4, 2), (2, 4), (2, 2)], 3: [(2, 2, 2)]}
OPS = {
    "sin*2": lambda jax, jnp, x: jnp.sin(x) * 2,
    "add-self": lambda jax, jnp, x: x + x,
    "transpose": lambda jax, jnp, x: x.T,
    "sum0": lambda jax, jnp, x: x.sum(0),
    "sum1": lambda jax, jnp, x: x.sum(1),
    "jit-cos": lambda jax, jnp, x: jax.jit(jnp.cos)(x),
    "neg-jit": lambda jax, jnp, x: jax.jit(lambda v: -v)(x),
}


@st.composite
def programs(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.sampled_from(SHAPES[ndim]))
    names = ("x", "y", "z")[:ndim]
    pool = list(names) + [None, None]
    spec = (draw(st.sampled_from(pool)), draw(st.sampled_from(pool)))
    if spec[0] is not None and spec[0] == spec[1]:
        spec = (spec[0], None)
    return shape, names, spec, draw(st.sampled_from(sorted(OPS)))


def scenario_of(shape, names, spec, op):
    def scenario(jax, jnp):
        T = jax.sharding.AxisType
        mesh = jax.make_mesh(shape, names, axis_types=(T.Explicit,) * len(shape))
        x = jax.device_put(jnp.arange(64.0).reshape(8, 8), jax.NamedSharding(mesh, jax.P(*spec)))

        def typed(r):
            return np.asarray(r).tolist(), str(jax.typeof(r)), str(r.sharding.spec)
        return [lambda: typed(x), lambda: typed(OPS[op](jax, jnp, x))]
    return scenario


@given(programs())
def test_types_of_eager_results_as_jax(program):
    theirs, ours = both(scenario_of(*program))
    assert [c for c, _ in ours] == [c for c, _ in theirs]
    for (c, mine), (_, jaxs) in zip(ours, theirs):
        if c != "ok":
            continue
        assert mine[1:] == jaxs[1:]  # the type and the spec, exactly
        np.testing.assert_allclose(mine[0], jaxs[0], rtol=2e-6, atol=1e-6)  # sin: last ulp
