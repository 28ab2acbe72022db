"""The array API standard's namespace metadata: __array_api_version__ and
__array_namespace_info__ (devices, capabilities, default and supported dtypes)."""
import numpy as np

from ...core import dtypes as _dt
from ...core.config import config
from ..devices import devices as _devices
from .type_predicates import isdtype

__array_api_version__ = "2024.12"

_API_TYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
              "complex64")
_X64_TYPES = ("int64", "uint64", "float64", "complex128")


class ArrayNamespaceInfo:
    """What `xp.__array_namespace_info__()` reports, as JAX's."""

    _capabilities = {"boolean indexing": False, "data-dependent shapes": False,
                     "max dimensions": 64}

    def default_device(self):
        """None: arrays are uncommitted by default."""
        return None

    def devices(self):
        """None (uncommitted) and the current backend's devices."""
        return [None, *_devices()]

    def capabilities(self):
        """The optional features supported (within transformations)."""
        return self._capabilities

    def default_dtypes(self, *, device=None):
        """The default real, complex, integral and indexing dtypes."""
        return {"real floating": _dt.default_float(), "complex floating": _dt.default_complex(),
                "integral": _dt.default_int(), "indexing": _dt.default_int()}

    def dtypes(self, *, device=None, kind=None):
        """The array API dtypes of `kind` (a kind name or a tuple of them; all when None)."""
        names = _API_TYPES + (_X64_TYPES if config.read("jax_enable_x64") else ())
        types = [np.dtype(n) for n in names]
        if kind is None:
            kind = ("numeric", "bool")
        return {t.name: t for t in types if isdtype(t, kind)}


def __array_namespace_info__():
    """The namespace's ArrayNamespaceInfo."""
    return ArrayNamespaceInfo()
