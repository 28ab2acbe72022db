"""Window arithmetic shared by convolutions and windowed reductions: padding strings, dilated
and strided sizes, the paddings of transposed windows, and checks of window parameters."""
import enum

import numpy as np


class PaddingType(enum.Enum):
    """lax.PaddingType: the padding strings of convolutions and windowed reductions."""
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) padding per dimension for 'VALID' (none), 'SAME' (outputs of size
    ceil(in / stride), an odd total padded more at the end) or 'SAME_LOWER' (at the start)."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from None
    if not isinstance(padding, PaddingType):
        raise TypeError(f"Unknown padding type: {padding}.")
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    if any(s < 1 for s in window_strides):
        raise ValueError(f"padtype_to_pads: window_strides must be positive, got "
                         f"{tuple(window_strides)}")
    totals = [max((-(-d // s) - 1) * s + k - d, 0)
              for d, k, s in zip(in_shape, window_shape, window_strides)]
    if padding is PaddingType.SAME:
        return [(t // 2, t - t // 2) for t in totals]
    return [(t - t // 2, t // 2) for t in totals]


def dilate_dim(d, dilation):
    """The size of d elements with dilation - 1 holes between neighbours."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def stride_dim(d, window, stride):
    """How many windows of size `window` fit in d at `stride` apart."""
    return max((d - window) // stride + 1, 0)


def dilate_shape(name, shape, dilation):
    """shape with each dimension dilated (dilation is aligned with the trailing dims)."""
    if not all(r > 0 for r in dilation):
        raise TypeError(f"{name}: All dilations must be positive, got {tuple(dilation)}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(map(dilate_dim, shape, dilation))


def padded_sizes(name, shape, padding):
    """Each dimension of `shape` with its (low, high) padding added; negative padding may crop
    a dimension, not more."""
    sizes = [d + lo + hi for d, (lo, hi) in zip(shape, padding)]
    if any(s < 0 for s in sizes):
        raise ValueError(f"{name}: Negative padding is larger than the size of the "
                         f"corresponding dimension: got padding={tuple(padding)} for "
                         f"shape={tuple(shape)}")
    return sizes


def vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                    rhs_dilation):
    """Padding of the convolution (of the output cotangent with the flipped window, at unit
    stride over the stride-dilated cotangent) that transposes a convolution in its input."""
    lhs_d = dilate_shape("conv transpose", in_shape, lhs_dilation)
    rhs_d = dilate_shape("conv transpose", window, rhs_dilation)
    out_d = dilate_shape("conv transpose", out_shape, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    after = [x + k - 1 - o - b for x, k, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    """Padding of the convolution (of the input with the output cotangent as its window) that
    transposes a convolution in its kernel."""
    lhs_d = dilate_shape("conv transpose", in_shape, lhs_dilation)
    rhs_d = dilate_shape("conv transpose", window, rhs_dilation)
    out_d = dilate_shape("conv transpose", out_shape, strides)
    return tuple((lo, o - x + k - lo - 1) for x, k, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding))


def check_shapelike(name, what, values, positive=True):
    """Window parameters are sequences of ints, positive (or non-negative) ones."""
    bad = [v for v in values if not isinstance(v, (int, np.integer)) or v < int(positive)]
    if bad:
        need = "strictly positive" if positive else "non-negative"
        raise TypeError(f"{name} {what} must have every element be {need}, got "
                        f"{tuple(values)}.")
