"""jit's steady-state fast path (a backend runner called without binding jit_p): it must give
what the full path gives, and step aside whenever the full path would do something else."""
import collections

import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp
from refjax.core import errors
from refjax.sharding import NamedSharding, PartitionSpec as P

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def counted(fun):
    """jax.jit(fun) and the list of its traces (one entry per staging of fun)."""
    traces = []

    def traced(*args, **kwargs):
        traces.append(1)
        return fun(*args, **kwargs)

    return jax.jit(traced), traces


def fast_hits(f):
    """How many fast-path entries a jitted function holds (the path was recorded)."""
    return len(f._fast)


def layout(a):
    return {s.device.id: tuple(sl.indices(d)[:2] for sl, d in zip(s.index, a.shape))
            for s in a.addressable_shards}


def assert_same_array(got, want):
    assert type(got) is type(want) and type(got).__name__ == "ArrayImpl"
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    assert got.sharding == want.sharding
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_repeated_calls_take_the_fast_path_and_agree_with_the_full_path():
    f, traces = counted(lambda x, y: (jnp.sin(x) * y, {"s": jnp.sum(x)}))
    x, y = jnp.arange(6.0).reshape(2, 3), jnp.asarray(2.0)
    first = f(x, y)
    assert fast_hits(f) == 1
    for _ in range(3):
        again = f(x, y)
    assert len(traces) == 1
    assert isinstance(again, tuple) and set(again[1]) == {"s"}
    assert_same_array(again[0], first[0])
    assert_same_array(again[1]["s"], first[1]["s"])
    np.testing.assert_allclose(np.asarray(again[0]), np.sin(np.arange(6.0).reshape(2, 3)) * 2,
                               rtol=1e-6)


def test_weak_types_and_new_shapes_are_separate_entries():
    f, traces = counted(lambda x: x * 2)
    strong, weak = jnp.asarray(1.0, jnp.float32), jnp.asarray(1.0)
    assert not f(strong).weak_type
    assert f(weak).weak_type and f(weak).weak_type
    assert f(jnp.ones(3)).shape == (3,)
    assert len(traces) == 3 and fast_hits(f) == 3
    assert not f(strong).weak_type and len(traces) == 3


def test_pytree_arguments_in_tuples_lists_dicts_and_none():
    f, traces = counted(lambda p, xs, opt: p["w"] @ xs[0] + xs[1] if opt is None else opt)
    p = {"w": jnp.eye(2)}
    xs = [jnp.ones(2), jnp.arange(2.0)]
    for _ in range(3):
        out = f(p, xs, None)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0])
    assert len(traces) == 1
    # a different structure (a tuple instead of a list) is a different signature
    np.testing.assert_array_equal(np.asarray(f(p, tuple(xs), None)), [1.0, 2.0])
    assert len(traces) == 2


def test_namedtuples_python_scalars_and_numpy_arrays_take_the_full_path():
    Pair = collections.namedtuple("Pair", "a b")
    f, traces = counted(lambda pr, s, n: pr.a * s + pr.b + n)
    pr = Pair(jnp.ones(2), jnp.ones(2))
    for _ in range(3):
        out = f(pr, 3.0, np.ones(2, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [5.0, 5.0])
    assert len(traces) == 1 and fast_hits(f) == 0


def test_static_arguments_take_the_full_path():
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    x = jnp.ones(2)
    assert float(f(x, 2)[0]) == 2.0 and float(f(x, 3)[0]) == 3.0
    assert float(f(x, 2)[0]) == 2.0
    assert fast_hits(f) == 0


def test_config_changes_restage():
    f, traces = counted(lambda x: x + jnp.asarray(1.5, jnp.float64))
    x = jnp.ones(2, jnp.float32)
    assert f(x).dtype == np.float32 and f(x).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(x).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(x).dtype == np.float32
    with jax.enable_x64(True):  # a scoped override: the full path, reusing the x64 staging
        assert f(x).dtype == np.float64
    assert len(traces) == 2


def test_scoped_promotion_mode_is_honoured_after_warm_up():
    f = jax.jit(lambda x, y: x + y)
    a, b = jnp.ones(2, jnp.float32), jnp.ones(2, jnp.int32)
    assert f(a, b).dtype == np.float32 and f(a, b).dtype == np.float32
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(errors.TypePromotionError):
            f(a, b)
    assert f(a, b).dtype == np.float32


def test_disable_jit_after_warm_up_runs_python():
    calls = []

    def g(x):
        calls.append(type(x).__name__)
        return x + 1

    f = jax.jit(g)
    x = jnp.ones(2)
    f(x), f(x)
    assert len(calls) == 1
    with jax.disable_jit():
        f(x)
    assert calls[-1] == "ArrayImpl"
    jax.config.update("jax_disable_jit", True)
    try:
        f(x)
    finally:
        jax.config.update("jax_disable_jit", False)
    assert calls[-1] == "ArrayImpl" and len(calls) == 3
    f(x)
    assert len(calls) == 3


def test_clear_caches_forgets_the_fast_path():
    f, traces = counted(lambda x: x - 1)
    x = jnp.ones(2)
    f(x), f(x)
    jax.clear_caches()
    assert fast_hits(f) == 0
    f(x)
    assert len(traces) == 2
    f.clear_cache()
    f(x)
    assert len(traces) == 3


def test_transformations_of_a_warm_function_still_trace_through_it():
    f = jax.jit(lambda x: jnp.sin(x) * x)
    x = jnp.asarray([0.5, 1.0])
    f(x), f(x)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda v: jnp.sum(f(v)))(x)),
                               np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(x)), np.sin([0.5, 1.0]) * [0.5, 1.0],
                               rtol=1e-6)
    assert "sin" in str(jax.make_jaxpr(lambda v: f(v) + 1)(x))


def test_leaked_tracer_is_refused_after_warm_up():
    f = jax.jit(lambda x: x * 2)
    x = jnp.ones(2)
    f(x), f(x)
    leaked = []
    jax.grad(lambda v: (leaked.append(v), jnp.sum(v))[1])(x)
    with pytest.raises(errors.UnexpectedTracerError):
        f(leaked[0])


def test_sharded_inputs_after_warm_up_are_laid_out_as_the_full_path_does():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    f, traces = counted(lambda a: jnp.sin(a) * 2)
    host = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    plain = jnp.asarray(host)
    f(plain), f(plain)
    assert fast_hits(f) == 1
    sharded = jax.device_put(plain, NamedSharding(mesh, P("x", "y")))
    out = f(sharded)
    assert out.sharding == NamedSharding(mesh, P("x", "y"))
    assert layout(out) == layout(sharded)
    on_3 = jax.device_put(plain, jax.devices()[3])
    assert f(on_3).sharding == jax.sharding.SingleDeviceSharding(jax.devices()[3])
    np.testing.assert_allclose(np.asarray(f(on_3)), np.sin(host) * 2, rtol=1e-6)
    assert f(plain).sharding == plain.sharding
    assert len(traces) == 2  # as JAX's: an Array on a mesh of Auto axes is typed on that mesh


def test_functions_setting_layouts_keep_them_on_every_call():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    s = NamedSharding(mesh, P(None, "y"))
    f = jax.jit(lambda a: a + 1, out_shardings=s)
    g = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, s))
    x = jnp.ones((4, 8))
    for _ in range(3):
        assert f(x).sharding == s and g(x).sharding == s


def test_arrays_of_another_backend_are_refused_after_warm_up():
    f = jax.jit(lambda x: x + 1)
    x = jnp.ones(2)
    f(x), f(x)
    other = "numpy_ref" if jax.current_backend_name() == "xla" else "xla"
    with jax.backend(other):
        y = jnp.ones(2)
    with pytest.raises(ValueError, match="device_put"):
        f(y)
    with jax.backend(other):  # the same avals on the other backend: its own entry
        assert f(y).sharding == y.sharding
        np.testing.assert_array_equal(np.asarray(f(y)), [2.0, 2.0])


def test_float0_and_integer_inputs():
    f = jax.jit(lambda i, x: (x * i, i + 1))
    i, x = jnp.asarray([1, 2], jnp.int32), jnp.ones(2)
    for _ in range(3):
        a, b = f(i, x)
    assert a.dtype == np.float32 and b.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(b), [2, 3])
    g = jax.jit(jax.grad(lambda x, i: jnp.sum(x * i), argnums=(0, 1), allow_int=True))
    for _ in range(3):
        gx, gi = g(x, i)
    assert gi.dtype == jax.dtypes.float0 and gx.dtype == np.float32
