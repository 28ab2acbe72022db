"""lax.DotAlgorithm and lax.DotAlgorithmPreset: dot_general's precision given as the types its
operands are rounded to and the type it accumulates in, and which of them a CPU runs."""
import enum
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from .. import dtypes


class DotAlgorithm(NamedTuple):
    """A dot product's algorithm: the types the operands are rounded to, the accumulation
    type, and how many components and operations emulate a wider type (as JAX's)."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """The named algorithms (`LHS_RHS_ACCUM`, `_X3`: three bfloat16 products emulating a
    float32 one); a preset's name is accepted wherever a precision is."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand types the algorithm reads (others are converted to the first)."""
        if self.name == "DEFAULT" or self.name.startswith("ANY_F8"):
            return None
        if self.name.startswith("F16_"):
            return (dtypes.float16,)
        if self.name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (dtypes.bfloat16, dtypes.float32)
        return (dtypes.float64,) if self.name == "F64_F64_F64" else (dtypes.float32,)

    @property
    def supported_rhs_types(self):
        """As supported_lhs_types."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        """The type products are summed in (None: chosen from the operand types)."""
        if self.name == "DEFAULT" or self.name.startswith("ANY_F8_ANY_F8_ANY"):
            return None
        return _ACCUMULATION.get(self.name, dtypes.float32)

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The types the algorithm may write its result in."""
        narrow = {"F16_F16_F32": dtypes.float16, "BF16_BF16_F32": dtypes.bfloat16}
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return _F8_OUTPUTS
        if self.name in narrow:
            both = np.promote_types(lhs_dtype, rhs_dtype) == narrow[self.name]
            return (dtypes.float32, narrow[self.name]) if both else (dtypes.float32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)


_ACCUMULATION = {"F16_F16_F16": dtypes.float16, "BF16_BF16_BF16": dtypes.bfloat16,
                 "F64_F64_F64": dtypes.float64}

_F8_OUTPUTS = tuple(np.dtype(t) for t in (
    np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e4m3b11fnuz))

# XLA's CPU backend ignores an algorithm, so JAX refuses the ones it would not honour.
_ON_CPU = {"DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32",
           "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"}


def is_algorithm(precision):
    """Whether a canonical precision is an algorithm (else None or a Precision pair)."""
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def check_on_cpu(precision):
    """JAX's ValueError for an algorithm a CPU does not run."""
    if not (isinstance(precision, DotAlgorithmPreset) and precision.name in _ON_CPU):
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on CPU")


def compute_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """(lhs, rhs, accumulation) types an algorithm computes in, for these operand types."""
    if isinstance(algorithm, DotAlgorithm):
        return tuple(np.dtype(t) for t in algorithm[:3])
    lhs = _supported(lhs_dtype, algorithm.supported_lhs_types)
    rhs = _supported(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, _supported(out_dtype, algorithm.supported_output_types(lhs, rhs))


def _supported(dtype, supported):
    if supported is None or np.dtype(dtype) in supported:
        return np.dtype(dtype)
    return np.dtype(supported[0])
