"""Spec entry of conv_general_dilated, with a strategy drawing dimension numbers, strides,
paddings, dilations and feature or batch groups (small shapes)."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, Invalid, PrimitiveSpec, Signature, args_at, floats, kind,
                   np_dtype, scaled_tolerance, weak_flag)
from .windowed import window_dim

# Wider accumulation types (JAX rejects a narrower preferred_element_type).
_WIDER = {"bool": "int32", "int8": "int32", "uint8": "uint32", "float16": "float32",
          "bfloat16": "float32", "int32": "float32"}
# Finite values only: XLA on CPU lets padding and dilation holes meet infinities and NaNs
# in some convolution algorithms (0 * inf: NaN) and skips them in others (its HLO evaluator,
# and numpy_ref, always skip them); tests/test_convolution.py shows both.
_SPECIAL = (0.0, -0.0, 1.0, -1.0, 0.5)


def _elements(dtype, diff):
    """Small values (sums of up to 18 products stay accurate in float32) with signed zeros."""
    if kind(dtype) not in "fc":
        return None
    small = floats(-2.0, 2.0, "float64" if diff else dtype)
    if diff:
        return small
    if kind(dtype) == "c":
        return st.builds(complex, small, small)
    return st.one_of(small, small, small, st.sampled_from(_SPECIAL))


def _placed(canonical, spec):
    """The shape whose dimension spec[i] has size canonical[i]."""
    out = [0] * len(spec)
    for i, d in enumerate(spec):
        out[d] = canonical[i]
    return tuple(out)


@st.composite
def _groups(draw):
    """(batch groups, feature groups, batch per group, in features per group, out features
    per group); at most one group count above 1."""
    kind_ = draw(st.sampled_from(("none", "none", "feature", "batch")))
    g = 1 if kind_ == "none" else draw(st.integers(2, 3))
    fgc, bgc = (g, 1) if kind_ == "feature" else (1, g)
    return bgc, fgc, draw(st.sampled_from((1, 2, 0))), draw(st.integers(1, 2)), \
        draw(st.sampled_from((1, 2, 1, 0)))


@st.composite
def conv_case(draw):
    """(lhs shape, rhs shape, params) of a valid convolution with 0 to 2 spatial dims."""
    dims = draw(st.lists(window_dim(), min_size=0, max_size=2))
    sizes, windows, strides, lhs_dil, rhs_dil, pads = zip(*dims) if dims else ((),) * 6
    bgc, fgc, n, c, o = draw(_groups())
    g = max(bgc, fgc)
    nd = len(dims) + 2
    specs = [tuple(draw(st.permutations(range(nd)))) for _ in range(3)]
    from refjax.core.primitives.convolution import ConvDimensionNumbers
    lhs = _placed((n * bgc, c * fgc) + tuple(sizes), specs[0])
    rhs = _placed((o * g, c) + tuple(windows), specs[1])
    return lhs, rhs, {"window_strides": tuple(strides), "padding": tuple(pads),
                      "lhs_dilation": tuple(lhs_dil), "rhs_dilation": tuple(rhs_dil),
                      "dimension_numbers": ConvDimensionNumbers(*specs),
                      "feature_group_count": fgc, "batch_group_count": bgc, "precision": None,
                      "preferred_element_type": None, "out_sharding": None}


def _conv_signature(dtype, diff):
    @st.composite
    def sig(draw):
        lhs, rhs, params = draw(conv_case())
        if not diff:
            pet = draw(st.sampled_from((None, None, dtype, _WIDER.get(dtype, dtype))))
            params["preferred_element_type"] = None if pet is None else np_dtype(pet)
        elems = _elements(dtype, diff)
        return Signature((Arg(lhs, dtype, draw(weak_flag(dtype)), elems),
                          Arg(rhs, dtype, draw(weak_flag(dtype)), elems)), params)
    return sig()


def _reference(jax, lhs, rhs, *, dimension_numbers, out_sharding, **params):
    return jax.lax.conv_general_dilated(
        lhs, rhs, dimension_numbers=jax.lax.ConvDimensionNumbers(*dimension_numbers), **params)


def _params(**changes):
    from refjax.core.primitives.convolution import ConvDimensionNumbers
    iota = (0, 1, 2)
    params = {"window_strides": (1,), "padding": ((0, 0),), "lhs_dilation": (1,),
              "rhs_dilation": (1,), "dimension_numbers": ConvDimensionNumbers(iota, iota, iota),
              "feature_group_count": 1, "batch_group_count": 1, "precision": None,
              "preferred_element_type": None, "out_sharding": None}
    params.update(changes)
    return params


def _dn(lhs, rhs, out):
    from refjax.core.primitives.convolution import ConvDimensionNumbers
    return ConvDimensionNumbers(lhs, rhs, out)


_LHS = np.ones((2, 2, 4), np.float32)   # N=2, C=2, W=4
_RHS = np.ones((4, 2, 2), np.float32)   # O=4, I=2, K=2


def _invalid():
    """Cases JAX rejects with the same error class (or, where noted, a worse one)."""
    def case(what, params, error=ValueError, jax_error=None, lhs=_LHS, rhs=_RHS):
        return Invalid(what, (lhs, rhs), params, error, jax_error)
    return (
        case("feature groups not matching the kernel's in features", _params(),
             rhs=_RHS[:, :1]),
        case("a feature_group_count not dividing the features", _params(feature_group_count=3)),
        case("a zero feature_group_count", _params(feature_group_count=0)),
        case("a batch_group_count not dividing the batch", _params(batch_group_count=3)),
        case("both group counts above 1", _params(feature_group_count=2, batch_group_count=2),
             rhs=_RHS[:, :1]),
        case("window strides of the wrong rank", _params(window_strides=(1, 1))),
        case("a zero stride (JAX: a verifier ValueError)", _params(window_strides=(0,))),
        case("lhs_dilation of the wrong rank (JAX: a verifier ValueError)",
             _params(lhs_dilation=(1, 1))),
        case("a zero dilation", _params(rhs_dilation=(0,)), TypeError),
        case("padding pairs of the wrong number", _params(padding=((0, 0), (0, 0))), TypeError),
        case("negative padding beyond the input", _params(padding=((-5, 0),))),
        case("dimension numbers repeating a dimension (JAX: a verifier ValueError)",
             _params(dimension_numbers=_dn((0, 1, 1), (0, 1, 2), (0, 1, 2)))),
        case("dimension numbers out of range (JAX: IndexError)",
             _params(dimension_numbers=_dn((0, 1, 5), (0, 1, 2), (0, 1, 2))), ValueError,
             IndexError),
        case("a kernel of zero spatial size (JAX: a verifier ValueError)", _params(),
             rhs=np.ones((4, 2, 0), np.float32)),
        case("operands of different ranks", _params(), rhs=np.ones((4, 2, 2, 2), np.float32)),
        case("operands of different dtypes", _params(), TypeError,
             rhs=_RHS.astype(np.float16)),
        case("a narrower preferred_element_type", _params(
            preferred_element_type=np.dtype(np.float16)), TypeError),
    )


SPECS = [PrimitiveSpec(
    name="conv_general_dilated", dtypes=ALL + COMPLEX, family="convolution",
    signature=_conv_signature, reference=_reference, tol=scaled_tolerance(20),
    diff_args=args_at(0, 1), linear_args=args_at(0, 1), invalid=_invalid,
    notes="bilinear: transposable in one operand at a time (lhs: a convolution of the "
          "cotangent with the flipped kernel; rhs: of the input with the cotangent); samples "
          "draw 0-2 spatial dims, dimension numbers as permutations, strides, paddings "
          "(negative ones crop), lhs/rhs dilations, feature or batch groups and empty batches "
          "or features; padding and dilation holes contribute nothing (as in XLA's evaluator: "
          "0 * inf is no NaN; XLA on CPU is not consistent there, so samples are finite)")]
