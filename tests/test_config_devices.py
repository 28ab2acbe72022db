"""Configuration never orphans live arrays (issue 12, item 5): jax_num_cpu_devices can change
before the backends start; afterwards the same value is a no-op and a new one raises JAX's
RuntimeError, leaving the value, the devices and every Array as they were. Run in a fresh
interpreter beside real JAX, since the device count is fixed for a process."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import jax as real_jax
    import numpy as np
    import refjax as jax

    for j in (jax, real_jax):  # before any backend starts: a new count is accepted
        j.config.update("jax_num_cpu_devices", 4)
    xs = {"numpy_ref": jax.numpy.arange(3.0)}
    with jax.backend("xla"):
        xs["xla"] = jax.numpy.arange(3.0)
    real = real_jax.numpy.arange(3.0)
    assert len(jax.devices()) == len(real_jax.devices()) == 4

    for j in (jax, real_jax):  # the same value: nothing happens
        j.config.update("jax_num_cpu_devices", 4)
    for j in (jax, real_jax):  # a new value once arrays exist: JAX's RuntimeError
        try:
            j.config.update("jax_num_cpu_devices", 2)
        except RuntimeError as e:
            assert "before backends are initialized" in str(e), e
        else:
            raise AssertionError(f"{j.__name__} accepted a new device count")
    for j in (jax, real_jax):  # other options change freely
        j.config.update("jax_enable_x64", False)

    assert jax.config.read("jax_num_cpu_devices") == 4
    assert real_jax.config.jax_num_cpu_devices == 4
    assert len(jax.devices()) == 4
    for name, x in xs.items():  # every Array still works, on its backend
        with jax.backend(name):
            np.testing.assert_array_equal(np.asarray(x + 1), np.asarray(real + 1))
            np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v * 2)(x)), [0, 2, 4])
    print("OK")
""")


def test_device_count_changes_only_before_backends_start():
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]
