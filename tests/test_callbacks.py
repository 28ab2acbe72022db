"""jax.pure_callback and jax.experimental.io_callback against real JAX 0.10.2: values, the
arrays each call receives under every vmap_method, printed jaxprs, ordering, and JAX's errors
(a callback returning the wrong types; differentiation; vmap of an ordered io_callback), on
both backends."""
import functools

import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
import refjax.numpy as jnp

pytestmark = pytest.mark.backends("numpy_ref", "xla")
METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
           "legacy_vectorized")


def _add(jax, vmap_method):
    """jax.pure_callback's documented example: the callback records the shapes it receives."""
    calls = []

    def callback(x, y):
        calls.append((np.shape(x), np.shape(y), type(x).__name__))
        return np.asarray(x + y)

    def fun(x, y):
        shape = jax.numpy.broadcast_shapes(jax.numpy.shape(x), jax.numpy.shape(y))
        out_type = jax.ShapeDtypeStruct(shape, jax.numpy.result_type(x, y))
        return jax.pure_callback(callback, out_type, x, y, vmap_method=vmap_method)
    return fun, calls


def _run_vmapped(jax, vmap_method, wrap):
    fun, calls = _add(jax, vmap_method)
    out = wrap(jax, jax.vmap(fun, in_axes=(0, None)))(jax.numpy.arange(4.0), 1.0)
    return np.asarray(out), [c[:2] for c in calls]


@pytest.mark.parametrize("wrap", [lambda jax, f: f, lambda jax, f: jax.jit(f)],
                         ids=["eager", "jit"])
@pytest.mark.parametrize("vmap_method", METHODS)
def test_vmap_methods_call_as_jax(vmap_method, wrap):
    """Values and the shapes each call sees (one call per element or one batched call)."""
    expected = _run_vmapped(real_jax, vmap_method, wrap)
    actual = _run_vmapped(refjax, vmap_method, wrap)
    np.testing.assert_array_equal(actual[0], expected[0])
    assert actual[1] == expected[1]


@pytest.mark.parametrize("vmap_method", METHODS + (None,))
def test_jaxprs_print_as_jax(vmap_method):
    def text(jax):
        fun, _ = _add(jax, vmap_method)
        plain = jax.make_jaxpr(fun)(np.float32(1.0), np.float32(2.0))
        if vmap_method is None:
            return str(plain)
        return str(plain) + str(jax.make_jaxpr(jax.vmap(fun, in_axes=(0, None)))(
            np.arange(3.0, dtype=np.float32), np.float32(1.0)))
    assert text(refjax) == on_jax(text)


def test_callback_gets_arrays_and_pytrees():
    """The callback receives this backend's Arrays, args and kwargs as pytrees; its outputs
    form the declared tree (NumPy 64-bit scalars canonicalised, as JAX does)."""
    seen = []

    def callback(a, *, d):
        seen.append((isinstance(a["x"], refjax.Array), isinstance(d, refjax.Array)))
        return {"s": np.float64(np.sum(a["x"]) + d), "t": (np.asarray(a["x"]) * 2,)}

    def fun(jax, x):
        types = {"s": jax.ShapeDtypeStruct((), np.float32),
                 "t": (jax.ShapeDtypeStruct((3,), np.float32),)}
        return jax.jit(lambda x: jax.pure_callback(callback, types, {"x": x}, d=x[0]))(x)
    got = fun(refjax, jnp.arange(3.0))
    want = fun(real_jax, real_jax.numpy.arange(3.0))
    assert seen[0] == (True, True)
    assert refjax.tree.structure(got) == refjax.tree.structure(
        {"s": 0, "t": (0,)}) and got["s"].dtype == want["s"].dtype == np.float32
    np.testing.assert_array_equal(got["t"][0], want["t"][0])
    assert float(got["s"]) == float(want["s"]) == 3.0


def test_no_operands_and_no_results():
    for jax in (refjax, real_jax):
        assert float(jax.pure_callback(lambda: np.float32(2.0),
                                       jax.ShapeDtypeStruct((), np.float32))) == 2.0
        assert jax.jit(lambda x: jax.pure_callback(lambda x: (), (), x))(1.0) == ()


def _runtime_error():
    """What a wrong callback result raises on this backend: refjax's JaxRuntimeError on the
    oracle, JAX's (the callback runs inside a JAX program) on xla; both RuntimeErrors."""
    if refjax.current_backend_name() == "numpy_ref":
        return refjax.errors.JaxRuntimeError
    return real_jax.errors.JaxRuntimeError


@pytest.mark.parametrize("callback, types, match", [
    (lambda x: np.ones(3, np.float32), ((), np.float32), r"output shape .* #0: Expected: \(\), "
                                                         r"Actual: \(3,\)"),
    (lambda x: np.ones((), np.int32), ((), np.float32), "output dtype .* Expected: float32, "
                                                        "Actual: int32"),
    (lambda x: (x, x), ((), np.float32), "Mismatched number of outputs from callback. "
                                         "Expected: 1, Actual: 2"),
])
@pytest.mark.parametrize("jit", [False, True])
def test_wrong_results_raise_as_jax(callback, types, match, jit):
    def call(jax):
        f = lambda x: jax.pure_callback(callback, jax.ShapeDtypeStruct(*types), x)  # noqa: E731
        return (jax.jit(f) if jit else f)(np.float32(1.0))
    with pytest.raises(real_jax.errors.JaxRuntimeError, match=match):
        call(real_jax)
    with pytest.raises(_runtime_error(), match=match):
        call(refjax)


def _errors(jax):
    pure = functools.partial(jax.pure_callback, np.sin, jax.ShapeDtypeStruct((), np.float32))
    io = functools.partial(jax.experimental.io_callback, np.sin,
                           jax.ShapeDtypeStruct((), np.float32))
    return {
        "vmap_without_method": lambda: jax.vmap(pure)(np.ones(3, np.float32)),
        "grad": lambda: jax.grad(pure)(np.float32(1.0)),
        "jvp": lambda: jax.jvp(pure, (np.float32(1.0),), (np.float32(1.0),)),
        "jit_grad": lambda: jax.jit(jax.grad(pure))(np.float32(1.0)),
        "bad_method": lambda: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), np.float32),
                                                1.0, vmap_method="parallel"),
        "x64_type": lambda: jax.pure_callback(np.sin, np.zeros((), np.float64), 1.0),
        "io_grad": lambda: jax.grad(io)(np.float32(1.0)),
        "io_ordered_vmap": lambda: jax.vmap(functools.partial(io, ordered=True))(
            np.ones(3, np.float32)),
    }


@pytest.mark.parametrize("name", sorted(_errors(real_jax)))
def test_errors_as_jax(name):
    """JAX's classes and messages; refjax's differentiation errors also name the primitive
    (JAX's say 'Pure callbacks' / 'IO callbacks' only)."""
    with pytest.raises(Exception) as expected:
        _errors(real_jax)[name]()
    with pytest.raises(type(expected.value)) as actual:
        _errors(refjax)[name]()
    message = str(actual.value)
    assert message.startswith(str(expected.value).strip())
    if "JVP" in message:
        assert "_callback)" in message


def test_io_callback_runs_in_order_and_under_vmap():
    """ordered io_callbacks under jit run in program order; unordered ones vmap sequentially,
    one call per element."""
    def program(jax):
        log = []

        def record(x):
            log.append(float(np.asarray(x)))
            return np.asarray(x) * 2
        io = jax.experimental.io_callback
        out_type = jax.ShapeDtypeStruct((), np.float32)
        f = jax.jit(lambda x: [io(record, out_type, x + i, ordered=True) for i in range(3)])
        ordered = [float(v) for v in f(np.float32(1.0))]
        mapped = jax.vmap(lambda x: io(record, out_type, x))(np.arange(3.0, dtype=np.float32))
        return ordered, np.asarray(mapped).tolist(), log
    assert program(refjax) == on_jax(program)


def test_custom_jvp_makes_a_callback_differentiable():
    """The documented way to differentiate through pure_callback (JAX's external-callbacks
    guide): custom_jvp around it; compared with the analytic derivative of sin."""
    @refjax.custom_jvp
    def f(x):
        return refjax.pure_callback(np.sin, refjax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                    vmap_method="expand_dims")

    @f.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), refjax.pure_callback(np.cos, refjax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                          vmap_method="expand_dims") * t
    x = jnp.linspace(0.0, 2.0, 5)
    np.testing.assert_allclose(refjax.vmap(refjax.grad(f))(x), np.cos(np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(refjax.jit(refjax.grad(lambda x: f(x).sum()))(x),
                               np.cos(np.asarray(x)), rtol=1e-6)


def _callback_counts(jax_mod):
    """How often the callable of a pure_callback runs, per program: JAX's compiler drops a
    pure_callback whose result nothing uses (in a nested jit, a scan or cond body too)."""
    calls = []

    def cb(x):
        calls.append(1)
        return np.asarray(x)

    def use(x):
        jax_mod.pure_callback(cb, jax_mod.ShapeDtypeStruct((), np.float32), x)
        return x + 1
    used = lambda x: jax_mod.pure_callback(cb, jax_mod.ShapeDtypeStruct.like(x), x) + 1  # noqa: E731
    programs = {
        "jit": jax_mod.jit(use), "nested": jax_mod.jit(lambda x: jax_mod.jit(use)(x) * 2),
        "used": jax_mod.jit(used), "eager": use,
        "scan": jax_mod.jit(lambda x: jax_mod.lax.scan(lambda c, _: (use(c), None), x, None,
                                                       length=3)[0]),
        "cond": jax_mod.jit(lambda x: jax_mod.lax.cond(x > 0, use, lambda v: v + 1, x)),
    }
    counts = {}
    for name, f in programs.items():
        calls.clear()
        np.testing.assert_allclose(f(np.float32(1.0)), 4.0 if name in ("nested", "scan") else 2.0)
        counts[name] = len(calls)
    return counts


def test_an_unused_pure_callback_does_not_run_under_jit():
    assert _callback_counts(refjax) == on_jax(_callback_counts)


def test_shape_dtype_struct_like_as_jax():
    """ShapeDtypeStruct.like (the external-callbacks page's result type): shape, dtype and
    weak type of arrays, scalars, NumPy values, ShapeDtypeStructs and tracers."""
    def likes(jax_mod):
        like = jax_mod.ShapeDtypeStruct.like
        seen = []
        jax_mod.jit(lambda x: seen.append(like(x * 2)) or x)(np.ones(3, np.int16))
        values = [jax_mod.numpy.ones((2, 3)), 1.0, 7, np.int8(3), np.ones((2,), np.float16),
                  jax_mod.ShapeDtypeStruct((4,), np.uint8)]
        return [repr(like(v)) for v in values] + [repr(seen[0])]
    assert likes(refjax) == on_jax(likes)


def _shard_map_callback_shapes(jax_mod):
    """The shapes a pure_callback sees: the whole array under jit, one block per device in a
    shard_map body (eager and jitted), whatever its vmap_method (JAX's callbacks page)."""
    seen = []

    def host(x):
        seen.append(x.shape)
        return np.asarray(x) * 2
    f = lambda x: jax_mod.pure_callback(host, jax_mod.ShapeDtypeStruct.like(x), x)  # noqa: E731
    mesh = jax_mod.make_mesh((4, 2), ("i", "j"))
    out = []
    with jax_mod.set_mesh(mesh):
        x = jax_mod.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2),
                               jax_mod.P("i", "j"))
        sm = jax_mod.shard_map(f, in_specs=jax_mod.P("i", "j"), out_specs=jax_mod.P("i", "j"))
        for g in (jax_mod.jit(f), sm, jax_mod.jit(sm)):
            seen.clear()
            out.append((np.asarray(g(x)).tolist(), sorted(seen)))
    return out


def test_a_callback_in_shard_map_runs_once_per_device():
    assert _shard_map_callback_shapes(refjax) == on_jax(_shard_map_callback_shapes)
