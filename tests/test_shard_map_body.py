"""What a shard_map body sees, side by side with real JAX on both backends: the abstract
mesh (its axes Manual inside the body; eager, under jit, partially manual, nested), the
types of its values, lax.axis_size and axis_index; jax.debug.inspect_array_sharding and
visualize_array_sharding inside loop and cond bodies and partially manual shard_map bodies
(called back when the program is compiled, with the layout the value has); empty arrays'
pieces; and the transformations (jvp, transpose) in XLA's op names of a gradient."""
import functools
import re

import jax as real_jax
import numpy as np
import pytest
from side_by_side import both, outcome
from test_shard_map_eager import printed

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _show(jax, tag):
    m = jax.sharding.get_abstract_mesh()
    print(tag, repr(m), m.axis_names, m.axis_sizes, m.axis_types, m.manual_axes,
          m.explicit_axes, m.auto_axes, dict(m.shape), m.empty)


def abstract_mesh_scenario(jax, jnp, axis_type, more):
    """The abstract mesh, types and axis sizes a body sees, fully manual (eager, jit; with
    `more`, under a context mesh), partially manual under jit, nested (with `more`: jit; eager
    on Auto axes), and after."""
    P, lax = jax.P, jax.lax
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(jax.sharding.AxisType,
                                                                  axis_type),) * 2)
    xs = jax.device_put(jnp.arange(16.0).reshape(4, 4), jax.NamedSharding(mesh, P("x", "y")))
    x = jax.device_put(jnp.arange(16.0).reshape(4, 4), jax.NamedSharding(mesh, P("x")))

    def body(axes, b):
        _show(jax, "body")
        print(jax.typeof(b), lax.axis_size(axes), lax.axis_index(axes))
        return b

    def inner(b):
        _show(jax, "inner")
        print(jax.typeof(b), lax.axis_size(("x", "y")))
        return b

    def outer(b):
        _show(jax, "outer")
        return jax.shard_map(inner, in_specs=P(None, "y"), out_specs=P(None, "y"),
                             axis_names={"y"})(b)
    full = jax.shard_map(functools.partial(body, ("x", "y")), mesh=mesh, in_specs=P("x", "y"),
                         out_specs=P("x", "y"))
    part = jax.shard_map(functools.partial(body, "x"), mesh=mesh, in_specs=P("x"),
                         out_specs=P("x"), axis_names={"x"})
    nested = jax.shard_map(outer, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                           axis_names={"x"})

    def in_context(fn):
        def run():
            with jax.set_mesh(mesh):
                return fn()
        return run
    cells = [lambda: full(xs), lambda: jax.jit(full)(xs), lambda: jax.jit(part)(x)]
    if more:
        cells += [in_context(lambda: full(xs)), in_context(lambda: jax.jit(nested)(x))]
    if more and axis_type == "Auto":  # JAX's eager nested shard_map on Explicit axes fails
        cells.append(in_context(lambda: nested(x)))
    return [lambda c=c: printed(c) for c in cells] + [lambda: printed(lambda: _show(jax, "after"))]


# (the default run's case: Auto axes, the first cells; JAX compiling each program)
@pytest.mark.parametrize("more", [False, True])
@pytest.mark.parametrize("axis_type", ["Auto", "Explicit"])
def test_abstract_mesh_types_and_axis_sizes_in_body_as_jax(axis_type, more):
    theirs, ours = both(lambda jax, jnp: abstract_mesh_scenario(jax, jnp, axis_type, more))
    assert ours == theirs
    assert "axis_types=(Manual, Manual)" in ours[0][1][0]
    assert f"axis_types=(Manual, {axis_type})" in ours[2][1][0]
    assert "AbstractMesh((), axis_types=())" in ours[-1][1][0]


# (about 1 s, JAX compiling: the thorough profile's)
@pytest.mark.thorough
def test_eager_nested_explicit_does_better_than_jax():
    """JAX's eager nested shard_map on Explicit axes refuses the inner in_specs, naming a spec
    of an internal 3-d shape (P('x', None, 'y') for float32[2@x,2,4]); refjax runs it as jit
    does. An eager partially manual body's axis_index is each block's, as under jit."""
    def run(jax, jnp, staged):
        P = jax.P
        mesh = jax.make_mesh((2, 4), ("x", "y"),
                             axis_types=(jax.sharding.AxisType.Explicit,) * 2)
        x = jax.device_put(jnp.zeros((4, 4)), jax.NamedSharding(mesh, P("x")))
        part = jax.shard_map(lambda b: b + jax.lax.axis_index("x"), mesh=mesh,
                             in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
        nested = jax.shard_map(lambda b: jax.shard_map(
            lambda c: c, in_specs=P(None, "y"), out_specs=P(None, "y"),
            axis_names={"y"})(b), mesh=mesh, in_specs=P("x"), out_specs=P("x"),
            axis_names={"x"})
        with jax.set_mesh(mesh):
            return [outcome(lambda: (jax.jit(f) if staged else f)(x + 1))
                    for f in (part, nested)]
    jit_truth = run(real_jax, real_jax.numpy, True)
    assert [cls for cls, _ in run(real_jax, real_jax.numpy, False)] == ["ok", "ValueError"]
    assert run(refjax, refjax.numpy, False) == jit_truth == run(refjax, refjax.numpy, True)
    assert jit_truth[0][1] == [[1.0] * 4] * 2 + [[2.0] * 4] * 2


def inspect_scenario(jax, jnp, more):
    """What inspect_array_sharding reports inside scan (its carry and a slice, unrolled),
    partially manual shard_map bodies (jit and eager) and visualize_array_sharding there; with
    `more`, inside while_loop (body, then condition), scan not unrolled, fori_loop, cond's
    branches (jit and eager) and nested control flow."""
    P, lax = jax.P, jax.lax
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = jax.device_put(jnp.arange(32.0).reshape(8, 4), jax.NamedSharding(mesh, P("x", "y")))
    c0 = jax.device_put(jnp.zeros(4), jax.NamedSharding(mesh, P("y")))

    def inspect(v, tag):
        jax.debug.inspect_array_sharding(v, callback=lambda s: print(tag, s))
        return v

    def scan(unroll):
        return lambda x, c0: lax.scan(lambda c, xi: (inspect(c, "carry") + inspect(xi, "xi"),
                                                     xi), c0, x, unroll=unroll)

    def while_loop(x):
        return lax.while_loop(lambda c: inspect(c[1], "cond")[0, 0] < c[0],
                              lambda c: (c[0] - 1, inspect(c[1], "body") * 2), (3.0, x))

    def cond(x):
        return lax.cond(x[0, 0] > 0, lambda v: inspect(v, "true"), lambda v: inspect(v, "false"),
                        x)

    def nested(x):
        return lax.scan(lambda c, _: (lax.cond(True, lambda v: inspect(v, "in cond"),
                                               lambda v: v, c), None), x, None, length=2)

    def part_body(b):
        jax.debug.visualize_array_sharding(inspect(b * 2, "block"))
        return b
    part = jax.shard_map(part_body, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                         axis_names={"x"})
    fori = functools.partial(lax.fori_loop, 0, 3, lambda i, c: inspect(c, "fori") * 2)
    fns = [scan(3)] + [lambda x, _, f=f: f(x) for f in (jax.jit(part),) + (
        (while_loop,) if more else ())]
    eager = [lambda: [part(x) for _ in range(2)][0]]
    if more:
        fns += [scan(1)] + [lambda x, _, f=f: f(x) for f in (fori, cond, nested)]
        eager.append(lambda: cond(x))
    return [lambda e=e: printed(lambda: e() * 0) for e in eager] + [
        lambda f=f: printed(lambda: (jax.jit(f)(x, c0), jax.jit(f)(x, c0))[0] * 0) for f in fns]


@pytest.mark.parametrize("more", [False, True])
def test_inspections_inside_loops_conds_and_partial_shard_map_as_jax(more):
    theirs, ours = both(lambda jax, jnp: inspect_scenario(jax, jnp, more))
    assert ours == theirs
    texts = [text for _, (text, _) in ours]
    assert texts[0].count("block") == 2  # an eager shard_map's: every call
    scan = texts[1 + more]  # after the eager cells
    assert scan.count("carry") == 5  # 8 steps unrolled by 3: 3 copies, 2 for the rest
    if more:
        while_loop = texts[4]
        assert while_loop.index("body") < while_loop.index("cond")


def test_full_manual_eager_inspection_is_each_block():
    """Eagerly, a fully manual body's value is each device's block: P() over the mesh, as
    JAX's (refjax's eager body used to report the stacked blocks' layout)."""
    def run(jax):
        P, out = jax.P, []
        mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        x = jax.device_put(jax.numpy.zeros((8, 4)), jax.NamedSharding(mesh, P("x", "y")))
        jax.shard_map(lambda b: jax.debug.inspect_array_sharding(
            b, callback=lambda s: out.append(repr(s))) or b, mesh=mesh, in_specs=P("x", "y"),
            out_specs=P("x", "y"))(x)
        return out
    ours = run(refjax)
    assert ours == run(real_jax)
    assert len(ours) == 1 and "spec=P()" in ours[0]


def empty_scenario(jax, jnp, more):
    """Empty arrays through eager and jitted shard_maps (split and replicated dimensions,
    Explicit axes), an eager constraint and a program's output laid out by out_shardings (each
    piece the whole empty array, as XLA leaves a program's), and device_put (split pieces)."""
    P, T = jax.P, jax.sharding.AxisType
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(T.Auto,) * 2)
    explicit = jax.make_mesh((2, 4), ("x", "y"), axis_types=(T.Explicit,) * 2)

    def shards(y):
        return (y.shape, str(y.sharding), jax.typeof(y),
                [(s.data.shape, s.index) for s in y.addressable_shards])

    def smap(mesh, shape, spec):
        x = jax.device_put(jnp.zeros(shape), jax.NamedSharding(mesh, spec))
        f = jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=spec, out_specs=spec)
        return [lambda: shards(f(x)), lambda: shards(jax.jit(f)(x))]
    s = jax.NamedSharding(auto, P("x"))
    cells = smap(auto, (4, 0), P("x")) + [
        lambda: shards(jax.lax.with_sharding_constraint(jnp.zeros((4, 0)), s)),
        lambda: shards(jax.device_put(jnp.zeros((4, 0)), s))]
    if more:
        cells += smap(auto, (0, 4), P("x", "y")) + smap(explicit, (0, 4), P(None, "y")) + \
            smap(auto, (0,), P("x")) + [
                lambda: shards(jax.jit(lambda: jnp.zeros((4, 0)), out_shardings=s)()),
                lambda: shards(jax.device_put(jax.device_put(
                    jnp.zeros((4, 0)), jax.NamedSharding(auto, P())), s))]
    return cells


@pytest.mark.parametrize("more", [False, True])
def test_empty_arrays_pieces_as_jax(more):
    theirs, ours = both(lambda jax, jnp: empty_scenario(jax, jnp, more))
    assert ours == theirs
    first_piece = [cell[3][0][0] for _, cell in ours]
    assert first_piece[0] == [4, 0] and first_piece[3] == [2, 0]  # eager shard_map; transfer


def _op_scopes(jax, f, x):
    """The names of the ops of jit(grad(f)) in XLA's compiled text, without the ops' own
    names (refjax sums cotangents with add where JAX has add_any, and a transposed cond
    clamps its index): the name stack each op was made under."""
    text = jax.jit(jax.grad(f)).lower(x).compile().as_text()
    names = re.findall(r'op_name="([^"]*)"', text)
    return sorted({n.rpartition("/")[0] for name in names for n in name.split(";")})


def grad_programs(jax, more):
    """grad of a scan (sharding-ad.md cell 16's case), a function under named scopes; with
    `more`, a fori_loop, a cond, a nested jit and a vmap."""
    jnp, lax = jax.numpy, jax.lax

    def scan(x):
        return lax.scan(lambda c, xi: (c * jnp.sin(xi), None), 1.0, x)[0]

    def scoped(x):
        with jax.named_scope("outer"):
            y = jnp.sin(x)
            with jax.named_scope("inner"):
                return (y * x).sum()

    def fori(x):
        return lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(c), x).sum()

    def cond(x):
        return lax.cond(x[0] > 0, jnp.sin, jnp.cos, x).sum()

    g = jax.jit(lambda v: jnp.sin(v) * v)
    def batched(x):
        return jax.vmap(lambda r: jnp.sin(r) * r)(x.reshape(2, 2)).sum()
    return [scan, scoped] + ([fori, cond, lambda x: g(x).sum(), batched] if more else [])


@pytest.mark.backends("xla")
@pytest.mark.parametrize("more", [False, True])
def test_transformation_names_in_op_names_as_jax(more):
    """XLA's op names of jit(grad(f)) name the transformations the ops were made under, as
    JAX's name stack has them: `jvp(...)` around the forward pass's names, `transpose(...)`
    around the backward pass's, nested jits and vmaps inside (`transpose(jvp(jit(<lambda>)))`,
    `jvp(vmap())`)."""
    x = np.arange(1.0, 5.0, dtype=np.float32)
    ours = [_op_scopes(refjax, f, x) for f in grad_programs(refjax, more)]
    theirs = [_op_scopes(real_jax, f, x) for f in grad_programs(real_jax, more)]
    assert ours == theirs
    assert "jit(scan)/transpose(jvp())/while/body/closed_call" in ours[0]
    assert "jit(scoped)/transpose(jvp(outer))" in ours[1]
