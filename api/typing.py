"""jax.typing: the annotations JAX programs import (ArrayLike, DTypeLike)."""
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from ..core.array import BaseArray as Array


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a `.dtype` (jnp.float32 and other scalar types, arrays)."""

    @property
    def dtype(self, /) -> np.dtype: ...


# What converts implicitly to a JAX array: arrays, NumPy arrays and scalars, Python scalars
# (not sequences, not strings: jnp functions refuse them).
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]

# What names a JAX dtype: 'float32', np.float32 or float, np.dtype('int8'), jnp.int8.
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
