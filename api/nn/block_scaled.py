"""jax.nn's block-scaled (MX/FP8, NVFP4) matrix products: scaled_matmul on quantized operands
and their scales, and scaled_dot_general, which quantizes dot_general's operands itself."""
import dataclasses
import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from ...core import dtypes as _dt
from ...core.transforms.custom_vjp import custom_vjp
from .. import lax
from .. import numpy as jnp

_PREFERRED = (np.dtype("float32"), np.dtype("bfloat16"), np.dtype("float16"))


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How scaled_dot_general quantizes an operand: blocks of block_size elements along the
    contracting dimension share one scale of scale_type; the values become data_type."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
    """The BlockScaleConfig of mode 'mxfp8' (float8_e4m3fn values, float8_e8m0fnu scales per
    32) or 'nvfp4' (float4_e2m1fn values, float8_e4m3fn scales per 16, and a float32
    global scale, default 1)."""
    if mode == "nvfp4":
        return BlockScaleConfig("nvfp4", 16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn,
                                jnp.ones((1,), np.float32) if global_scale is None
                                else global_scale, False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu,
                                None, False)
    raise ValueError(f"Unsupported mode: {mode}")


def _check_scaled_matmul_shapes(a, b, a_scales, b_scales):
    if not all(np.ndim(x) == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a.shape} and {b.shape}")
    if a_scales.shape[2] != b_scales.shape[2] or a_scales.shape[0] != b_scales.shape[0]:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and contract "
                         f"(K) dimensions, but got shapes {a_scales.shape} and {b_scales.shape}")
    if a_scales.shape[1] != a.shape[1] or b_scales.shape[1] != b.shape[1]:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")


def _scale_blocks(x, scales, dtype):
    """x [B, M, K] times its scales [B, M, K // block], each scale repeated over its block."""
    B, M, K = x.shape
    blocks = scales.shape[-1]
    x = x.astype(dtype).reshape(B, M, blocks, K // blocks)
    return (x * scales.astype(dtype)[..., None]).reshape(B, M, K)


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """The block-scaled product einsum('BMK,BNK->BMN', lhs * scales, rhs * scales), each scale
    repeated over its block of K // K_scales elements, computed in preferred_element_type (as
    JAX's CPU lowering: the operands cast first, since float8 arithmetic is not native)."""
    _check_scaled_matmul_shapes(lhs, rhs, lhs_scales, rhs_scales)
    dtype = _dt.canonicalize_dtype(np.dtype(preferred_element_type))
    a, b = _scale_blocks(lhs, lhs_scales, dtype), _scale_blocks(rhs, rhs_scales, dtype)
    return lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))), preferred_element_type=dtype)


def _e8m0_round_up(x):
    """The exponent byte of the power of two at or above float32 x (the float8_e8m0fnu scale
    that cannot overflow the block); a subnormal up to half of 2^-126 keeps exponent 0."""
    bits = lax.bitcast_convert_type(x.astype(np.float32), np.uint32)
    exponent, mantissa = bits >> 23, bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    return jnp.where(up, exponent + 1, exponent).astype(np.uint8)


def _e8m0_value(exponent, dtype):
    """The power of two with that exponent byte, in dtype (0 read as the dtype's tiniest
    scale, so that dividing by it stays finite)."""
    value = lax.bitcast_convert_type(exponent.astype(np.uint32) << 23, np.float32)
    tiny = 2.0 ** -15 if np.dtype(dtype) == np.float16 else 2.0 ** -127
    return jnp.where(value == 0, np.float32(tiny), value).astype(dtype)


def _quantize(x, config):
    """(values of config.data_type, scales of config.scale_type [B, M, K // block]) of x
    [B, M, K]: each block divided by its scale (its largest magnitude over the data type's
    largest value) and clipped to the data type's range."""
    B, M, K = x.shape
    if K < config.block_size or K % config.block_size:
        raise ValueError(f"scaled_dot_general: the contracting size {K} is not a multiple of "
                         f"the block size {config.block_size}")
    blocks = x.reshape(B, M, K // config.block_size, config.block_size)
    top = np.asarray(ml_dtypes.finfo(config.data_type).max, x.dtype)
    amax = jnp.max(jnp.abs(blocks), axis=-1, keepdims=True)
    if config.mode == "mxfp8":
        exponent = _e8m0_round_up(amax / top)
        # a zero block stays zeros (its scale 2^-127 is subnormal: XLA on CPU flushes it to
        # zero, and JAX's 0 / 0 gives NaNs)
        scaled = jnp.where(amax == 0, 0, blocks / _e8m0_value(exponent, x.dtype))
        scales = lax.bitcast_convert_type(exponent, config.scale_type)
    elif config.mode == "nvfp4":
        blocks = blocks / config.global_scale
        scale_max = np.asarray(ml_dtypes.finfo(config.scale_type).max, x.dtype)
        scales = jnp.clip(jnp.max(jnp.abs(blocks), axis=-1, keepdims=True) / top, 0, scale_max)
        scales = scales.astype(config.scale_type)
        scaled = blocks / scales.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    values = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(B, M, K)
    return values, scales.reshape(B, M, K // config.block_size)


def _as_bmk(x, contracting, batch):
    """x transposed to (batch, free, contracting) axes and reshaped to [B, M, K]."""
    free = [d for d in range(x.ndim) if d not in contracting and d not in batch]
    order = sorted(batch) + free + sorted(contracting)
    size = lambda dims: int(np.prod([x.shape[d] for d in dims], dtype=int))
    return jnp.transpose(x, order).reshape(size(batch), size(free), size(contracting))


def _dot_shape(lhs_shape, rhs_shape, lhs_dims, rhs_dims):
    """dot_general's output shape: batch, lhs's free, rhs's free dimensions."""
    free = lambda shape, dims: [n for d, n in enumerate(shape) if d not in dims[0] + dims[1]]
    return tuple([n for d, n in enumerate(lhs_shape) if d in lhs_dims[1]]
                 + free(lhs_shape, lhs_dims) + free(rhs_shape, rhs_dims))


def _quantized_dot(x, y, x_dims, y_dims, dtype, x_config, y_config, quantize=True):
    """x and y contracted as dot_general with x_dims = (contracting, batch) of x (y_dims of
    y), through their quantizations and scaled_matmul (in float32 then scaled by the global
    scales for nvfp4), or in full precision when not quantize."""
    x3, y3 = _as_bmk(x, *x_dims), _as_bmk(y, *y_dims)
    if not quantize:
        out = jnp.matmul(x3, jnp.swapaxes(y3, 1, 2), preferred_element_type=dtype)
    else:
        (xq, xs), (yq, ys) = _quantize(x3, x_config), _quantize(y3, y_config)
        nvfp4 = x_config.mode == "nvfp4"
        out = scaled_matmul(xq, yq, xs, ys, preferred_element_type=np.float32 if nvfp4 else dtype)
        if nvfp4:
            out = (out * (x_config.global_scale * y_config.global_scale)).astype(dtype)
    return out.reshape(_dot_shape(x.shape, y.shape, x_dims, y_dims))


def _cotangent(g, x, y, dims, dtype, configs, swap=False):
    """The cotangent of operand x of the product (dims its dot_general dimension numbers
    with x first; swap when x is the right operand): g contracted with y over y's free
    dimensions, quantized by configs (in full precision for nvfp4, as JAX), transposed to
    x's layout."""
    (x_contract, y_contract), (x_batch, y_batch) = dims
    kept = lambda n, contract, batch: [d for d in range(n) if d not in contract + batch]
    x_kept, y_kept = kept(x.ndim, x_contract, x_batch), kept(y.ndim, y_contract, y_batch)
    nb = len(x_batch)
    start = nb if swap else nb + len(x_kept)   # where y's free dimensions sit in g
    g_dims = (list(range(start, start + len(y_kept))), list(range(nb)))
    product = _quantized_dot(g, y, g_dims, (y_kept, list(y_batch)), dtype, *configs,
                             quantize=configs[0].mode != "nvfp4")
    x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    return lax.transpose(product, tuple(np.argsort(list(x_batch) + x_kept + x_contract_by_y)))


def _forward_dtype(lhs, rhs, preferred_element_type):
    if preferred_element_type is None:
        return jnp.result_type(lhs, rhs)
    return _dt.canonicalize_dtype(np.dtype(preferred_element_type))


@functools.partial(custom_vjp, nondiff_argnums=(2, 3, 4))
def _scaled_dot(lhs, rhs, dims, preferred_element_type, configs):
    (lc, rc), (lb, rb) = dims
    return _quantized_dot(lhs, rhs, (lc, lb), (rc, rb),
                          _forward_dtype(lhs, rhs, preferred_element_type), configs[0], configs[1])


def _scaled_dot_fwd(lhs, rhs, dims, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dims, preferred_element_type, configs), (lhs, rhs)


def _scaled_dot_bwd(dims, preferred_element_type, configs, residuals, g):
    """Both cotangents through quantized products (configs[2] quantizes g); for nvfp4, a
    straight-through estimator zeroing the cotangent of what the forward pass clipped."""
    lhs, rhs = residuals
    (lc, rc), (lb, rb) = dims
    d_lhs = _cotangent(g, lhs, rhs, dims, preferred_element_type, [configs[2], configs[1]])
    d_rhs = _cotangent(g, rhs, lhs, ((rc, lc), (rb, lb)), preferred_element_type,
                       [configs[2], configs[0]], swap=True)
    if configs[2].mode == "nvfp4":
        limit = float(ml_dtypes.finfo(configs[0].data_type).max) * \
            float(ml_dtypes.finfo(configs[0].scale_type).max)
        d_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * limit, d_lhs, 0)
        d_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * limit, d_rhs, 0)
    return d_lhs, d_rhs


_scaled_dot.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def _with_batch_dimension(lhs, rhs, dims):
    """lhs and rhs with a trailing unit batch dimension when the product has none (the
    quantized product is batched)."""
    contracting, (lb, rb) = dims
    if lb == ():
        lhs, lb = jnp.expand_dims(lhs, lhs.ndim), (lhs.ndim,)
    if rb == ():
        rhs, rb = jnp.expand_dims(rhs, rhs.ndim), (rhs.ndim,)
    return lhs, rhs, (contracting, (lb, rb))


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """lax.dot_general of lhs and rhs through block-scaled quantization: each operand is
    quantized along its contracting dimensions by configs[0] and configs[1] (from
    get_scaled_dot_general_config), multiplied by scaled_matmul, and differentiated through
    quantized products (configs[2] quantizes the output cotangent). Without configs, plain
    dot_general. preferred_element_type is float32, bfloat16 or float16."""
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    if np.dtype(preferred_element_type) not in _PREFERRED:
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{preferred_element_type}")
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    lhs_b, rhs_b, batched = _with_batch_dimension(lhs, rhs, dims)
    out = _scaled_dot(lhs_b, rhs_b, batched, np.dtype(preferred_element_type), configs)
    return jnp.squeeze(out, axis=0) if batched != dims else out
