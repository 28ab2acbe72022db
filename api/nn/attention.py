"""jax.nn.dot_product_attention: scaled dot-product attention with grouped heads and masks."""
import numpy as np

from ...core import dtypes as _dt
from .. import numpy as jnp
from .functions import logsumexp, softmax


def _ensure_4d(t):
    """t as an array with leading unit dimensions up to rank 4 (JAX accepts 3-d inputs)."""
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    """ValueError, as JAX's, when t's rank, dtype or (non -1) dimensions differ."""
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(s != -1 and d != s for d, s in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _large_negative(dtype):
    """The logit masked positions get: -0.7 of the dtype's (at most float32's) largest value."""
    big = min(float(_dt.finfo(dtype).max), float(_dt.finfo(np.float32).max))
    return jnp.asarray(-0.7 * big, dtype=dtype)


def _grouped(t, k, g):
    """A [B, N|1, T, S] bias or mask as [B, K, G|1, T, S], matching the grouped query heads."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    return t[:, :, None] if n == 1 else jnp.reshape(t, (b, k, g, tt, s))


def _combined_mask(t, s, mask, is_causal, q_len, kv_len, window):
    """Every mask that applies, as one boolean array broadcasting against [B, K, G, T, S]."""
    masks = [] if mask is None else [mask]
    q_pos = jnp.arange(t)[:, None]
    k_pos = jnp.arange(s)[None, :]
    if is_causal:
        masks.append(q_pos >= k_pos)
    if window is not None:
        left, right = window
        masks.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_len is not None:
        masks.append((jnp.arange(t) < q_len[:, None])[:, None, None, :, None])
    if kv_len is not None:
        masks.append((jnp.arange(s) < kv_len[:, None])[:, None, None, None, :])
    out = None
    for m in masks:
        out = m if out is None else jnp.logical_and(out, m)
    return out


def _attention(q, k, v, bias, mask, is_causal, scale, q_len, kv_len, window):
    """The XLA implementation on 4-d inputs: returns ([B, T, N, H] encoded, [B, T, N] lse)."""
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    g = n // kh
    logits_dtype = jnp.promote_types(q.dtype, np.float32)
    q = jnp.reshape(q, (b, t, kh, g, h))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", q, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, kh, g)).astype(logits.dtype)
    combined = _combined_mask(t, s, _grouped(mask, kh, g), is_causal, q_len, kv_len, window)
    if combined is not None:
        logits = jnp.where(combined, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_len is not None:
        encoded = encoded * (jnp.arange(t) < q_len[:, None])[:, :, None, None, None].astype(encoded.dtype)
    lse = jnp.transpose(logsumexp(logits, axis=-1).astype(k.dtype), (0, 3, 1, 2))
    return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(lse, (b, t, n))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """softmax(scale * query @ key^T + bias, masked) @ value over [B, T, N, H] inputs.

    Key/value heads K may divide the query heads N (grouped-query attention); `mask` is
    boolean, True where attention is allowed; `local_window_size` is (left, right) or an int
    for both. Only the "xla" implementation exists here (cuDNN needs a GPU); with
    return_residual also returns the logsumexp of the logits, [B, T, N]."""
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = jnp.asarray(query).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_len = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, kh, h = k.shape
    _check(v, [b, s, kh, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [b], np.dtype("int32"), "key_value_seq_lengths")
    if q.shape[-2] % kh:
        raise ValueError("The number of query heads must be a multiple of key/value heads, but "
                         f"got {q.shape[-2]} vs {kh}")
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    out, lse = _attention(q, k, v, bias, mask, is_causal, scale, q_len, kv_len, local_window_size)
    out = jnp.reshape(out, output_shape)
    return (out, jnp.reshape(lse, output_shape[:-1])) if return_residual else out
