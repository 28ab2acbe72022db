"""Spec entry of ragged_dot_general (the ragged_dot layout): lhs [m, k], rhs [g, k, n] and
group sizes that cover some or all of lhs's rows (rows past them give zeros)."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, Invalid, PrimitiveSpec, Signature, args_at, floats,
                   scaled_tolerance, weak_flag)

_SIDE = st.integers(1, 3)


def _group_sizes(m, g):
    """Non-negative sizes of g consecutive groups, summing to at most m."""
    cuts = st.lists(st.integers(0, m), min_size=g, max_size=g).map(sorted)
    return cuts.map(lambda c: np.diff([0] + c).astype(np.int32))


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        m, k, n, g = draw(st.integers(0, 5)), draw(_SIDE), draw(_SIDE), draw(_SIDE)
        elems = floats(-3.0, 3.0, dtype) if diff else None
        args = (Arg((m, k), dtype, draw(weak_flag(dtype)), elems),
                Arg((g, k, n), dtype, draw(weak_flag(dtype)), elems),
                Arg((g,), "int32", values=_group_sizes(m, g)))
        return Signature(args, {})
    return sig()


def _reference(jax, lhs, rhs, group_sizes):
    return jax.lax.ragged_dot(lhs, rhs, group_sizes)


def _apply(lhs, rhs, group_sizes):
    import refjax
    return refjax.lax.ragged_dot(lhs, rhs, group_sizes)


_L, _R = np.ones((4, 3), np.float32), np.ones((2, 3, 2), np.float32)
SPECS = [PrimitiveSpec(
    name="ragged_dot_general", dtypes=ALL + COMPLEX, family="ragged",
    signature=_signature, reference=_reference, apply=_apply, tol=scaled_tolerance(10),
    diff_args=args_at(0, 1), linear_args=args_at(0, 1),
    invalid=(Invalid("float group sizes", (_L, _R, np.ones(2, np.float32)), {}),
             Invalid("contracting dimensions of different sizes",
                     (_L, _R[:, :2], np.ones(2, np.int32)), {}),
             Invalid("more group sizes than groups", (_L, _R, np.ones(3, np.int32)), {})),
    notes="the ragged_dot layout only; non-finite values spread as in XLA's sum over groups; "
          "bilinear in lhs and rhs (transposable in one at a time); refjax vmaps it (JAX "
          "0.10.2: NotImplementedError)")]
