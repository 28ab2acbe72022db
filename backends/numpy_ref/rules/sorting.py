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
