"""jax.debug.visualize_sharding / inspect_array_sharding and the device-level top-level helpers
(typeof, float0, process_indices, copy_to_host_async, sharding.make_single_device_sharding)
against real JAX 0.10.2 where it can run them (it draws shardings with rich, which is not
installed: there the independent truth is visualize_array_sharding of a placed array and
hand-written tables)."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from refjax.sharding import NamedSharding, PartitionSpec as P


@pytest.mark.parametrize("spec, shape", [(P("x"), (4, 4)), (P(None, "y"), (4, 4)),
                                         (P("x", "y"), (4, 8)), (P("y"), (4,)), (P(), (2, 2))])
def test_visualize_sharding_draws_the_placed_array(spec, shape, capsys):
    mesh = refjax.make_mesh((2, 2), ("x", "y"))
    sharding = NamedSharding(mesh, spec)
    refjax.debug.visualize_sharding(shape, sharding)
    drawn = capsys.readouterr().out
    refjax.debug.visualize_array_sharding(refjax.device_put(np.zeros(shape), sharding))
    assert drawn == capsys.readouterr().out


def test_visualize_sharding_by_hand(capsys):
    mesh = refjax.make_mesh((2, 2), ("x", "y"))
    refjax.debug.visualize_sharding((4,), NamedSharding(mesh, P("y")))
    assert capsys.readouterr().out.splitlines() == [
        "┌─────────┬─────────┐", "│ CPU 0,2 │ CPU 1,3 │", "└─────────┴─────────┘"]
    with pytest.raises(ValueError, match="1 or 2 dimensions"):
        refjax.debug.visualize_sharding((2, 2, 2), NamedSharding(mesh, P()))


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
    with pytest.raises(NotImplementedError, match="inspect_array_sharding"):
        refjax.jit(lambda y: refjax.debug.inspect_array_sharding(y, callback=print))(x)


def test_top_level_helpers_as_jax():
    def run(jax):
        x = jax.numpy.ones(3)
        return (str(jax.typeof(x)), repr(jax.typeof(1.0)), str(jax.float0),
                jax.process_indices(), np.asarray(jax.copy_to_host_async(x)).tolist(),
                type(jax.sharding.make_single_device_sharding(jax.devices()[0])).__name__)
    assert run(refjax) == run(real_jax)


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
