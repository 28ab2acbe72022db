"""jax.debug.visualize_sharding / inspect_array_sharding (eagerly, and inside jit when the
program is compiled) and the device-level top-level helpers (typeof, float0, process_indices,
copy_to_host_async, sharding.make_single_device_sharding) against real JAX 0.10.2 (both draw
shardings with rich: the tables must be the same text)."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
from refjax.sharding import NamedSharding, PartitionSpec as P

# (shape, mesh shape, spec, options): 1-d and 2-d, sharded, replicated, partially replicated,
# over two axes at once, and each drawing option.
LAYOUTS = [((8,), (8,), ("x",), {}), ((8,), (2, 4), ("y",), {}), ((4, 4), (2, 2), ("x",), {}),
           ((4, 8), (2, 4), ("x", "y"), {}), ((8, 8), (2, 4), (None, "y"), {}),
           ((8, 8), (2, 4), (), {}), ((8, 8), (2, 4), (("x", "y"),), {}),
           ((8, 2), (4, 2), ("x", None), {"scale": 2}), ((8, 8), (2, 4), ("y", "x"), {"scale": 0.5}),
           ((2, 16), (2, 4), ("x", "y"), {"min_width": 3, "max_width": 40}),
           ((16,), (8,), ("x",), {"use_color": False}), ((3, 40), (1,), (), {"max_width": 30}),
           ((4, 4), (2, 2), ("x", "y"), {"color_map": lambda v: (v, 0.5, 1 - v, 1.0)}),
           ((2, 2, 2), (8,), (), {}), ((), (8,), (), {})]


def _drawn(jax, capsys, shape, mesh_shape, spec, options):
    """What visualize_sharding prints for the layout (or its error's class and text)."""
    names = ("x", "y")[:len(mesh_shape)]
    mesh = jax.make_mesh(mesh_shape, names, devices=jax.devices()[:int(np.prod(mesh_shape))])
    try:
        jax.debug.visualize_sharding(shape, jax.sharding.NamedSharding(
            mesh, jax.sharding.PartitionSpec(*spec)), **options)
    except ValueError as e:
        return f"ValueError: {e}"
    return capsys.readouterr().out


def test_visualize_sharding_as_jax(capsys, monkeypatch):
    """Every layout and option of LAYOUTS draws JAX's text; then the same in a terminal with
    true colours (ANSI codes: painted cells with color_map, highlighted numbers without, since
    matplotlib, the default map, is not installed)."""
    drawings = []
    for colour in (False, True):
        if colour:
            monkeypatch.setenv("FORCE_COLOR", "1")
            monkeypatch.setenv("COLORTERM", "truecolor")
        for layout in LAYOUTS:
            drawings.append(_drawn(refjax, capsys, *layout))
            assert drawings[-1] == _drawn(real_jax, capsys, *layout), (colour, layout)
    painted = LAYOUTS.index(next(x for x in LAYOUTS if "color_map" in x[3]))
    assert ";48;2;" in drawings[len(LAYOUTS) + painted] and "\x1b[" not in drawings[painted]


def test_visualize_array_sharding_refuses_numpy():
    """JAX: AttributeError, "'TypedNdArray' object has no attribute 'sharding'"; refjax says
    what it expects."""
    with pytest.raises(TypeError, match="visualize_array_sharding expects a jax.Array, got "
                                        "numpy.ndarray"):
        refjax.debug.visualize_array_sharding(np.ones(3))


def test_inspect_array_sharding():
    seen = []
    mesh = refjax.make_mesh((2, 2), ("x", "y"))
    x = refjax.device_put(np.ones((4, 4), np.float32), NamedSharding(mesh, P("x")))
    refjax.debug.inspect_array_sharding({"a": x, "b": [x]}, callback=seen.append)
    assert seen == [x.sharding, x.sharding]
    jax_seen = []
    real_jax.debug.inspect_array_sharding(real_jax.numpy.ones(3), callback=jax_seen.append)
    refjax.debug.inspect_array_sharding(refjax.numpy.ones(3), callback=seen.append)
    assert type(seen[-1]).__name__ == type(jax_seen[0]).__name__ == "SingleDeviceSharding"


def _inspections(jax, capsys, more):
    """What inspect_array_sharding and visualize_array_sharding report inside jit, step by
    step: when (calls, lower, compile; per input layout, not per call), and what (the
    compiled value's sharding after sin, a sum, the drawing; with `more`, under vmap, grad,
    a context mesh, Explicit axes and inside other primitives), as [(step, reports)]."""
    jnp, sharding = jax.numpy, jax.sharding
    out, steps = [], []

    def report(tag):
        return lambda s: out.append((tag, repr(s) if type(s).__name__ == "NamedSharding"
                                     else ("one device", sorted(d.id for d in s.device_set))))

    def f(x):
        y = jnp.sin(x)
        jax.debug.inspect_array_sharding(y, callback=report("y"))
        return y * 2

    def step(name, fn):
        fn()
        steps.append((name, list(out), capsys.readouterr().out))
        out.clear()

    jf, x = jax.jit(f), jnp.arange(8.0)
    mesh = jax.make_mesh((4, 2), ("a", "b"), axis_types=(sharding.AxisType.Auto,) * 2)
    xs = jax.device_put(jnp.arange(16.0).reshape(8, 2), sharding.NamedSharding(
        mesh, sharding.PartitionSpec("a", "b")))
    lowered = []
    for name, fn in [
            ("call", lambda: jf(x)), ("call again", lambda: jf(x)),
            ("lower", lambda: lowered.append(jax.jit(f).lower(x))),
            ("compile", lambda: lowered[0].compile()(x)),
            ("sharded", lambda: jf(xs)), ("sharded again", lambda: jf(xs)),
            ("lower sharded", lambda: lowered.append(jax.jit(f).lower(xs))),
            ("compile sharded", lambda: lowered[1].compile()),
            ("sum", lambda: jax.jit(lambda x: jax.debug.inspect_array_sharding(
                x.sum(0), callback=report("sum")))(xs)),
            # a new function: JAX would not compile (nor draw) a jit of the same one again
            ("drawn", lambda: jax.jit(lambda x: jax.debug.visualize_array_sharding(x))(xs))]:
        step(name, fn)
    if not more:
        return steps
    for name, fn in [
            ("vmap", lambda: jax.jit(jax.vmap(f))(xs)),
            ("grad", lambda: jax.jit(jax.grad(lambda x: f(x).sum()))(xs)),
            ("eager grad", lambda: jax.grad(lambda x: f(x).sum())(x)),
            ("context mesh", lambda: _under(jax.set_mesh(mesh), lambda: jax.jit(f)(jnp.ones(4)))),
            ("explicit", lambda: jax.jit(f)(jax.device_put(xs, sharding.NamedSharding(
                jax.make_mesh((4, 2), ("a", "b"), axis_types=(sharding.AxisType.Explicit,) * 2),
                sharding.PartitionSpec("a", "b")))))] + [
            (name, lambda g=g: jax.jit(g)(xs)) for name, g in _inside(jax, mesh, report)]:
        step(name, fn)
    return steps


def _inside(jax, mesh, report):
    """Inspections inside a checkpoint, a nested jit, both branches of a cond, a shard_map
    body (each device's block: P() over the mesh), after a transpose and a constraint."""
    P = jax.sharding.PartitionSpec

    def inspect(tag):
        return lambda x: jax.debug.inspect_array_sharding(x, callback=report(tag)) or x
    return [
        ("checkpoint", jax.checkpoint(lambda x: inspect("remat")(x.sum(1)))),
        ("nested jit", lambda x: jax.jit(inspect("inner"))(x + 1)),
        ("cond", lambda x: jax.lax.cond(x.sum() > 0, inspect("true"), inspect("false"), x)),
        ("shard_map", jax.shard_map(inspect("block"), mesh=mesh, in_specs=P("a", "b"),
                                    out_specs=P("a", "b"))),
        ("transposed", lambda x: inspect("T")(x.T)),
        ("constrained", lambda x: inspect("c")(jax.lax.with_sharding_constraint(
            x, jax.sharding.NamedSharding(mesh, P("a")))))]


def _under(context, fn):
    with context:
        return fn()


@pytest.mark.backends("numpy_ref", "xla")
def test_inspected_inside_jit_when_compiled_as_jax(capsys):
    """JAX calls back when it compiles a program (once per program and input layouts; at
    lowering for a program on one device), with the sharding its compiler gives the value;
    refjax with the one its layout pass gives it, on both backends. A program on one device
    reports JAX's internal GSPMDSharding({replicated}) (not in jax.sharding); refjax the
    SingleDeviceSharding of its device: the same devices and indices, drawn alike."""
    ours = _inspections(refjax, capsys, more=False)
    assert ours == _inspections(real_jax, capsys, more=False)
    assert [len(reports) for _, reports, _ in ours] == [1, 0, 0, 0, 1, 0, 0, 0, 1, 0]
    assert "CPU 6" in ours[-1][2]


# About 3 s (JAX compiling each program): the thorough profile's.
@pytest.mark.thorough
@pytest.mark.backends("numpy_ref", "xla")
def test_inspected_under_transformations_and_inside_primitives_as_jax(capsys):
    """As above under vmap, grad (jitted and eager), a context mesh, Explicit axes, and
    inside a checkpoint, a nested jit, both branches of a cond, a shard_map body (each
    device's block: P() over the mesh), after a transpose and a constraint."""
    ours = _inspections(refjax, capsys, more=True)
    assert ours == _inspections(real_jax, capsys, more=True)
    assert [len(reports) for _, reports, _ in ours[10:]] == [1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]


def test_inspection_in_loop_and_errors(capsys):
    """Inside a loop body a value is inspected with the layout the loop gives it, once when
    the program is compiled (as JAX reports XLA's choice); a 3-d array's drawing is JAX's
    ValueError, when the program is compiled. (On one device JAX names the sharding
    GSPMDSharding({replicated}), refjax SingleDeviceSharding: the devices are compared.)"""
    def reported(jax):
        out = []

        def body(c, row):
            jax.debug.inspect_array_sharding(row, callback=lambda s: out.append(s.device_set))
            return c, row
        f = jax.jit(lambda x: jax.lax.scan(body, 0.0, x))
        f(jax.numpy.ones((2, 2)))
        f(jax.numpy.ones((2, 2)))
        return [sorted(d.id for d in devices) for devices in out]
    assert reported(refjax) == reported(real_jax) == [[0]]
    for jax in (refjax, real_jax):
        with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
            jax.jit(jax.debug.visualize_array_sharding)(jax.numpy.ones((2, 2, 2)))


def test_top_level_helpers_as_jax():
    def run(jax):
        x = jax.numpy.ones(3)
        return (str(jax.typeof(x)), repr(jax.typeof(1.0)), str(jax.float0),
                jax.process_indices(), np.asarray(jax.copy_to_host_async(x)).tolist(),
                type(jax.sharding.make_single_device_sharding(jax.devices()[0])).__name__)
    assert run(refjax) == on_jax(run)


@pytest.mark.backends("numpy_ref", "xla")
def test_debug_log_as_jax(caplog):
    """jax.debug.log: debug.print's message at INFO through logging, from the caller's line
    (JAX's logger is jax._src.debugging; refjax's refjax.debug)."""
    def run(jax, logger):
        caplog.clear()
        with caplog.at_level("INFO", logger=logger):
            line = _line() + 1  # the next line logs
            jax.jit(lambda x: jax.debug.log("x is {} {k}", x, k=x * 2))(2.0)
            jax.debug.log("eager {}", jax.numpy.arange(2))
            jax.effects_barrier()
        return [(r.levelname, r.getMessage(), r.lineno == line) for r in caplog.records]
    ours = run(refjax, "refjax.debug")
    assert ours == run(real_jax, "jax._src.debugging")
    assert ours[0] == ("INFO", "x is 2.0 4.0", True)


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_print_environment_info(capsys):
    """JAX's lines for numpy, python, process_count and platform; refjax's own version and
    backend, and the device line without JAX's stray quote."""
    ours = refjax.print_environment_info(return_string=True)
    theirs = real_jax.print_environment_info(return_string=True)
    shared = ("numpy:", "python:", "process_count:", "platform:")
    assert [line for line in ours.splitlines() if line.startswith(shared)] == \
        [line for line in theirs.splitlines() if line.startswith(shared)]
    n = len(refjax.devices())
    assert f"device info: cpu-{n}, {n} local devices" in ours.splitlines()
    assert ours.splitlines()[0] == f"refjax: {refjax.__version__}"
    assert refjax.print_environment_info() is None
    assert capsys.readouterr().out == ours + "\n"
