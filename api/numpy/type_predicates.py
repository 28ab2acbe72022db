"""jnp's dtype and type predicates: iscomplexobj, isrealobj, isscalar, can_cast, isdtype."""
import builtins

import numpy as np

from ...core import dtypes as _dt
from .promotion import _is_array, asarray

def iscomplexobj(x):
    """Whether x has a complex dtype."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dt = getattr(x, "dtype", None)
    return _dt.kind(dt if dt is not None else asarray(x).dtype) == "c"


def isrealobj(x):
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


def isscalar(element):
    """Whether element is a scalar: a Python or NumPy scalar, or a 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, np.ndarray) or _is_array(element):
        return element.ndim == 0
    return False


def can_cast(from_, to, casting="safe"):
    """NumPy's can_cast on dtypes (of arrays, too)."""
    source = from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, type) else from_
    return bool(np.can_cast(np.dtype(source), np.dtype(to), casting))


def isdtype(dtype, kind):
    """Array-API dtype kind test ('bool', 'signed integer', 'integral', 'real floating',
    'complex floating', 'numeric', or dtypes)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    d = np.dtype(dtype)
    table = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
             "real floating": "f", "complex floating": "c", "numeric": "iufc"}
    return builtins.any(_dt.kind(d) in table[k] if isinstance(k, str) else d == np.dtype(k)
                        for k in kinds)
