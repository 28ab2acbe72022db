"""NumPy rule of conv_general_dilated: for each kernel tap, the input elements it meets (index
arithmetic per spatial dimension, so padding and dilation holes contribute nothing, as in XLA)
contracted over the features of each group and accumulated."""
import numpy as np

from ....core.primitives import convolution as cv
from ....core.primitives import linalg
from ....core.primitives import window_shapes as ws
from ._common import BLAS_TYPES, convert, rule, wide_dtype


def _tap_indices(out_size, in_size, tap, stride, pad_lo, lhs_dilation, rhs_dilation):
    """(output positions, input indices) that kernel tap `tap` pairs along one dimension:
    output p reads position p*stride + tap*rhs_dilation of the padded, dilated input."""
    out = np.arange(out_size)
    u = out * stride + tap * rhs_dilation - pad_lo
    valid = (u >= 0) & (u < ws.dilate_dim(in_size, lhs_dilation)) & (u % lhs_dilation == 0)
    return out[valid], u[valid] // lhs_dilation


def _contract(x, w, feature_groups, batch_groups):
    """x (N, C, *P) with the kernel tap w (O, I) -> (N / batch_groups, O, *P)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    if batch_groups > 1:
        g = batch_groups
        xs, spec = x.reshape((g, n // g, c) + x.shape[2:]), "gnc...,goc->ngo..."
    else:
        g = feature_groups
        xs, spec = x.reshape((n, g, c // g) + x.shape[2:]), "ngc...,goc->ngo..."
    out = np.einsum(spec, xs, w.reshape(g, o // g, w.shape[1]), optimize=x.dtype in BLAS_TYPES)
    return out.reshape((out.shape[0], o) + out.shape[3:])


def _operands(lhs, rhs, dn, compute):
    """Both operands in canonical order (N, C, spatial...) and (O, I, spatial...), in the
    dtype the sums accumulate in (float32/64 and complex in their own, others widened)."""
    wide = compute if np.dtype(compute) in BLAS_TYPES else wide_dtype(compute)
    return [convert(np.transpose(x, spec), compute).astype(wide)
            for x, spec in ((lhs, dn.lhs_spec), (rhs, dn.rhs_spec))]


@rule(cv.conv_general_dilated_p)
def _conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                          dimension_numbers, feature_group_count, batch_group_count, precision,
                          preferred_element_type, out_sharding=None):
    dn = dimension_numbers
    out_dtype = cv.conv_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    x, w = _operands(lhs, rhs, dn, compute)
    out_shape = cv.conv_shape_tuple(ws.dilate_shape("conv", x.shape, lhs_dilation),
                                    ws.dilate_shape("conv", w.shape, rhs_dilation),
                                    window_strides, padding, batch_group_count)
    out = np.zeros(out_shape, x.dtype)
    for tap in np.ndindex(*w.shape[2:]):
        pairs = [_tap_indices(*args) for args in zip(out_shape[2:], x.shape[2:], tap,
                                                     window_strides, (lo for lo, _ in padding),
                                                     lhs_dilation, rhs_dilation)]
        if any(len(dst) == 0 for dst, _ in pairs):
            continue
        window = x[(slice(None), slice(None)) + np.ix_(*[src for _, src in pairs])]
        with np.errstate(all="ignore"):
            out[(slice(None), slice(None)) + np.ix_(*[dst for dst, _ in pairs])] += _contract(
                window, w[(slice(None), slice(None)) + tap], feature_group_count,
                batch_group_count)
    out = convert(out.astype(compute, copy=False), out_dtype)
    return np.transpose(out, np.argsort(dn.out_spec))
