"""What users see when they print values: Arrays (repr, str, format) and tracers, against real
JAX's text; and the array type users check (`isinstance(x, jax.Array)`, `type(x)`)."""
import jax as real_jax
import jax.numpy as real_jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import refjax as jax
import refjax.numpy as jnp
from refjax.spec.checks import budget, enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")

_DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16, ml_dtypes.bfloat16,
           np.float32, np.complex64]
_SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, 1e30, 123456.789, 1e-5, 0.1, -2.5]


def _values(dtype, shape):
    """Arrays of `dtype`: for floats, mixes of special values and magnitudes far apart."""
    kind = np.dtype(dtype).kind
    if kind in "biu":
        return hnp.arrays(dtype, shape)
    floats = st.one_of(st.sampled_from(_SPECIAL), st.floats(-1e6, 1e6, width=32))
    elements = floats if kind != "c" else st.builds(complex, floats, floats)
    base = np.complex64 if kind == "c" else np.float32
    return hnp.arrays(base, shape, elements=elements).map(lambda a: _cast(a, dtype))


def _cast(a, dtype):
    with np.errstate(over="ignore"):  # 1e30 becomes inf in float16: a value worth printing
        return a.astype(dtype)


arrays = st.tuples(st.sampled_from(_DTYPES), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                              max_side=7)
                   ).flatmap(lambda ds: _values(*ds))


def assert_prints_as_jax(value):
    ours, theirs = jnp.asarray(value), real_jnp.asarray(value)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


@budget(3)
@given(arrays)
def test_array_repr_and_str_match_jax(value):
    assert_prints_as_jax(value)


@pytest.mark.parametrize("value", [
    np.arange(1001, dtype=np.float32), np.arange(2000).reshape(40, 50).astype(np.int32),
    np.linspace(-1e9, 1e9, 1500).astype(np.float32), np.ones((11, 10, 10), np.bool_),
    np.arange(12, dtype=np.float32), np.arange(13, dtype=np.float32),
    np.arange(20, dtype=np.float32) * 1e-8, np.zeros((0, 3), np.float32), np.zeros(0, np.int8),
    np.full((2, 3), np.nan, np.complex64), np.array(-0.0, np.float32),
    np.arange(6, dtype=np.uint32).reshape(1, 2, 3) * 4_000_000_000 // 5,
], ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_array_repr_of_long_empty_and_wrapped_arrays_matches_jax(value):
    assert_prints_as_jax(value)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.complex128])
def test_64_bit_arrays_print_as_jax(dtype):
    with enable_x64():
        value = (np.arange(-3, 9).reshape(3, 4) * 1e10 / 7).astype(dtype)
        assert_prints_as_jax(value)
        assert_prints_as_jax(1.5)  # weakly typed float64


@pytest.mark.parametrize("scalar", [1.0, -0.0, 3, True, 1 - 0j, 2.5e-7, float("nan")])
def test_weak_typed_arrays_show_weak_type_as_jax(scalar):
    assert_prints_as_jax(scalar)
    assert repr(jnp.asarray(scalar) * 2) == repr(real_jnp.asarray(scalar) * 2)


def test_format_as_jax():
    for spec in ("", ".3f", "e", "10.2f"):
        assert format(jnp.float32(2.5), spec) == format(real_jnp.float32(2.5), spec)
    assert format(jnp.ones(2), "") == format(real_jnp.ones(2), "")
    with pytest.raises(TypeError):  # NumPy's (and JAX's) error for a format of an array
        format(jnp.ones(2), ".2f")
    with pytest.raises(TypeError):
        format(real_jnp.ones(2), ".2f")


# ---------------------------------------------------------------- tracers

def _tracer_programs(jax, jnp):
    """A function running `show` on values of every kind of trace, nested."""
    def run(show):
        jax.jit(show)(1.0)
        jax.jit(show)(jnp.ones(3))
        jax.jit(show)(jnp.ones((2, 3), jnp.int32))
        jax.make_jaxpr(show)(1)
        jax.jvp(show, (1.0,), (1.0,))
        jax.jvp(show, (jnp.ones(2),), (jnp.ones(2),))
        jax.grad(show)(1.0)
        jax.vmap(show)(jnp.ones(3))
        jax.vmap(show)(jnp.ones((3, 2)))
        jax.vmap(jax.vmap(show))(jnp.ones((3, 2)))
        jax.grad(jax.grad(show))(1.0)
        jax.jit(jax.grad(show))(2.0)
        jax.vmap(jax.grad(show))(jnp.ones(3))
        jax.grad(lambda x: show(jax.vmap(show)(x)).sum())(jnp.ones(3))
        jax.jit(lambda x: jax.jvp(show, (x,), (x,)))(3.0)
        jax.linearize(show, 1.0)
        jax.vjp(show, 1.0)
        jax.jvp(lambda x: jax.jvp(show, (x,), (x,))[0], (1.0,), (2.0,))
        # An integer result has a zero tangent: JAX no longer traces it.
        jax.grad(lambda x: show(x.astype(int)).astype(float).sum() + x)(1.0)
        jax.jvp(lambda x: show(jnp.floor(x) > 0), (1.0,), (1.0,))
    return run


def _printed(lib, lib_np):
    seen = []

    def show(x):
        seen.append((repr(x), str(x), isinstance(x, lib.Array)))
        return x

    _tracer_programs(lib, lib_np)(show)
    return seen


def test_tracers_print_as_jax():
    ours, theirs = _printed(jax, jnp), _printed(real_jax, real_jnp)
    assert ours == theirs
    assert ("JitTracer(~float32[])", "JitTracer(~float32[])", True) in ours  # `~`: weak type


def test_array_type_as_jax():
    x = jnp.ones(3)
    assert isinstance(x, jax.Array) and isinstance(x, jnp.ndarray) and jnp.ndarray is jax.Array
    assert type(x) is not jax.Array and type(x).__name__ == type(real_jnp.ones(3)).__name__
    assert repr(jax.Array) == "<class 'refjax.Array'>"
    assert not isinstance(np.ones(3), jax.Array) and not isinstance(1.0, jax.Array)
    kinds = []
    jax.jit(lambda v: kinds.append((isinstance(v, jax.Array), type(v) is jax.Array)) or v)(x)
    real_jax.jit(lambda v: kinds.append((isinstance(v, real_jax.Array), type(v) is real_jax.Array))
                 or v)(real_jnp.ones(3))
    assert kinds == [(True, False)] * 2


@pytest.mark.parametrize("value", [1.0, np.ones((2, 3), np.int32), True, np.zeros(4, np.uint8)])
def test_avals_print_as_jax(value):
    ours, theirs = jnp.asarray(value).aval, real_jnp.asarray(value).aval
    assert (str(ours), repr(ours)) == (str(theirs), repr(theirs))
