"""jax.default_device and the jax_default_device option (issue 17): where new arrays and
computations land, committed or not, on both backends, each case run beside real JAX 0.10.2."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax

real_jax.config.update("jax_num_cpu_devices", 8)

LIBS = [("numpy_ref", refjax), ("xla", refjax), ("jax", real_jax)]


def _affine(a, b):
    return a * b + 1  # jitted by both tests, so that each device's program compiles once


def _describe(x):
    """What placement decides about an array, and its value (rounded: only placement and
    typing are compared across libraries, not the last bits of a sample)."""
    return (sorted(d.id for d in x.devices()), x.committed, str(x.device), repr(x.sharding),
            str(x.dtype), x.weak_type, np.round(np.asarray(x), 5).tolist())


def _run(name, lib, thunk):
    """thunk() on `lib` (refjax on the named backend), described."""
    if lib is real_jax:
        return thunk(lib)
    with refjax.backend(name):
        return thunk(lib)


def _same_on_all(thunk):
    """thunk(lib)'s result on numpy_ref, xla and JAX; asserts they agree and returns it."""
    results = {name: _run(name, lib, thunk) for name, lib in LIBS}
    assert results["numpy_ref"] == results["jax"], (results["numpy_ref"], results["jax"])
    assert results["xla"] == results["jax"], (results["xla"], results["jax"])
    return results["jax"]


def _placements(lib):
    """Arrays made and computed under default_device(devices()[3]), and afterwards."""
    jnp, d = lib.numpy, lib.devices()
    f = lib.jit(_affine)
    committed5, committed0 = lib.device_put(jnp.ones(3), d[5]), lib.device_put(jnp.ones(3), d[0])
    old, out = jnp.arange(3.0), {}
    with lib.default_device(d[3]):
        x = jnp.arange(3.0)
        compiled = f.lower(old, x).compile()
        committed3 = lib.device_put(jnp.ones(3), d[3])
        out.update(
            zeros=jnp.zeros(3), asarray=jnp.asarray([1.0, 2.0]), array_scalar=jnp.array(1.0),
            device_put=lib.device_put(2.0), device_put_array=lib.device_put(committed5),
            scalar_promoted=x + 1, jit=f(x, x), jit_scalars=f(1.0, 2.0),
            committed_wins=committed5 + x, committed_device0_jit=f(committed0, x),
            committed_default=committed3 + x,
            # arrays from before the block: jnp.array copies them to the default device
            old_array=jnp.array(old), old_asarray=jnp.asarray(old),
            old_device_put=lib.device_put(old), old_compiled=compiled(old, x))
    # uncommitted arrays made there run on the default device again afterwards
    out.update(after_eager=x * 2, after_jit=f(x, x), after_jit_fast_path=f(x, x),
               after_committed=committed3 * 2)
    return {**{k: _describe(v) for k, v in out.items()},
            "compiled_shardings": str((compiled.input_shardings, compiled.output_shardings))}


def test_placement_matches_jax():
    """New arrays, eager ops and jit on uncommitted inputs land on the default device,
    uncommitted; committed inputs win (their device, committed), on device 0 too; arrays
    made in the block follow the default outside it."""
    out = _same_on_all(_placements)
    assert out["zeros"][:3] == ([3], False, "cpu:3")
    assert out["committed_wins"][:2] == ([5], True)
    assert out["after_jit"][:2] == ([0], False)


def _scopes(lib):
    """Nesting, None, 'cpu' and the global option (jit's fast path across updates)."""
    jnp, d = lib.numpy, lib.devices()
    f = lib.jit(_affine)
    x = jnp.arange(3.0)
    seen = []
    with lib.default_device(d[3]):
        with lib.default_device(d[4]):
            seen += [jnp.zeros(1), f(x, x)]
            with lib.default_device(None):
                seen += [jnp.zeros(1), f(x, x)]
            with lib.default_device("cpu"):
                seen.append(jnp.zeros(1))
        seen += [jnp.zeros(1), f(x, x), str(lib.config.jax_default_device),
                 str(lib.default_device.value)]
    try:
        lib.config.update("jax_default_device", d[4])
        seen += [f(x, x), f(x, x), jnp.zeros(1), str(lib.config.jax_default_device)]
        with lib.default_device(d[3]):
            seen += [f(x, x), jnp.zeros(1)]
        lib.config.update("jax_default_device", d[3])
        seen += [f(x, x), f(x, x), x * 2]
    finally:
        lib.config.update("jax_default_device", None)
    seen += [f(x, x), f(x, x), jnp.zeros(1), lib.config.jax_default_device]
    return [v if isinstance(v, (str, type(None))) else _describe(v) for v in seen]


def test_nesting_none_cpu_and_global_option():
    """Contexts nest and restore; None and 'cpu' mean device 0; config.update sets it
    globally (jit's recorded fast-path runners do not keep the previous default)."""
    seen = _same_on_all(_scopes)
    assert [s[0] for s in seen[:5]] == [[4], [4], [0], [0], [0]]
    assert seen[-1] is None


def _bad_values(lib):
    """JAX's errors for default devices it refuses, and the option unchanged after them."""
    jnp = lib.numpy
    out = []
    for attempt in (lambda: lib.default_device("foo").__enter__(),
                    lambda: lib.default_device(3).__enter__(),
                    lambda: lib.config.update("jax_default_device", "foo"),
                    lambda: lib.config.update("jax_default_device", 1.5),
                    lambda: lib.default_device()):
        with pytest.raises((ValueError, TypeError)) as err:
            attempt()
        out.append((err.type.__name__, str(err.value), lib.config.jax_default_device))
    with lib.default_device("gpu"):  # accepted, refused where an array would go there
        with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested") as err:
            jnp.zeros(1)
        out.append(str(err.value))
    try:
        lib.config.update("jax_default_device", "gpu")
        out.append(lib.config.jax_default_device)
    finally:
        lib.config.update("jax_default_device", None)
    return out + [_describe(jnp.zeros(1))]


def test_rejected_values_match_jax():
    """Values other than a Device, None or a platform name are JAX's ValueError (on entry and
    on update, leaving the option as it was); no argument is JAX's TypeError; 'gpu' is
    accepted and refused with JAX's RuntimeError where an array would be placed."""
    out = _same_on_all(_bad_values)
    assert out[0][0] == "ValueError" and out[-2] == "gpu"


def test_samplers_and_grad_on_the_oracle():
    """Random samplers and grad on the oracle, against what JAX 0.10.2 gives (normal(key(0),
    (2,)), key_data(key(1)) and grad(lambda a: a * a)(jnp.array(3.0)) under
    default_device(devices()[3]): on cpu:3, uncommitted; compiling JAX's sampler and
    gradient here would cost a second of the default run); values as without the block."""
    jnp, d = refjax.numpy, refjax.devices()
    key = refjax.random.key(0)
    expected = refjax.random.uniform(key, (2,))
    with refjax.backend("numpy_ref"), refjax.default_device(d[3]):
        for x in (refjax.random.uniform(key, (2,)), refjax.random.normal(key, (2,)),
                  refjax.random.key_data(refjax.random.split(refjax.random.key(1))),
                  refjax.grad(lambda a: a * a)(jnp.array(3.0))):
            assert (sorted(e.id for e in x.devices()), x.committed) == ([3], False)
        np.testing.assert_array_equal(refjax.random.uniform(key, (2,)), expected)
        assert jnp.zeros(1).device == d[3]
    grad = refjax.grad(lambda a: a * a)(jnp.array(3.0))  # JAX: cpu:0, uncommitted
    assert (grad.device, grad.committed, float(grad)) == (d[0], False, 6.0)


def test_tpu_is_refused_like_gpu():
    """refjax names 'tpu' as it names 'gpu' (JAX's message for it is libtpu's loading error
    on this machine); the class is JAX's."""
    with refjax.default_device("tpu"), pytest.raises(RuntimeError, match="Unknown backend: 'tpu'"):
        refjax.numpy.zeros(1)
    with real_jax.default_device("tpu"), pytest.raises(RuntimeError):
        real_jax.numpy.zeros(1)


def test_default_device_a_backend_lacks():
    """A backend with fewer devices than the default device's id says so (refjax's own
    backends have jax_num_cpu_devices devices; this one has one)."""
    class OneDevice(refjax.backends.Backend):
        name = "one_device"

        def devices(self):
            return list(refjax.backends.make_cpu_devices(1))

    backend = OneDevice()
    assert backend.default_sharding().device_set == {refjax.devices()[0]}
    with refjax.default_device(refjax.devices()[3]), \
            pytest.raises(ValueError, match="device 3, but the one_device backend has 1 dev"):
        backend.default_sharding()


def _committed_scalars(lib):
    """A committed 0-d array keeps its placement through dtype conversions (weak to strong
    promotion in `a + c`, astype): only uncommitted scalars fold to constants."""
    d, jnp = lib.devices(), lib.numpy
    mesh = lib.make_mesh((1,), ("x",), devices=d[:1])
    on_mesh = lib.device_put(1.0, lib.sharding.NamedSharding(mesh, lib.P()))
    on_dev = lib.device_put(2.0, d[2])
    outs = [on_mesh + jnp.float32(3.0), on_mesh.astype(jnp.float16), on_dev + jnp.float32(1.0),
            on_dev.astype(jnp.int32), jnp.float32(3.0) + 1.0]
    return [(float(o), str(o.dtype), o.committed, sorted(x.id for x in o.devices()),
             type(o.sharding).__name__) for o in outs]


@pytest.mark.parametrize("backend", ["numpy_ref", "xla"])
def test_committed_scalars_keep_their_placement(backend):
    with refjax.backend(backend):
        assert _committed_scalars(refjax) == on_jax(_committed_scalars)
