"""refjax.nn's block-scaled matmuls (scaled_matmul, scaled_dot_general,
get_scaled_dot_general_config) against JAX 0.10.2 and NumPy with ml_dtypes. JAX 0.10.2 cannot
run scaled_matmul on CPU ("MLIR translation rule for primitive 'scaled_matmul' not found for
platform cpu"), so values are checked against its documented formula (the CPU lowering JAX
main has) computed in NumPy and against JAX's own quantization; shapes, dtypes, configs and
errors against JAX directly."""
import functools
import warnings

import ml_dtypes
import numpy as np
import pytest

import jax
from jax._src.cudnn import scaled_matmul_stablehlo as jax_scaled

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.RandomState(0)
DN = (((2,), (2,)), ((0,), (0,)))
E4M3_MAX = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)


def configs(lib, mode):
    return [lib.nn.get_scaled_dot_general_config(mode)] * 3


def numpy_scaled_matmul(a, b, a_scales, b_scales):
    """The documented formula: each operand times its block scales, then einsum BMK,BNK->BMN."""
    rep = lambda x, s: x.astype(np.float64) * np.repeat(s.astype(np.float64),
                                                        x.shape[-1] // s.shape[-1], -1)
    return np.einsum("bmk,bnk->bmn", rep(a, a_scales), rep(b, b_scales))


def numpy_mxfp8(x):
    """x [B, M, K] quantized by 32-blocks along K: scales the powers of two at or above each
    block's max |x| / 448 (by frexp, not bit manipulation), values rounded to float8_e4m3fn."""
    blocks = x.reshape(*x.shape[:-1], -1, 32).astype(np.float32)
    mantissa, exponent = np.frexp(np.abs(blocks).max(-1, keepdims=True) / np.float32(E4M3_MAX))
    scale = np.ldexp(np.float32(1), np.where(mantissa == 0.5, exponent - 1, exponent))
    values = np.clip(blocks / scale, -E4M3_MAX, E4M3_MAX).astype(ml_dtypes.float8_e4m3fn)
    return values.reshape(x.shape), scale[..., 0].astype(ml_dtypes.float8_e8m0fnu)


def test_scaled_matmul_docstring_example():
    a = np.array([1, 2, 3]).reshape((1, 1, 3))
    b = np.array([4, 5, 6]).reshape((1, 1, 3))
    scale = np.array([0.5]).reshape((1, 1, 1))
    out = refjax.nn.scaled_matmul(a, b, scale, scale)
    assert repr(out) == "Array([[[8.]]], dtype=float32)"


@pytest.mark.parametrize("dtype", [np.float32, "bfloat16"])
def test_scaled_matmul_on_float8_operands(dtype):
    a = RNG.randn(2, 4, 64).astype(ml_dtypes.float8_e4m3fn)
    b = RNG.randn(2, 5, 64).astype(ml_dtypes.float8_e5m2)
    a_scales = (2.0 ** RNG.randint(-3, 3, (2, 4, 2))).astype(ml_dtypes.float8_e8m0fnu)
    b_scales = (2.0 ** RNG.randint(-3, 3, (2, 5, 2))).astype(ml_dtypes.float8_e8m0fnu)
    out = refjax.nn.scaled_matmul(a, b, a_scales, b_scales, preferred_element_type=dtype)
    want = jax.eval_shape(functools.partial(jax.nn.scaled_matmul, preferred_element_type=dtype),
                          a, b, a_scales, b_scales)
    assert out.shape == want.shape and out.dtype == want.dtype
    tol = 1e-5 if dtype is np.float32 else 1e-2
    np.testing.assert_allclose(np.asarray(out, np.float64),
                               numpy_scaled_matmul(a, b, a_scales, b_scales), rtol=tol, atol=tol)


def test_scaled_matmul_under_jit_and_vmap():
    a, b = RNG.randn(3, 2, 4, 32).astype(np.float32), RNG.randn(3, 2, 3, 32).astype(np.float32)
    sa, sb = RNG.rand(3, 2, 4, 4).astype(np.float32), RNG.rand(3, 2, 3, 4).astype(np.float32)
    out = refjax.jit(refjax.vmap(refjax.nn.scaled_matmul))(a, b, sa, sb)
    for i in range(3):
        np.testing.assert_allclose(out[i], numpy_scaled_matmul(a[i], b[i], sa[i], sb[i]),
                                   rtol=1e-5, atol=1e-6)


SCALED_MATMUL_ERRORS = {
    "rank": ((2, 4), (1, 3, 4), (1, 2, 1), (1, 3, 1)),
    "contract": ((1, 2, 4), (1, 3, 8), (1, 2, 1), (1, 3, 1)),
    "scales_contract": ((1, 2, 4), (1, 3, 4), (1, 2, 1), (1, 3, 2)),
    "scales_free": ((1, 2, 4), (1, 3, 4), (1, 3, 1), (1, 3, 1)),
}


@pytest.mark.parametrize("name", SCALED_MATMUL_ERRORS)
def test_scaled_matmul_errors_as_jax(name):
    args = [np.ones(s, np.float32) for s in SCALED_MATMUL_ERRORS[name]]
    messages = []
    for lib in (refjax, jax):
        with pytest.raises(ValueError) as info:
            lib.nn.scaled_matmul(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_configs_are_jaxs(mode):
    assert repr(refjax.nn.get_scaled_dot_general_config(mode)) == \
        repr(jax.nn.get_scaled_dot_general_config(mode))
    scale = np.array([0.5], np.float32)
    assert repr(refjax.nn.get_scaled_dot_general_config(mode, scale)) == \
        repr(jax.nn.get_scaled_dot_general_config(mode, scale))
    with pytest.raises(ValueError, match="Unsupported mode: fp8"):
        refjax.nn.get_scaled_dot_general_config("fp8")


def _jax_reference(lhs, rhs, mode, global_scale=None):
    """JAX's own quantization (which runs on CPU) of both operands, multiplied by the formula."""
    config = jax.nn.get_scaled_dot_general_config(mode, global_scale)
    # as JAX arrays: JAX's quantize divides a NumPy operand by the global scale in place
    # one compiled program rather than an eager dispatch per operation
    quantize = jax.jit(lambda x: jax_scaled.quantize(x, config))
    (lq, ls), (rq, rs) = (quantize(jax.numpy.asarray(x)) for x in (lhs, rhs))
    out = numpy_scaled_matmul(np.asarray(lq), np.asarray(rq), np.asarray(ls), np.asarray(rs))
    return out * (1 if global_scale is None else float(global_scale[0]) ** 2)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general_is_jaxs_quantized_product(mode):
    lhs, rhs = RNG.randn(2, 8, 64).astype(np.float32), RNG.randn(2, 4, 64).astype(np.float32)
    global_scale = np.array([0.5], np.float32) if mode == "nvfp4" else None
    cfg = [refjax.nn.get_scaled_dot_general_config(mode, global_scale)] * 3
    out = refjax.nn.scaled_dot_general(lhs, rhs, DN, configs=cfg)
    jcfg = [jax.nn.get_scaled_dot_general_config(mode, global_scale)] * 3
    want = jax.eval_shape(lambda a, b: jax.nn.scaled_dot_general(a, b, DN, configs=jcfg), lhs, rhs)
    assert out.shape == want.shape and out.dtype == want.dtype
    np.testing.assert_allclose(out, _jax_reference(lhs, rhs, mode, global_scale), rtol=1e-5,
                               atol=1e-5)
    exact = np.einsum("bmk,bnk->bmn", lhs, rhs)   # and close to the unquantized product
    assert np.abs(out - exact).max() < (0.1 if mode == "mxfp8" else 0.5) * np.abs(exact).max()


def test_numpy_quantizer_is_jaxs():
    x = (RNG.randn(2, 3, 64) * np.exp(RNG.randn(2, 3, 64) * 3)).astype(np.float32)
    values, scales = numpy_mxfp8(x)
    jv, js = jax_scaled.quantize(x, jax.nn.get_scaled_dot_general_config("mxfp8"))
    np.testing.assert_array_equal(values.astype(np.float32), np.asarray(jv).astype(np.float32))
    np.testing.assert_array_equal(scales.astype(np.float32), np.asarray(js).astype(np.float32))


def test_an_all_zero_block_quantizes_to_zeros():
    """JAX divides a zero block by its scale 2^-127, which XLA on CPU flushes to zero: 0/0,
    NaN values and a NaN product. refjax's zero block is zeros, and the product finite."""
    lhs, rhs = RNG.randn(1, 2, 64).astype(np.float32), RNG.randn(1, 3, 64).astype(np.float32)
    lhs[0, 0, :32] = 0
    out = refjax.nn.scaled_dot_general(lhs, rhs, DN, configs=configs(refjax, "mxfp8"))
    (lq, ls), (rq, rs) = numpy_mxfp8(lhs), numpy_mxfp8(rhs)
    np.testing.assert_allclose(out, numpy_scaled_matmul(lq, rq, ls, rs), rtol=1e-5, atol=1e-5)
    jax_values, _ = jax_scaled.quantize(jax.numpy.asarray(lhs), configs(jax, "mxfp8")[0])
    assert np.isnan(np.asarray(jax_values, np.float32)[0, 0, :32]).all()


def test_scaled_dot_general_without_batch_dimensions_and_its_gradients():
    """x [32, 64] @ y [64, 32]: the product of the quantized operands; the cotangents are the
    quantized products of the (quantized) output cotangent with the other operand, contracted
    over 32-blocks of its free dimension, as JAX's backward pass."""
    x, y = RNG.randn(32, 64).astype(np.float32), RNG.randn(64, 32).astype(np.float32)
    dims = (((1,), (0,)), ((), ()))
    f = lambda x, y: refjax.nn.scaled_dot_general(x, y, dims, configs=configs(refjax, "mxfp8"))
    out = f(x, y)
    xq, xs = numpy_mxfp8(x[None])
    yq, ys = numpy_mxfp8(y.T[None])
    np.testing.assert_allclose(out, numpy_scaled_matmul(xq, yq, xs, ys)[0], rtol=1e-5, atol=1e-5)
    want = jax.eval_shape(lambda x, y: jax.nn.scaled_dot_general(
        x, y, dims, configs=configs(jax, "mxfp8")), x, y)
    assert out.shape == want.shape and out.dtype == want.dtype
    g = np.ones((32, 32), np.float32)
    dx, dy = refjax.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1))(x, y)
    gq, gs = numpy_mxfp8(g[None])
    np.testing.assert_allclose(dx, numpy_scaled_matmul(gq, *numpy_mxfp8(y[None])[:1], gs,
                                                       numpy_mxfp8(y[None])[1])[0], rtol=1e-5)
    np.testing.assert_allclose(dy, numpy_scaled_matmul(
        gq, numpy_mxfp8(x.T[None])[0], gs, numpy_mxfp8(x.T[None])[1])[0].T, rtol=1e-5)
    np.testing.assert_allclose(dx, g @ y.T, rtol=0.1, atol=0.5)   # near the exact gradient


def test_nvfp4_gradients_are_full_precision():
    """JAX's nvfp4 backward pass multiplies in full precision (no clipping at global scale 1):
    the exact gradient of a sum."""
    lhs, rhs = RNG.randn(2, 16, 32).astype(np.float32), RNG.randn(2, 16, 32).astype(np.float32)
    loss = lambda a, b: refjax.nn.scaled_dot_general(a, b, DN, configs=configs(refjax, "nvfp4")).sum()
    dl, dr = refjax.grad(loss, argnums=(0, 1))(lhs, rhs)
    np.testing.assert_allclose(dl, np.broadcast_to(rhs.sum(1, keepdims=True), lhs.shape), rtol=1e-5)
    np.testing.assert_allclose(dr, np.broadcast_to(lhs.sum(1, keepdims=True), rhs.shape), rtol=1e-5)


def test_scaled_dot_general_without_configs_is_dot_general():
    lhs, rhs = RNG.randn(2, 3, 4).astype(np.float32), RNG.randn(2, 5, 4).astype(np.float32)
    out = refjax.nn.scaled_dot_general(lhs, rhs, DN)
    want = jax.nn.scaled_dot_general(lhs, rhs, DN)
    assert out.dtype == want.dtype
    np.testing.assert_allclose(out, want, rtol=1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        refjax.nn.scaled_dot_general(lhs, rhs, DN, implementation="cudnn")
    assert [w.category for w in caught] == [DeprecationWarning]


def test_scaled_dot_general_errors():
    """A preferred type other than f32/bf16/f16 is JAX's TypeError (whose message prints the
    braces of a missing f-string); a contracting size that is not a multiple of the block is a
    ValueError naming both (JAX: a bare AssertionError)."""
    lhs = np.ones((1, 2, 32), np.float32)
    with pytest.raises(TypeError, match=r"but got <class 'numpy.int32'>$"):
        refjax.nn.scaled_dot_general(lhs, lhs, DN, np.int32, configs=configs(refjax, "mxfp8"))
    with pytest.raises(TypeError):
        jax.nn.scaled_dot_general(lhs, lhs, DN, np.int32, configs=configs(jax, "mxfp8"))
    short = np.ones((1, 2, 16), np.float32)
    with pytest.raises(ValueError, match="contracting size 16 is not a multiple of the block "
                                         "size 32"):
        refjax.nn.scaled_dot_general(short, short, DN, configs=configs(refjax, "mxfp8"))
    with pytest.raises(AssertionError):
        jax.nn.scaled_dot_general(short, short, DN, configs=configs(jax, "mxfp8"))
