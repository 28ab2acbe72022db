"""The pad primitive (lo/hi, possibly negative, and interior padding) with all its rules."""
import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero, deflinear
from ..transforms.batching import bdim_at_front, moveaxis, not_mapped
from .elementwise import full_like, select_n, sub, weak_scalar
from .structural import _weak_zero, _zero_scalar, broadcast_in_dim, slice, static_ints

pad_p = make_primitive("pad")


@pad_p.def_abstract_eval
def _pad_abstract_eval(x, padding_value, *, padding_config):
    if padding_value.shape != ():
        raise ValueError(f"pad: padding_value must be a scalar; got "
                         f"np.shape(padding_value)={padding_value.shape}")
    if padding_value.dtype != x.dtype:
        raise TypeError(f"pad operand and padding_value must be same dtype (and padding_value "
                        f"a scalar): got {x.dtype.name} and {padding_value.str_short()}.")
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad: padding_config must have one (lo, hi, interior) per dimension "
                         f"of the operand of shape {x.shape}; got {padding_config}")
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"pad: interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(int(lo + hi + d + max(d - 1, 0) * interior)
                  for d, (lo, hi, interior) in zip(x.shape, padding_config))
    if any(size < 0 for size in shape):
        raise ValueError(f"pad: Dimension size after padding is not at least 0, got result "
                         f"shape {shape}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}")
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and padding_value.weak_type)


def pad(x, padding_value, padding_config):
    """x padded with lo/hi (may be negative) and interior padding per dimension."""
    # as in JAX, a Python scalar padding value keeps its own dtype (no lifting to x's)
    if dtypes.is_python_scalar(padding_value):
        padding_value = weak_scalar(padding_value, dtypes.python_scalar_dtype(padding_value))
    # NumPy integers kept as given: JAX prints them so (np.int64(1))
    config = tuple(tuple(v if isinstance(v, np.integer) else i for v, i in zip(
        c, static_ints("pad", c, "padding_config entries"))) for c in padding_config)
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    from .reductions import reduce_sum
    if type(ct) is Zero:
        return [Zero(a.aval) if ad.is_undefined_primal(a) else None for a in (x, padding_value)]
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    ndim = len(get_aval(ct).shape)
    unpadded = pad(ct, _zero_scalar(ct), [(-a, -b, 0) for a, b in zip(lo, hi)])
    t_x = slice(unpadded, (0,) * ndim, get_aval(unpadded).shape, [i + 1 for i in interior])
    t_pv = None
    if ad.is_undefined_primal(padding_value):
        axes = tuple(range(ndim))
        t_pv = sub(reduce_sum(ct, axes), reduce_sum(t_x, axes))
    return [t_x if ad.is_undefined_primal(x) else None, t_pv]


def _pad_batch(axis_data, vals, dims, *, padding_config):
    (x, pv), (dx, dpv) = vals, dims
    x = bdim_at_front(x, dx, axis_data.size)
    config = ((0, 0, 0),) + padding_config
    if dpv is not_mapped:
        return pad_p.bind(x, pv, padding_config=config), 0
    zero = _weak_zero(get_aval(x).dtype)
    padded = pad_p.bind(x, zero, padding_config=config)
    mask = pad(full_like(x, True, dtypes.bool_), False, config)
    pv_full = broadcast_in_dim(moveaxis(pv, dpv, 0), get_aval(padded).shape, (0,))
    return select_n(mask, pv_full, padded), 0


deflinear(pad_p, _pad_transpose)
pad_p.def_batch(_pad_batch)
pad_p.def_sharding(sp.varying_shape("padding"))
