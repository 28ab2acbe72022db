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


class OwnDtypeErrors(PrimitiveSpec):
    """A spec whose unsupported dtypes JAX rejects with another error than TypeError (top_k,
    approx_top_k: ValueError; rng_bit_generator: AssertionError): they are Invalid cases, not
    the generic dtype test's."""

    def rejected_dtypes(self):
        return ()


def _selection_signature(axis_param, extra=lambda draw: {}):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape = draw(shapes(min_rank=1))
            axis = draw(st.integers(-len(shape), len(shape) - 1))
            k = draw(st.integers(0 if axis_param == "axis" else 1, max(shape[axis], 1)))
            if k > shape[axis]:
                shape = shape[:axis % len(shape)] + (k,) + shape[axis % len(shape) + 1:]
            if axis_param == "axis":
                axis %= len(shape)
            elements = _GRID if diff else None
            return Signature((Arg(shape, dtype, draw(weak_flag(dtype)), elements, diff),),
                             {"k": k, axis_param: axis, **extra(draw)})
        return sig()
    return signature


def _approx_params(draw):
    return {"recall_target": 0.95, "is_max_k": draw(st.booleans()),
            "reduction_input_size_override": -1, "aggregate_to_topk": True}


def _approx_reference(jax, x, *, k, reduction_dimension, is_max_k, recall_target,
                      reduction_input_size_override, aggregate_to_topk):
    fn = jax.lax.approx_max_k if is_max_k else jax.lax.approx_min_k
    return fn(x, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk)


# approx_top_k's values: distinct, finite multiples of 1/32 in [-8, 8], exact in every float
# dtype it takes. JAX documents the indices of tied values as implementation-defined, and
# XLA's CPU lowering breaks ties its own way (k=1: the last tied index; k>1: an unstable
# sort), so only tie-free operands have one right answer; NaNs XLA orders arbitrarily.
_DISTINCT = st.integers(-256, 256).map(lambda k: k / 32)


def _approx_signature(dtype, diff):
    base = _selection_signature("reduction_dimension", _approx_params)(dtype, diff)
    if diff:
        return base
    return base.map(lambda s: s._replace(args=(
        s.args[0]._replace(elements=_DISTINCT, unique=True),)))


_APPROX = {"recall_target": 0.95, "is_max_k": True, "reduction_input_size_override": -1,
           "aggregate_to_topk": True}
_F = np.ones((2, 3), np.float32)

SPECS.append(OwnDtypeErrors(
    name="top_k", dtypes=ALL, family="sorting", signature=_selection_signature("axis"),
    reference=lambda jax, x, *, k, axis: jax.lax.top_k(x, k, axis=axis), exact=True,
    diff_args=all_args,
    invalid=(Invalid("a complex operand", (_F.astype(np.complex64),), {"k": 1, "axis": 1},
                     ValueError),
             Invalid("k above the axis' size", (_F,), {"k": 4, "axis": 1}, ValueError),
             Invalid("a rank-0 operand", (np.float32(1),), {"k": 0, "axis": 0}, TypeError,
                     jax_error=ValueError)),
    notes="values in IEEE total order (NaN above +inf, -0.0 below +0.0), ties in index order; "
          "the JVP gathers the tangent at the indices"))
SPECS.append(OwnDtypeErrors(
    name="approx_top_k", dtypes=("float16", "bfloat16", "float32"), family="sorting",
    signature=_approx_signature, reference=_approx_reference, exact=True, diff_args=all_args,
    invalid=(Invalid("an integer operand", (_F.astype(np.int32),),
                     dict(_APPROX, k=1, reduction_dimension=1), ValueError),
             Invalid("k = 0", (_F,), dict(_APPROX, k=0, reduction_dimension=1), ValueError)),
    notes="exact on the oracle: -0.0 == +0.0, ties in index order, NaNs last; JAX leaves the "
          "indices of ties implementation-defined (XLA's CPU lowering: k=1 picks the last, "
          "k>1 sorts unstably) and XLA's order with NaNs unspecified, so the samples are "
          "distinct and finite; aggregate_to_topk=False keeps the whole (sorted) dimension up to one TPU "
          "tile (128, 1024 for rank 1), NotImplementedError past it"))
