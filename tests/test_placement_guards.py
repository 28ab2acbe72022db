"""jax.transfer_guard* (issue 17): which transfers the guards log or refuse, with JAX's error
class and message, on both backends, each case run beside real JAX 0.10.2."""
import logging

import jax as real_jax
import numpy as np
import pytest

import refjax

real_jax.config.update("jax_num_cpu_devices", 8)

BACKENDS = ["numpy_ref", "xla"]
LEVELS = ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]
GUARDS = ["transfer_guard", "transfer_guard_host_to_device",
          "transfer_guard_device_to_device", "transfer_guard_device_to_host"]


def _cases(lib):
    """name -> thunk: transfers JAX makes (or not) on CPU, in the same words on both libs."""
    jnp = lib.numpy
    x = jnp.ones(3)
    x1 = lib.device_put(x, lib.devices()[1])
    f, c = lib.jit(lambda v: v + 1), np.ones(3, np.float32)
    return {
        "jit_numpy_arg": lambda: f(np.ones(3, np.float32)),
        "jit_python_scalar_arg": lambda: f(1.0),
        "jnp_asarray_numpy": lambda: jnp.asarray(np.ones(3, np.float32)),
        "jnp_array_list": lambda: jnp.array([1.0, 2.0]),
        "eager_numpy_operand": lambda: x + np.ones(3, np.float32),
        "jnp_zeros": lambda: jnp.zeros(3),
        "device_put_numpy": lambda: lib.device_put(np.ones(3, np.float32)),
        "device_put_other_device": lambda: lib.device_put(x, lib.devices()[1]),
        "device_put_same_device": lambda: lib.device_put(x1, lib.devices()[1]),
        "device_put_array_no_device": lambda: lib.device_put(x),
        "jit_array_arg": lambda: f(x),
        "jit_closed_over_numpy": lambda: lib.jit(lambda v: v + c)(x),
        "jit_literal": lambda: lib.jit(lambda v: v * 2)(x),
        "np_asarray": lambda: np.asarray(x),
        "float": lambda: float(x.sum()),
        "item_tolist": lambda: (x.sum().item(), x.tolist()),
        "device_get": lambda: lib.device_get(x),
        "str": lambda: str(x),
    }


CASE_NAMES = list(_cases(refjax))


def _outcome(lib, guard, level, name, backend):
    """('ok', None) or (error class name, message) of one case under one guard level."""
    ctx = refjax.backend(backend) if lib is refjax else refjax.backend("numpy_ref")
    with ctx:
        thunk = _cases(lib)[name]
        with getattr(lib, guard)(level):
            try:
                thunk()
            except Exception as e:  # noqa: BLE001  (compared with JAX's below)
                return type(e).__name__, str(e)
    return "ok", None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("level", ["disallow", "disallow_explicit", "allow"])
@pytest.mark.parametrize("guard", GUARDS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_guard_refuses_what_jax_refuses(name, guard, level, backend):
    ours = _outcome(refjax, guard, level, name, backend)
    assert ours == _outcome(real_jax, guard, level, name, backend)
    if ours[0] != "ok":
        assert isinstance(_raised(guard, level, name, backend), refjax.errors.JaxRuntimeError)


def _raised(guard, level, name, backend):
    with refjax.backend(backend):
        thunk = _cases(refjax)[name]
        with getattr(refjax, guard)(level):
            with pytest.raises(RuntimeError) as info:
                thunk()
    return info.value


@pytest.mark.parametrize("backend", BACKENDS)
def test_eager_python_scalar_operand_is_refused_like_jax(backend):
    """JAX transfers an eager op's Python scalar operand (refused under 'disallow'); its message
    names the scalar's weak aval, refjax's the converted one (float32[] without weak_type)."""
    with refjax.backend(backend), refjax.transfer_guard("disallow"):
        with pytest.raises(refjax.errors.JaxRuntimeError) as ours:
            refjax.numpy.ones(3) + 1.0
    with real_jax.transfer_guard("disallow"), pytest.raises(RuntimeError) as theirs:
        real_jax.numpy.ones(3) + 1.0
    prefix = "INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32["
    assert str(ours.value).startswith(prefix) and str(theirs.value).startswith(prefix)


def test_error_message_is_jaxs():
    """Spelled out once (the comparison above checks every case against JAX)."""
    err = _raised("transfer_guard", "disallow", "jit_numpy_arg", "numpy_ref")
    assert str(err) == ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray("
                        "float32[3]), dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), "
                        "memory_kind=device)")
    err = _raised("transfer_guard", "disallow_explicit", "device_put_other_device", "xla")
    assert "Disallowed device-to-device transfer: aval=ShapedArray(float32[3]), dst_sharding=" \
           "SingleDeviceSharding(device=CpuDevice(id=1)" in str(err)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("level,logged", [("log", ["jit_numpy_arg"]),
                                          ("log_explicit", ["jit_numpy_arg", "device_put_numpy"])])
def test_log_levels_log_the_transfer_and_run(backend, level, logged, caplog):
    """'log' logs implicit transfers, 'log_explicit' explicit ones too (JAX logs the same words
    through absl's C++ logging, which Python cannot capture); the results are unchanged."""
    cases = _cases(refjax)
    with refjax.backend(backend), caplog.at_level(logging.WARNING, logger="refjax"):
        for name in ["jit_numpy_arg", "device_put_numpy"]:
            caplog.clear()
            with refjax.transfer_guard(level):
                out = cases[name]()
            np.testing.assert_array_equal(np.asarray(out), np.full(3, 2.0 if "jit" in name
                                                                    else 1.0))
            expected = ["host-to-device transfer: aval=ShapedArray(float32[3]), dst_sharding="
                        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"]
            assert [r.getMessage() for r in caplog.records] == (expected if name in logged
                                                                else [])


def test_configs_and_scoping_match_jax():
    for lib in (refjax, real_jax):
        assert lib.config.jax_transfer_guard is None
        assert lib.config.jax_transfer_guard_host_to_device is None
        with lib.transfer_guard("disallow"), lib.transfer_guard_host_to_device("allow"):
            lib.jit(lambda v: v + 1)(np.ones(3, np.float32))  # the specific option wins
        lib.config.update("jax_transfer_guard", "disallow")
        try:
            with pytest.raises(RuntimeError, match="Disallowed host-to-device"):
                lib.numpy.asarray(np.ones(2, np.float32))
        finally:
            lib.config.update("jax_transfer_guard", None)
        with lib.transfer_guard("disallow"):
            pass
        lib.numpy.asarray(np.ones(2, np.float32))  # restored on exit


def test_bad_level_is_jaxs_value_error():
    msgs = []
    for lib in (refjax, real_jax):
        with pytest.raises(ValueError) as info:
            lib.config.update("jax_transfer_guard", "bad")
        msgs.append(str(info.value))
        assert lib.config.jax_transfer_guard is None
    assert msgs[0] == msgs[1]


def test_refused_transfer_leaves_no_state():
    f = refjax.jit(lambda v: v * 3)
    with refjax.transfer_guard("disallow"), pytest.raises(RuntimeError):
        f(np.ones(2, np.float32))
    np.testing.assert_array_equal(np.asarray(f(np.ones(2, np.float32))), [3.0, 3.0])
