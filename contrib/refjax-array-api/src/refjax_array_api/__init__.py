"""refjax_array_api: a refjax backend on the Python Array API standard (array-api-compat)."""
from .backend import ArrayApiBackend, ArrayApiNumpyBackend, ArrayApiStrictBackend

__all__ = ["ArrayApiBackend", "ArrayApiNumpyBackend", "ArrayApiStrictBackend"]
