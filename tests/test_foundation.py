"""Foundation: dtype promotion vs JAX, config, Array API, jit staging/caching, errors."""
import itertools

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp
from refjax import errors

pytestmark = pytest.mark.backends("numpy_ref", "xla")
# dtype promotion is decided by abstract evaluation, the same on every backend.
own_backend = pytest.mark.backends()

PROMO_DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint32", "float16", "bfloat16",
                "float32"]
WEAK_SCALARS = [3, 2.5, 1 + 2j, True]


def _operand(mod, kind):
    if isinstance(kind, str):
        return mod.ones((2,), dtype=kind if kind != "bfloat16" else mod.bfloat16)
    return kind


def _signature(x):
    return (np.dtype(x.dtype).name, bool(getattr(x, "weak_type", False)))


@own_backend
@pytest.mark.parametrize("a,b", list(itertools.product(PROMO_DTYPES + WEAK_SCALARS, repeat=2)))
def test_add_promotion_table_matches_jax(a, b):
    expected = real_jnp.add(_operand(real_jnp, a), _operand(real_jnp, b))
    got = jnp.add(_operand(jnp, a), _operand(jnp, b))
    assert _signature(got) == _signature(expected)


def test_x64_canonicalisation_and_config():
    assert jnp.asarray(np.arange(3, dtype=np.int64)).dtype == np.int32
    assert jnp.asarray(np.ones(3)).dtype == np.float32
    with jax.config.override(jax_enable_x64=True):
        assert jnp.asarray(np.ones(3)).dtype == np.float64
        assert jnp.asarray(1.5).dtype == np.float64
    assert jnp.asarray(1.5).dtype == np.float32
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        jax.config.update("jax_no_such_option", True)
    with pytest.raises(ValueError):
        jax.config.update("jax_numpy_dtype_promotion", "loose")


def test_strict_promotion_raises_like_jax():
    with jax.config.override(jax_numpy_dtype_promotion="strict"):
        with pytest.raises(errors.TypePromotionError):
            jnp.add(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32))
        assert jnp.add(jnp.ones(2, jnp.float32), 1.0).dtype == np.float32


# ---------------------------------------------------------------- Array API

def test_array_repr_matches_jax():
    cases = [np.arange(6.0).reshape(2, 3), np.arange(30.0), np.array(2.0, np.float32),
             np.array([1, 2, 3], np.int32), np.array([True, False])]
    for c in cases:
        assert repr(jnp.asarray(c)) == repr(real_jnp.asarray(c))
    assert repr(jnp.asarray(2.0)) == repr(real_jnp.asarray(2.0))  # weak_type shown


def test_array_attributes_and_conversions():
    x = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert (x.shape, x.dtype, x.ndim, x.size) == ((2, 3), np.float32, 2, 6)
    assert x.T.shape == (3, 2) and x.reshape(3, 2).shape == (3, 2)
    assert x.astype(jnp.int32).dtype == np.int32
    assert x[1, 2].item() == 5.0 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3))
    assert x.block_until_ready() is x
    assert float(x[0, 1]) == 1.0 and int(x[1, 0]) == 3


@pytest.mark.parametrize("idx", [1, -1, (0, 2), (slice(None), 1), (slice(1, None), None),
                                 (Ellipsis, 0), (None, Ellipsis), (slice(None, None, -1),),
                                 (slice(3, 0, -2), slice(None)), (-2, slice(0, 2))])
def test_basic_indexing_matches_numpy(idx):
    ref = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(ref)[idx]), ref[idx])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a[idx])(jnp.asarray(ref))), ref[idx])


def test_traced_integer_index():
    ref = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    f = jax.jit(lambda a, i: a[i])
    for i in (0, 3, -1):
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(ref), i)), ref[i])


def test_operators_match_jax():
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    b = np.full((3,), 2.0, np.float32)
    for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
               "__pow__", "__lt__", "__ge__", "__eq__", "__radd__", "__rsub__", "__rtruediv__"):
        got = getattr(jnp.asarray(a), op)(jnp.asarray(b))
        expected = getattr(real_jnp.asarray(a), op)(real_jnp.asarray(b))
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)
        assert got.dtype == expected.dtype
    got = jnp.asarray(a) @ jnp.asarray(a.T)
    np.testing.assert_allclose(np.asarray(got), a @ a.T, rtol=1e-6)
    assert (-jnp.asarray(a)).dtype == np.float32 and (2 ** jnp.asarray(a)).dtype == np.float32


# ---------------------------------------------------------------- jit and make_jaxpr

def test_make_jaxpr_prints_like_jax():
    f = lambda x: jnp.sin(x) * 2 + 1  # noqa: E731
    real_f = lambda x: real_jnp.sin(x) * 2 + 1  # noqa: E731
    x = np.ones((2, 3), np.float32)
    assert str(jax.make_jaxpr(f)(x)) == str(real_jax.make_jaxpr(real_f)(x))
    jaxpr = jax.make_jaxpr(f)(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul", "add"]
    assert len(jaxpr.jaxpr.invars) == 1 and len(jaxpr.jaxpr.outvars) == 1


def test_jit_traces_once_per_signature_and_static_args():
    traces = []

    def f(x, n):
        traces.append(1)
        return x * n

    g = jax.jit(f, static_argnums=1)
    x = jnp.ones(3)
    for _ in range(3):
        g(x, 2)
    assert len(traces) == 1
    g(x, 3)
    g(jnp.ones(4), 3)
    assert len(traces) == 3
    h = jax.jit(f, static_argnames="n")
    assert float(h(x, n=4)[0]) == 4.0
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(x, [1])
    jax.clear_caches()
    g(x, 2)
    assert len(traces) == 5


def test_jit_results_equal_eager_and_nested_jit():
    f = lambda a, b: jnp.tanh(a @ b.T) + jnp.sum(a) / 3  # noqa: E731
    a = jnp.asarray(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))
    inner = jax.jit(f)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a, b: inner(a, b) * 2)(a, a)),
                               np.asarray(f(a, a)) * 2, rtol=1e-6)
    assert "dot_general" in jax.jit(f).lower(a, a).as_text()


def test_donate_argnums_accepted_and_disable_jit():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    assert float(f(jnp.asarray(1.0))) == 2.0
    calls = []

    def g(x):
        calls.append(type(x).__name__)
        return x

    with jax.config.override(jax_disable_jit=True):
        jax.jit(g)(jnp.asarray(1.0))
    assert calls == ["ArrayImpl"]  # as JAX's concrete class


def test_eval_shape_and_shape_dtype_struct():
    f = lambda a, b: a @ b.T + jnp.sum(a)  # noqa: E731
    out = jax.eval_shape(f, jnp.ones((2, 3)), jax.ShapeDtypeStruct((2, 3), jnp.float32))
    assert out == jax.ShapeDtypeStruct((2, 2), jnp.float32)


# ---------------------------------------------------------------- errors

def test_add_shape_mismatch_names_op_and_shapes():
    """As JAX 0.10.2: TypeError for operands of one rank (lax's error, also through jnp and
    operators), ValueError when jnp's rank promotion fails."""
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"):
        jax.lax.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]"):
        jnp.ones((2, 3)) + jnp.ones(4)


def test_contracting_dims_and_reshape_errors():
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
        jax.lax.dot_general(jnp.ones((2, 3)), jnp.ones((2, 4)), (([1], [1]), ([], [])))
    with pytest.raises(TypeError, match=r"\(2, 3\).*\(2, 3\)"):
        jnp.ones((2, 3)) @ jnp.ones((2, 3))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4, 2\)"):
        jnp.ones((2, 3)).reshape(4, 2)


def test_traced_bool_and_traced_shape_errors():
    def branchy(x):
        return x if x > 0 else -x

    with pytest.raises(errors.TracerBoolConversionError, match="static_argnums"):
        jax.jit(branchy)(1.0)
    assert issubclass(errors.TracerBoolConversionError, TypeError)
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    with pytest.raises(TypeError, match="static"):
        jax.jit(lambda n: jnp.zeros(n))(3)
    with pytest.raises(TypeError):
        jax.jit(lambda x, n: x.reshape(n))(jnp.ones(4), 4)


def test_failed_trace_leaves_no_state():
    from refjax.core import trace
    before = trace.current_trace()
    with pytest.raises(TypeError, match="incompatible shapes"):
        jax.jit(lambda x: jnp.ones(3) + jnp.ones(4) + x)(1.0)
    assert trace.current_trace() is before
    assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0


def test_config_context_managers_and_dtypes_namespace_match_jax():
    x = np.ones(2, np.float32)
    with jax.enable_x64(True), real_jax.enable_x64(True):
        assert jnp.asarray(x, np.float64).dtype == real_jnp.asarray(x, np.float64).dtype
    with jax.enable_x64(False):
        assert jnp.asarray(x, np.float32).astype(np.float64).dtype == np.float32
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(jax.dtypes.TypePromotionError):
            jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.float32)
    assert (jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.float32)).dtype == np.float32
    seen = []
    with jax.disable_jit():
        jax.jit(lambda v: seen.append(type(v)) or v)(jnp.ones(2))
    assert seen == [type(jnp.ones(2))] and issubclass(seen[0], jax.Array)
    with jax.disable_jit(False):
        jax.jit(lambda v: seen.append(type(v)) or v)(jnp.ones(2))
    assert seen[-1] is not seen[0] and issubclass(seen[-1], jax.Array)  # a tracer, as in JAX
    for name in ("float0", "bfloat16"):
        assert getattr(jax.dtypes, name) == getattr(real_jax.dtypes, name)
    for dt in (np.float64, np.int64, np.bool_, np.uint8, jnp.bfloat16):
        assert jax.dtypes.canonicalize_dtype(dt) == real_jax.dtypes.canonicalize_dtype(dt)
        assert jax.dtypes.itemsize_bits(dt) == real_jax.dtypes.itemsize_bits(dt)
        assert jax.dtypes.issubdtype(dt, np.floating) == real_jax.dtypes.issubdtype(dt, np.floating)
    assert jax.dtypes.canonicalize_dtype(jax.dtypes.float0) == jax.dtypes.float0
    assert jax.dtypes.result_type(np.int8, 1.0) == real_jax.dtypes.result_type(np.int8, 1.0)
    assert jax.dtypes.finfo(jnp.bfloat16).eps == real_jax.dtypes.finfo(jnp.bfloat16).eps
    assert jax.dtypes.iinfo(np.int8).min == -128
