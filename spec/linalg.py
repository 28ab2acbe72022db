"""Spec entry of dot_general."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, Invalid, PrimitiveSpec, Signature, args_at, floats,
                   np_dtype, scaled_tolerance, weak_flag)

_SIDE = st.sampled_from((1, 2, 3, 0))
# Wider accumulation types (JAX rejects a narrower preferred_element_type).
_WIDER = {"bool": "int32", "int8": "int32", "uint8": "uint32", "float16": "float32",
          "bfloat16": "float32"}


@st.composite
def _dimension_numbers(draw):
    """Operand shapes and ((lc, rc), (lb, rb)): batch, contracting and free dims, each operand
    holding its own in a random order."""
    nb, nc = draw(st.integers(0, 1)), draw(st.integers(0, 2))
    nl, nr = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    batch, contract = [draw(_SIDE) for _ in range(nb)], [draw(_SIDE) for _ in range(nc)]
    lhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", draw(_SIDE)) for _ in range(nl)]
    rhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", draw(_SIDE)) for _ in range(nr)]
    lhs_dims, rhs_dims = draw(st.permutations(lhs_dims)), draw(st.permutations(rhs_dims))
    sizes = {"b": batch, "c": contract}

    def shape(dims):
        return tuple(n if k == "f" else sizes[k][n] for k, n in dims)

    def where(dims, k, n):
        return dims.index((k, n))

    lc = tuple(where(lhs_dims, "c", i) for i in range(nc))
    rc = tuple(where(rhs_dims, "c", i) for i in range(nc))
    lb = tuple(where(lhs_dims, "b", i) for i in range(nb))
    rb = tuple(where(rhs_dims, "b", i) for i in range(nb))
    return shape(lhs_dims), shape(rhs_dims), ((lc, rc), (lb, rb))


def _dot_general_signature(dtype, diff):
    @st.composite
    def sig(draw):
        lhs, rhs, dims = draw(_dimension_numbers())
        elems = floats(-3.0, 3.0, dtype) if diff else None
        pet = None if diff else draw(st.sampled_from((None, None, dtype, _WIDER.get(dtype, dtype))))
        weak = draw(weak_flag(dtype))
        args = (Arg(lhs, dtype, weak, elems), Arg(rhs, dtype, draw(weak_flag(dtype)), elems))
        return Signature(args, {"dimension_numbers": dims, "precision": None,
                                "preferred_element_type": None if pet is None else np_dtype(pet),
                                "out_sharding": None})
    return sig()


def _reference(jax, lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
               out_sharding):
    return jax.lax.dot_general(lhs, rhs, dimension_numbers, precision=precision,
                               preferred_element_type=preferred_element_type)


def _params(dims):
    return {"dimension_numbers": dims, "precision": None, "preferred_element_type": None,
            "out_sharding": None}


_F = np.ones((2, 3), np.float32)
SPECS = [PrimitiveSpec(
    name="dot_general", dtypes=ALL + COMPLEX, family="linalg", signature=_dot_general_signature,
    reference=_reference, tol=scaled_tolerance(10), diff_args=args_at(0, 1),
    linear_args=args_at(0, 1),
    invalid=(Invalid("contracting dimensions of different sizes", (_F, _F),
                     _params((((1,), (0,)), ((), ())))),
             Invalid("a contracting dimension out of range", (_F, _F),
                     _params((((2,), (0,)), ((), ())))),
             Invalid("batch dimensions of different sizes", (_F, _F.T.copy()),
                     _params((((), ()), ((0,), (0,)))))),
    notes="bilinear: transposable in one operand at a time; result: batch, lhs free, rhs free")]
