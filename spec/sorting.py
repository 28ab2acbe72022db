"""Spec entry of sort (lexicographic over num_keys operands, NaNs last, -0.0 == 0.0)."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, Invalid, PrimitiveSpec, Signature, all_args, args_from,
                   described, floats, kind, shapes, weak_flag)

_GRID = st.integers(-300, 300).map(lambda k: k / 100)


def _sort_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes(min_rank=1))
        n = draw(st.integers(1, 3))
        num_keys = draw(st.integers(1, n))
        others = [dtype if diff else draw(st.sampled_from(ALL + COMPLEX)) for _ in range(n - 1)]
        args = [Arg(shape, dtype, draw(weak_flag(dtype)), _GRID if diff else None, diff)]
        for other in others:
            args.append(Arg(shape, other, draw(weak_flag(other)),
                            floats(-3.0, 3.0, other) if diff and kind(other) == "f" else None))
        # Unstable sorts may order equal keys either way; keep the output unique by sorting
        # unstably only when every operand is a key.
        stable = draw(st.booleans()) if num_keys == n else True
        return Signature(tuple(args), {"dimension": draw(st.integers(0, len(shape) - 1)),
                                       "is_stable": stable, "num_keys": num_keys})
    return sig()


def _reference(jax, *operands, dimension, is_stable, num_keys):
    return jax.lax.sort(operands, dimension=dimension, is_stable=is_stable, num_keys=num_keys)


@described("non-key operands")
def _non_keys(sig):
    return args_from(sig.params["num_keys"])(sig)


def _params(**changes):
    return {"dimension": 0, "is_stable": True, "num_keys": 1, **changes}


SPECS = [PrimitiveSpec(
    name="sort", dtypes=ALL + COMPLEX, family="sorting", signature=_sort_signature,
    reference=_reference,
    exact=True, signed_zeros=False, diff_args=all_args, linear_args=_non_keys,
    invalid=(Invalid("operands of different shapes",
                     (np.ones(2, np.float32), np.ones(3, np.float32)), _params(), TypeError),
             Invalid("num_keys larger than the operands", (np.ones(2, np.float32),),
                     _params(num_keys=2), ValueError),
             Invalid("a dimension out of range", (np.ones(2, np.float32),),
                     _params(dimension=1), ValueError)),
    notes="multiple results; linear (transposable) in the non-key operands only; -0.0 and 0.0 "
          "compare equal, so their order follows stability, not the sign")]
