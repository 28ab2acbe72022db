"""NumPy rules of the bit-level primitives (exact: they work on the integers' bits)."""
import numpy as np

from ....core.primitives import bits
from ._common import rule


def _unsigned(x):
    """x's bits as the unsigned integer type of its width."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


@rule(bits.bitcast_convert_type_p)
def _bitcast(x, *, new_dtype):
    new = np.dtype(new_dtype)
    x = np.array(x, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    if new.itemsize > x.dtype.itemsize:  # the trailing dimension is consumed
        return x.view(new).reshape(x.shape[:-1])
    out = x.reshape(x.shape + (1,)).view(new) if new.itemsize < x.dtype.itemsize else x.view(new)
    return out


@rule(bits.population_count_p)
def _population_count(x):
    return np.bitwise_count(_unsigned(x)).astype(x.dtype)


@rule(bits.clz_p)
def _clz(x):
    u = _unsigned(x)
    width = 8 * x.dtype.itemsize
    length = sum((u >> np.array(k, u.dtype)) != 0 for k in range(width))
    return (width - np.asarray(length, np.int64)).astype(x.dtype)


@rule(bits.mulhi_p)
def _mulhi(x, y):
    """The high half of the double-width product, computed exactly with Python integers."""
    x, y = np.broadcast_arrays(x, y)
    width = 8 * x.dtype.itemsize
    products = [int(a) * int(b) >> width for a, b in zip(x.ravel().tolist(), y.ravel().tolist())]
    mask = (1 << width) - 1
    return np.array([p & mask for p in products], _unsigned(x).dtype).reshape(x.shape) \
        .view(x.dtype)


@rule(bits.complex_p)
def _complex(x, y):
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.result_type(x.dtype, np.complex64))
    out.real, out.imag = x, y
    return out
