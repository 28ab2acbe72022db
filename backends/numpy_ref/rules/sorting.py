"""NumPy rule of sort: a stable lexsort on keys ordered as XLA orders them."""
import numpy as np

from ....core import dtypes
from ....core.primitives import sorting
from ._common import rule


def _sort_keys(x):
    """Keys whose lexicographic order is XLA's: NaNs last (all NaNs tie), -0.0 == 0.0,
    complex numbers by real part, then imaginary part."""
    if dtypes.kind(x.dtype) == "c":
        return _sort_keys(np.real(x)) + _sort_keys(np.imag(x))
    if dtypes.kind(x.dtype) == "f":
        x = x.astype(np.float64)
        nan = np.isnan(x)
        return [nan, np.where(nan, 0.0, x)]
    return [x]


@rule(sorting.sort_p)
def _sort(*operands, dimension, is_stable, num_keys):
    last = [np.moveaxis(x, dimension, -1) for x in operands]
    keys = [k for x in last[:num_keys] for k in _sort_keys(x)]
    order = np.lexsort(keys[::-1], axis=-1)  # lexsort is stable; its last key is primary
    return [np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in last]


def _total_order_key(x):
    """Integers ordering like x, with floats in IEEE total order (-NaN < -inf < ... < -0.0 <
    +0.0 < ... < +inf < NaN), as XLA's TopK compares them."""
    if x.dtype == np.bool_:
        return x.astype(np.int64)
    if x.dtype.kind in "iu":
        return x
    bits = x.view(np.dtype(f"i{x.dtype.itemsize}")).astype(np.int64)
    magnitude = (1 << (8 * x.dtype.itemsize - 1)) - 1
    return np.where(bits < 0, bits ^ np.int64(magnitude), bits)


def _select(x, order, k, axis):
    idx = np.take(order, np.arange(k), axis=axis).astype(np.int32)
    return [np.take_along_axis(x, idx, axis=axis), idx]


@rule(sorting.top_k_p)
def _top_k(x, *, k, axis):
    key = _total_order_key(x)
    order = np.argsort(~key, axis=axis, kind="stable")  # ~key: descending, no overflow
    return _select(x, order, k, axis)


@rule(sorting.approx_top_k_p)
def _approx_top_k(x, *, k, reduction_dimension, is_max_k, aggregate_to_topk, **params):
    """Exact: -0.0 == +0.0 and ties in index order (one of the orders JAX allows: it leaves
    tied indices implementation-defined); NaNs last (XLA's order with NaNs is unspecified:
    its comparator is not a total order there)."""
    axis = reduction_dimension % x.ndim
    key = np.where(np.isnan(x), 0, -x if is_max_k else x).astype(np.float64)
    order = np.argsort(key, axis=axis, kind="stable")
    nans = np.take_along_axis(np.isnan(x), order, axis=axis)
    order = np.take_along_axis(order, np.argsort(nans, axis=axis, kind="stable"), axis=axis)
    return _select(x, order, k if aggregate_to_topk else x.shape[axis], axis)
