"""shard_map outside jit, as JAX 0.10 runs it (eagerly, on per-device values), side by side
with real JAX on both backends: what the body prints (each device's block, "On cpu:k at mesh
coordinates ..."), types with varying axes, what converts to Python and what raises, vma
errors, in_specs inferred on Explicit meshes, collectives, and random programs (values and
printed blocks equal JAX's, eager equal to jit)."""
import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, strategies as st
from side_by_side import both, outcome, same

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def printed(fn):
    """(what fn printed, its outcome)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = outcome(fn)
    return out.getvalue(), result


def auto_mesh(jax, shape=(4, 2), names=("x", "y")):
    return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def printing_scenario(jax, jnp):
    mesh = auto_mesh(jax)
    P = jax.P
    x = jnp.arange(16.0).reshape(8, 2)
    lax = jax.lax

    def body(b):
        print(b)
        print(repr(b), b.shape, jax.typeof(b))
        c = lax.psum(b, "x")
        print(c, jax.typeof(c), lax.axis_index("y"))
        return c, b * 2

    def smap(f, i=P("x", "y"), o=P(None, "y"), **kw):
        return lambda: jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, **kw)(x)
    return [lambda: printed(smap(lambda b: body(b), o=(P(None, "y"), P("x", "y")))),
            lambda: printed(lambda: [r.sharding for r in smap(
                body, o=(P(None, "y"), P("x", "y")))()]),
            lambda: printed(smap(lambda b: float(b.sum()))),
            lambda: printed(smap(lambda b: b if b.sum() > 0 else -b)),
            lambda: printed(smap(lambda b: b.tolist())),
            lambda: printed(smap(lambda b: b, o=P())),
            lambda: printed(smap(lambda b: b * 0 + 1, o=P(), check_vma=False)),
            lambda: printed(smap(lambda b: lax.pmax(b, ("x", "y")).sum(), o=P())),
            lambda: printed(smap(lambda b: jax.jit(lambda v: lax.psum(v, "y") * 2)(b))),
            lambda: printed(smap(lambda b: x.sum() + b, o=P("x", "y"))),
            lambda: printed(smap(lambda b: lax.all_gather(b, "x", tiled=True), o=P(None, "y"))),
            lambda: printed(smap(lambda b: lax.ppermute(b, "x", [(i, (i + 1) % 4)
                                                                  for i in range(4)]),
                                 o=P("x", "y"))),
            lambda: printed(smap(lambda b: jnp.where(lax.axis_index("x") > 1, b, 0.0),
                                 o=P("x", "y")))]


def test_eager_body_prints_and_raises_as_jax():
    theirs, ours = both(printing_scenario)
    assert [_vma_class(o) for o in ours] == [_vma_class(t) for t in theirs]
    assert "On cpu:7 at mesh coordinates (x, y,) = (3, 1):" in ours[0][1][0]


def _vma_class(result):
    """A cell's result with vma errors reduced to their class: refjax's message (the one its
    staged shard_map gives) names the output and the axes, JAX's a generic function name."""
    text, (cls, value) = result[1]
    return text, (cls, "<vma>" if cls == "ValueError" and "replicat" in value else value)


def inferred_specs_scenario(jax, jnp):
    P, T = jax.P, jax.sharding.AxisType
    e = jax.make_mesh((4, 2), ("x", "y"), axis_types=(T.Explicit,) * 2)
    a = auto_mesh(jax)
    x = jnp.arange(16.0).reshape(8, 2)
    xe = jax.device_put(x, jax.NamedSharding(e, P("x")))
    xa = jax.device_put(x, jax.NamedSharding(a, P("x")))
    sm = jax.shard_map
    return [lambda: sm(lambda b: b * 2, mesh=e, out_specs=P("x"))(xe).sharding,
            lambda: sm(lambda b: b.shape, mesh=e, out_specs=P())(xe),
            lambda: sm(lambda b: b * 2, mesh=a, out_specs=P("x"))(xa),
            lambda: sm(lambda b: b * 2, mesh=e, out_specs=P())(x).sharding,
            lambda: sm(lambda b: b * 2, mesh=e, out_specs=P())(1.0),
            lambda: sm(lambda b: b * 2, mesh=e, in_specs=P("x", "y"), out_specs=P("x"))(x),
            lambda: sm(lambda b: b * 2, mesh=e, in_specs=P("x"), out_specs=P("x"))(xe),
            lambda: sm(lambda b: b * 2, mesh=e, in_specs=P("x", None), out_specs=P("x"))(xe),
            lambda: sm(lambda b: b * 2, in_specs=P("x"), out_specs=P("x"))(x)]


def test_in_specs_inferred_and_checked_as_jax():
    theirs, ours = both(inferred_specs_scenario)
    assert ours == theirs


def test_eager_equals_jit_and_grad_stays_staged():
    mesh = auto_mesh(refjax)
    P = refjax.P
    f = refjax.shard_map(lambda b: refjax.lax.psum(refjax.numpy.sin(b) * b, "x"), mesh=mesh,
                         in_specs=P("x", "y"), out_specs=P(None, "y"))
    x = refjax.numpy.arange(16.0).reshape(8, 2) / 7
    np.testing.assert_allclose(f(x), refjax.jit(f)(x), rtol=1e-6)
    g = refjax.grad(lambda v: f(v).sum())(x)
    blocks = np.asarray(x)
    np.testing.assert_allclose(g, np.sin(blocks) + blocks * np.cos(blocks), rtol=1e-5)


BODIES = {
    "sin*2": lambda jax, names: lambda b: jax.numpy.sin(b) * 2,
    "psum": lambda jax, names: lambda b: jax.lax.psum(b, names),
    "pmean-sum": lambda jax, names: lambda b: jax.lax.pmean(b.sum(0, keepdims=True), names),
    "index": lambda jax, names: lambda b: b + jax.lax.axis_index(names[0]),
    "gather": lambda jax, names: lambda b: jax.lax.all_gather(b, names[0], tiled=True),
}


@st.composite
def programs(draw):
    shape = draw(st.sampled_from([(8,), (4, 2), (2, 4), (2, 2, 2)]))
    names = ("x", "y", "z")[:len(shape)]
    split = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(shape), unique=True))
    body = draw(st.sampled_from(sorted(BODIES)))
    return shape, names, tuple(split), body


def program_scenario(shape, names, split, body):
    def scenario(jax, jnp):
        mesh = auto_mesh(jax, shape, names)
        spec = jax.P(split[0], split[1] if len(split) > 1 else None)
        x = jnp.arange(64.0).reshape(8, 8) if len(split) > 1 else jnp.arange(8.0 * 3).reshape(8, 3)
        inner = BODIES[body](jax, tuple(split))

        def noisy(b):
            print(b)
            return inner(b)
        f = jax.shard_map(noisy, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
        return [lambda: printed(lambda: f(x)), lambda: printed(lambda: f(x).sharding),
                lambda: jax.jit(f)(x)]
    return scenario


# one backend (the fixed scenarios above run both): each example runs JAX's eager shard_map,
# which compiles every operation, so the ci profile's 6 examples already take a while
@pytest.mark.backends("numpy_ref")
@given(programs())
def test_random_eager_programs_as_jax(program):
    theirs, ours = both(program_scenario(*program))
    assert same(ours[:2], theirs[:2]), (ours[:2], theirs[:2])
    assert [ours[2][0], list(ours[2][1])] == ours[0][1][1]  # jit computes what eager does
