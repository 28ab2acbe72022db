"""The narrow dtypes (float8_*, int4, ...: construction, weak promotion, no implicit promotion
otherwise, printing, jaxprs), printoptions, array construction from buffers/strings/files/
iterables, load/save, einsum_path, and NumPy's re-exports, against jax.numpy."""
import io

import jax
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp
from jnp_compare import check, check_error

pytestmark = pytest.mark.backends("numpy_ref", "xla")

NARROW = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int4",
          "uint4", "int2", "uint2"]


@pytest.mark.parametrize("name", NARROW)
def test_narrow_dtypes(name):
    check(lambda m: getattr(m, name)(2))
    check(lambda m: m.ones(3, getattr(m, name)) * 2)
    check(lambda m: m.ones(3, getattr(m, name)) + 1)
    check(lambda m: m.arange(3.0).astype(getattr(m, name)))
    assert repr(rnp.ones(2, getattr(rnp, name))) == repr(jax.numpy.ones(2, getattr(jax.numpy, name)))


@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("name", ["float6_e2m3fn", "float6_e3m2fn", "uint1"])
def test_types_xla_cannot_compile_on_the_oracle(name):
    """XLA on CPU rejects these (JAX fails); the oracle computes them as ml_dtypes does."""
    dtype = np.dtype(getattr(__import__("ml_dtypes"), name))
    out = rnp.ones(3, getattr(rnp, name)) * 1
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), np.ones(3, dtype) * np.ones(3, dtype))


def test_narrow_dtypes_do_not_promote():
    check_error(lambda m: m.ones(2, m.float8_e4m3fn) + m.ones(2))
    check_error(lambda m: m.ones(2, m.int4) + m.ones(2, m.int8))
    check_error(lambda m: m.ones(2, m.float8_e4m3fn) + m.ones(2, m.float8_e5m2))


@pytest.mark.backends()
def test_narrow_dtype_jaxpr():
    ours = refjax.make_jaxpr(lambda x: x * 2)(rnp.ones(2, rnp.float8_e5m2))
    theirs = jax.make_jaxpr(lambda x: x * 2)(jax.numpy.ones(2, jax.numpy.float8_e5m2))
    assert str(ours) == str(theirs)


@pytest.mark.backends()
def test_printoptions():
    x = np.arange(3.0) / 3
    with rnp.printoptions(precision=2):
        ours = repr(rnp.asarray(x, dtype=np.float32))
    with jax.numpy.printoptions(precision=2):
        theirs = repr(jax.numpy.asarray(x, dtype=np.float32))
    assert ours == theirs and "0.33" in ours
    assert rnp.get_printoptions() == jax.numpy.get_printoptions()


@pytest.mark.parametrize("call", [
    lambda m: m.fromstring("1 2 3", dtype=int, sep=" "),
    lambda m: m.fromstring("0.1, 0.2, 0.3", dtype=float, count=2, sep=","),
    lambda m: m.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8),
    lambda m: m.frombuffer(np.arange(3, dtype=np.float32).tobytes(), dtype=np.float32),
    lambda m: m.bool(1),
    lambda m: m.array_repr(np.arange(3)),
    lambda m: m.array_str(np.arange(3.0)),
    lambda m: m.iterable([1]),
    lambda m: m.einsum_path("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4)))[0],
    lambda m: m.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)),
                            optimize="greedy")[0],
])
def test_construction_and_reexports(call):
    check(call, jit=False)


def test_save_and_load_round_trip():
    f = io.BytesIO()
    rnp.save(f, rnp.arange(4, dtype=rnp.bfloat16))
    f.seek(0)
    check(lambda m: m.array([0, 1, 2, 3], m.bfloat16), jit=False)
    loaded = rnp.load(f)
    assert loaded.dtype == rnp.bfloat16 and np.asarray(loaded).tolist() == [0, 1, 2, 3]


def test_impure_constructors_outside_jit(tmp_path):
    """fromfile and fromiter (JAX: NotImplementedError) read their source once, as NumPy."""
    np.arange(5, dtype=np.int32).tofile(tmp_path / "x.bin")
    out = rnp.fromfile(tmp_path / "x.bin", dtype=np.int32)
    assert out.dtype == np.int32 and np.asarray(out).tolist() == [0, 1, 2, 3, 4]
    out = rnp.fromiter(iter(range(3)), float)
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [0.0, 1.0, 2.0]
    out = rnp.from_dlpack(np.arange(3.0, dtype=np.float32))
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [0.0, 1.0, 2.0]


def test_scalar_type_reexports():
    for name in ("character", "flexible", "object_", "ComplexWarning"):
        assert getattr(rnp, name) is getattr(jax.numpy, name)


def test_array_api_methods():
    """The array API's array methods, as JAX's Array has them."""
    x = rnp.arange(3.0)
    assert x.__array_namespace__() is rnp
    assert x.__dlpack_device__() == jax.numpy.arange(3.0).__dlpack_device__()
    assert x.to_device(x.device).device == x.device
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(3.0))
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    assert refjax.jit(lambda v: v.__array_namespace__().sum(v))(x) == 3.0


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.bool_, np.float16, np.int32])
def test_cumulative_dtypes(dtype):
    for name in ("cumulative_sum", "cumulative_prod"):
        check(lambda m: getattr(m, name)(np.ones(2, dtype), include_initial=True, axis=0),
              jit=False)


def test_unique_of_a_scalar():
    check(lambda m: m.unique(np.array(3.0), return_inverse=True), jit=False)
    check(lambda m: tuple(m.unique_inverse(np.array(False))), jit=False)
