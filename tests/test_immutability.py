"""Arrays are immutable on every backend (issue 12, item 2): every buffer an Array owns is
private (copied on the way in) and read-only (NumPy views of it refuse writes, as JAX's do),
and results computed by a backend are not copied again on the way out."""
import tracemalloc

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp

pytestmark = pytest.mark.backends("numpy_ref", "xla")

INPUTS = {
    "jnp.array": lambda j, n: j.numpy.array(n),
    "jnp.asarray": lambda j, n: j.numpy.asarray(n),
    "jnp.asarray(copy=False)": lambda j, n: j.numpy.asarray(n, copy=False),
    "device_put": lambda j, n: j.device_put(n),
    "device_put(sharding)": lambda j, n: j.device_put(n, j.devices()[0]),
    "jit(identity)": lambda j, n: j.jit(lambda v: v)(n),
    "jit(identity) twice": lambda j, n: (j.jit(lambda v: v)(n * 0), j.jit(lambda v: v)(n))[1],
    "vmap(identity)": lambda j, n: j.vmap(lambda v: v)(n),
    "jit(closure)": lambda j, n: j.jit(lambda: n)(),
    "jnp.add": lambda j, n: j.numpy.add(n, 0),
}


@pytest.mark.parametrize("make", INPUTS)
def test_the_callers_buffer_is_copied_on_the_way_in(make):
    """Changing the NumPy array an Array was made from does not change the Array."""
    n = np.ones(3, np.float32)
    x = INPUTS[make](jax, n)
    n[0] = 9.0
    np.testing.assert_array_equal(np.asarray(x), [1.0, 1.0, 1.0])


def test_a_captured_numpy_constant_is_copied_when_staged():
    """jit's cached jaxpr keeps the value captured at trace time, as JAX's executable does."""
    for j in (jax, real_jax):
        n = np.ones(3, np.float32)
        f = j.jit(lambda v: v + n)
        f(np.zeros(3, np.float32))
        n[0] = 9.0
        np.testing.assert_array_equal(np.asarray(f(np.zeros(3, np.float32))), [1.0, 1.0, 1.0])


VIEWS = {
    "np.asarray": lambda x: np.asarray(x),
    "__array__": lambda x: x.__array__(),
    "np.array(copy=False)": lambda x: np.array(x, copy=False),
    "shard data": lambda x: np.asarray(x.addressable_shards[0].data),
    "device_get": lambda x: jax.device_get(x),
}
RESULTS = {
    "eager": lambda: jnp.arange(3.0) * 2,
    "jit": lambda: jax.jit(lambda v: v * 2)(jnp.arange(3.0)),
    "jit forwarding its input": lambda: jax.jit(lambda v: v)(jnp.arange(3.0)),
    "reshape (a view in NumPy)": lambda: jnp.arange(6.0).reshape(2, 3)[0],
    "x.at[].set": lambda: jnp.arange(3.0).at[0].set(5.0),
    "grad": lambda: jax.grad(lambda v: jnp.sum(v * v))(jnp.arange(3.0)),
    "float0 tangent": lambda: jax.vjp(lambda a: a * 2, 3)[1](1)[0],
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("result", RESULTS)
def test_numpy_views_of_an_array_are_read_only(view, result):
    x = RESULTS[result]()
    before = np.array(x, copy=True)
    v = VIEWS[view](x)
    if v.size:
        with pytest.raises(ValueError, match="read-only"):
            v.flat[0] = 99
    np.testing.assert_array_equal(np.asarray(x), before)


def test_read_only_like_jax_and_np_array_copies():
    for j, n in ((jax, jnp), (real_jax, real_jnp)):
        x = n.arange(3.0)
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(x)[0] = 99
        y = np.array(x)  # a copy, writeable, as NumPy's np.array
        y[0] = 99
        assert float(x[0]) == 0.0
        assert np.array(x, dtype=np.float64).flags.writeable


def test_no_copy_on_the_way_out():
    """A jitted op on 4M floats allocates its result once: the backend's own result buffer
    becomes the Array's, made read-only rather than copied."""
    x = jnp.asarray(np.ones(1 << 22, np.float32))
    f = jax.jit(lambda v: v * 2)
    f(x)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = f(x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert float(out[0]) == 2.0
    if jax.current_backend_name() == "numpy_ref":  # XLA allocates outside Python's view
        assert peak < 1.1 * x.size * 4, peak
