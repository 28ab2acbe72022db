"""conv_general_dilated: the input padded and lhs-dilated with zeros, one strided slice of it per
kernel tap contracted with that tap's (out, in) matrix by a grouped matmul, masked where the
tap meets padding or a dilation hole (which contribute nothing in XLA, even against an
infinite or NaN weight) and accumulated."""
import itertools

import numpy as np

from . import rules
from .indexing import _pad
from .windows import _out_size


def _canonical(b, lhs, rhs, dn, dtype):
    """Both operands as (N, C, spatial...) and (O, I, spatial...) in the result's dtype."""
    xp = b.xp
    return [xp.astype(xp.permute_dims(x, tuple(spec)), dtype)
            for x, spec in ((lhs, dn.lhs_spec), (rhs, dn.rhs_spec))]


def _tap_mask(out, n, tap, stride, lo, lhs_dil, rhs_dil):
    """Along one dimension, which outputs meet an element of the input at kernel tap `tap`."""
    u = np.arange(out) * stride + tap * rhs_dil - lo  # index into the lhs-dilated input
    dilated = (n - 1) * lhs_dil + 1 if n else 0
    return (u >= 0) & (u < dilated) & (u % lhs_dil == 0)


def _grouped(b, x, feature_groups, batch_groups):
    """x (N, C, *P) as (G, N', prod(P), C/G) for the grouped matmul."""
    xp, (n, c), spatial = b.xp, x.shape[:2], x.shape[2:]
    size = int(np.prod(spatial, dtype=np.int64))
    if batch_groups > 1:
        g = batch_groups
        x = xp.reshape(x, (g, n // g, c, size))
        return xp.permute_dims(x, (0, 1, 3, 2))
    g = feature_groups
    x = xp.reshape(x, (n, g, c // g, size))
    return xp.permute_dims(x, (1, 0, 3, 2))


def _contract(b, window, tap_w, groups, batch_groups):
    """window (N, C, *out) with tap_w (O, I) -> (N', O, *out)."""
    xp, g = b.xp, max(groups, batch_groups)
    xs = _grouped(b, window, groups, batch_groups)
    o, i = tap_w.shape
    w = xp.permute_dims(xp.reshape(tap_w, (g, o // g, i)), (0, 2, 1))
    out = rules._matmul(b, xs, w[:, None, ...])  # (G, N', P, O/G)
    out = xp.permute_dims(out, (1, 0, 3, 2))
    return xp.reshape(out, (out.shape[0], o) + window.shape[2:])


def conv_general_dilated(b, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count, batch_group_count,
                         preferred_element_type=None, **_):
    """XLA's convolution, computed in the result's dtype (as dot_general here)."""
    xp, dn = b.xp, dimension_numbers
    dtype = rules.product_dtype(b, lhs, rhs, preferred_element_type)
    x, w = _canonical(b, lhs, rhs, dn, dtype)
    spatial = list(zip(x.shape[2:], *zip(*padding), lhs_dilation, w.shape[2:], rhs_dilation,
                       window_strides))
    out_sp = tuple(_out_size(*a) for a in spatial)
    acc = xp.zeros((x.shape[0] // batch_group_count, w.shape[0]) + out_sp, dtype=dtype)
    if 0 in acc.shape:
        return xp.permute_dims(acc, tuple(np.argsort(dn.out_spec)))
    config = [(0, 0, 0)] * 2 + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)]
    padded = _pad(b, x, xp.zeros((), dtype=dtype), padding_config=config)
    for tap in itertools.product(*map(range, w.shape[2:])):
        acc = _sum(b, acc, _tap(b, padded, w, tap, out_sp, spatial, feature_group_count,
                         batch_group_count))
    return xp.permute_dims(acc, tuple(np.argsort(dn.out_spec)))


def _sum(b, x, y):
    return b.xp.logical_or(x, y) if x.dtype == b.xp.bool else x + y


def _tap(b, padded, w, tap, out_sp, spatial, groups, batch_groups):
    """One kernel tap's contribution: zero wherever it meets padding or a hole."""
    xp = b.xp
    window = padded[(slice(None), slice(None)) + tuple(
        slice(k * r, k * r + (m - 1) * s + 1, s)
        for k, m, (_, _, _, _, _, r, s) in zip(tap, out_sp, spatial))]
    part = _contract(b, window, w[(slice(None), slice(None)) + tap], groups, batch_groups)
    masks = [_tap_mask(m, n, k, s, lo, ld, r)
             for k, m, (n, lo, _, ld, _, r, s) in zip(tap, out_sp, spatial)]
    mask = np.ones(out_sp, bool)
    for d, m in enumerate(masks):
        mask = mask & m.reshape(tuple(-1 if e == d else 1 for e in range(len(masks))))
    if mask.all():
        return part
    return xp.where(xp.asarray(mask), part, xp.zeros_like(part))
