"""conv_general_dilated with all of its rules and the lax convolution helpers (conv,
conv_transpose, conv_dimension_numbers, conv_general_dilated_patches, shape tuples)."""
import math
import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..sharding_types import cotangent_sharding, out_type, param_spec
from ..trace import get_aval
from ..transforms.ad import Zero, defbilinear
from ..transforms.batching import bdim_at_front
from . import elementwise as ew
from . import structural as st
from .linalg import canonicalize_precision
from .reductions import constrain
from .window_shapes import (dilate_dim, dilate_shape, padded_sizes, padtype_to_pads, stride_dim,
                            vjp_lhs_padding, vjp_rhs_padding)


# ---------------------------------------------------------------- dimension numbers

class ConvDimensionNumbers(NamedTuple):
    """The dimensions of a convolution: lhs_spec = (batch, feature, spatial...) of the input,
    rhs_spec = (out feature, in feature, spatial...) of the kernel, out_spec = (batch, feature,
    spatial...) of the output, each a tuple of dimension indices."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """ConvDimensionNumbers from None (N, C, spatial... everywhere), a ConvDimensionNumbers,
    or three strings such as ('NHWC', 'HWIO', 'NHWC')."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    _check_spec_strings(dimension_numbers, lhs_shape, rhs_shape)
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _check_spec_strings(dimension_numbers, lhs_shape, rhs_shape):
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")


_SPEC_CHARS = (("N", "C"), ("O", "I"), ("N", "C"))


def conv_general_permutations(dimension_numbers):
    """(lhs_perm, rhs_perm, out_perm) from three spec strings: each lists the dimensions of
    (batch or out feature, feature or in feature, spatial...), spatial dimensions in the
    order they appear in the rhs string."""
    for i, ((a, b), spec) in enumerate(zip(_SPEC_CHARS, dimension_numbers)):
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    spatial = [set(spec) - set(pair) for pair, spec in zip(_SPEC_CHARS, dimension_numbers)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}.")
    rhs_order = [c for c in dimension_numbers[1] if c not in "OI"]
    return tuple((spec.index(a), spec.index(b)) + tuple(spec.index(c) for c in rhs_order)
                 for (a, b), spec in zip(_SPEC_CHARS, dimension_numbers))


def _sdims(spec):
    return tuple(spec[2:])


def _swap01(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


# ---------------------------------------------------------------- shape and dtype rules

def _check_specs(lhs, rhs, dn):
    name = "conv_general_dilated"
    if len(lhs.shape) != len(rhs.shape):
        raise ValueError(f"{name} lhs and rhs must have the same number of dimensions, but "
                         f"got {lhs.shape} and {rhs.shape}.")
    if len(lhs.shape) < 2:
        raise ValueError(f"{name} requires operands of rank at least 2 (batch and feature "
                         f"dimensions), got shapes {lhs.shape} and {rhs.shape}.")
    for what, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dn):
        if sorted(spec) != list(range(len(lhs.shape))):
            raise ValueError(f"{name} dimension_numbers.{what} must be a permutation of the "
                             f"{len(lhs.shape)} dimensions of shapes {lhs.shape} and "
                             f"{rhs.shape}, got {tuple(spec)}.")


def _check_groups(lhs_shape, rhs_shape, dn, fgc, bgc):
    name = "conv_general_dilated"
    if not fgc > 0:
        raise ValueError(f"{name} feature_group_count must be a positive integer, got {fgc}.")
    features, in_features = lhs_shape[dn.lhs_spec[1]], rhs_shape[dn.rhs_spec[1]]
    out_features, batch = rhs_shape[dn.rhs_spec[0]], lhs_shape[dn.lhs_spec[0]]
    if features % fgc:
        raise ValueError(f"{name} feature_group_count must divide lhs feature dimension size, "
                         f"but {fgc} does not divide {features}.")
    if features // fgc != in_features:
        raise ValueError(f"{name} lhs feature dimension size divided by feature_group_count "
                         f"must equal the rhs input feature dimension size, but {features} // "
                         f"{fgc} != {in_features}.")
    if out_features % fgc:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                         f"feature_group_count, but {out_features} is not a multiple of {fgc}.")
    if not bgc > 0:
        raise ValueError(f"{name} batch_group_count must be a positive integer, got {bgc}.")
    if batch % bgc:
        raise ValueError(f"{name} batch_group_count must divide lhs batch dimension size, but "
                         f"{bgc} does not divide {batch}.")
    if out_features % bgc:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                         f"batch_group_count, but {out_features} is not a multiple of {bgc}.")
    if bgc > 1 and fgc > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be > "
                         f"1, got batch_group_count={bgc} and feature_group_count={fgc} in {name}")


def _check_window(rhs_shape, dn, strides, padding, lhs_dilation, rhs_dilation):
    name = "conv_general_dilated"
    n = len(dn.rhs_spec) - 2
    for what, value in (("window_strides", strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if len(value) != n:
            raise ValueError(f"{name} window and {what} must have the same number of "
                             f"dimensions, but got {n} and {len(value)} ({what}="
                             f"{tuple(value)} for rhs shape {tuple(rhs_shape)})")
    if len(padding) != n:
        raise TypeError(f"{name}: Wrong number of explicit pads for convolution: expected {n}, "
                        f"got {len(padding)}.")
    if any(s < 1 for s in strides):
        raise ValueError(f"{name} window_strides must be positive, got {tuple(strides)}")
    window = tuple(rhs_shape[d] for d in _sdims(dn.rhs_spec))
    if any(k < 1 for k in window):
        raise ValueError(f"{name} requires a kernel of positive spatial size, got rhs shape "
                         f"{tuple(rhs_shape)} whose spatial dimensions are {window}")


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape (N, O, spatial...) of a convolution of operands in canonical order
    (lhs: N, C, spatial...; rhs: O, I, spatial...); `pads` may be a padding string."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = padded_sizes("conv_general_dilated", lhs_shape[2:], pads)
    spatial = tuple(map(stride_dim, padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def _permuted(shape, perm):
    return tuple(shape[i] for i in perm)


def _unpermuted(canonical, perm):
    """The shape whose dimension perm[i] has size canonical[i]."""
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = canonical[i]
    return tuple(out)


def conv_output_shape(lhs_shape, rhs_shape, *, window_strides, padding, lhs_dilation,
                      rhs_dilation, dimension_numbers, batch_group_count, **_):
    """The output shape of conv_general_dilated (its params checked first)."""
    name, dn = "conv_general_dilated", dimension_numbers
    lhs_t = dilate_shape(name, _permuted(lhs_shape, dn.lhs_spec), lhs_dilation)
    rhs_t = dilate_shape(name, _permuted(rhs_shape, dn.rhs_spec), rhs_dilation)
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding, batch_group_count)
    return _unpermuted(out_t, dn.out_spec)


def _in_kinds(dtype):
    return {k for k in ("i", "f", "c") if dtypes.kind(dtype) == k or (k == "i" and
                                                                     dtypes.kind(dtype) == "u")}


def validate_preferred_element_type(name, input_dtype, preferred):
    """JAX's rule for preferred_element_type: same kind (int -> float allowed), same
    signedness for signed ints, not narrower."""
    ik, pk = dtypes.kind(input_dtype), dtypes.kind(preferred)
    if not (ik in "iu" and pk == "f"):
        if _in_kinds(input_dtype) - _in_kinds(preferred):
            raise TypeError(f"{name}: Input type is incompatible with `preferred_element_type`. The "
                            "compatible combinations of (input_type, preferred_element_type) "
                            "are (integral, integral), (integral, floating), (floating, "
                            "floating), (complex, complex.")
        if ik == "i" and pk != "i":
            raise TypeError(f"{name}: `preferred_element_type` must have the same signedness "
                            "as the original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError(f"{name}: `preferred_element_type` must not be narrower than the original "
                        "type.")


def conv_dtype(lhs_dtype, rhs_dtype, preferred_element_type):
    """The output dtype: the operands' (which must agree) or the preferred one."""
    if dtypes.float0 in (lhs_dtype, rhs_dtype):
        raise TypeError("conv_general_dilated does not accept dtype float0 (the tangent type of "
                        "integer values)")
    if lhs_dtype != rhs_dtype:
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs_dtype.name}, {rhs_dtype.name}.")
    if preferred_element_type is None:
        return lhs_dtype
    validate_preferred_element_type("conv_general_dilated", lhs_dtype, preferred_element_type)
    return np.dtype(preferred_element_type)


# ---------------------------------------------------------------- the primitive

conv_general_dilated_p = make_primitive("conv_general_dilated")


@conv_general_dilated_p.def_abstract_eval
def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type, out_sharding=None):
    dn = dimension_numbers
    _check_specs(lhs, rhs, dn)
    _check_groups(lhs.shape, rhs.shape, dn, feature_group_count, batch_group_count)
    _check_window(rhs.shape, dn, window_strides, padding, lhs_dilation, rhs_dilation)
    shape = conv_output_shape(lhs.shape, rhs.shape, window_strides=window_strides,
                              padding=padding, lhs_dilation=lhs_dilation,
                              rhs_dilation=rhs_dilation, dimension_numbers=dn,
                              batch_group_count=batch_group_count)
    dtype = conv_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray(shape, dtype, weak_type=lhs.weak_type and rhs.weak_type)


def _explicit_padding(padding, lhs_shape, rhs_shape, dn, window_strides, lhs_dilation,
                      rhs_dilation):
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        window = dilate_shape("conv_general_dilated", _sdims(_permuted(rhs_shape, dn.rhs_spec)),
                              rhs_dilation)
        pads = padtype_to_pads(_sdims(_permuted(lhs_shape, dn.lhs_spec)), window,
                               window_strides, padding)
        return tuple((int(lo), int(hi)) for lo, hi in pads)
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError):
        raise ValueError(f"padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from None


def _ints(values):
    return tuple(operator.index(v) for v in values)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution (XLA's Conv): lhs of rank n+2 (batch, feature and n
    spatial dims, placed as dimension_numbers say) with kernel rhs of rank n+2 (out feature,
    in feature, spatial), at window_strides, with (low, high) padding per spatial dim or
    'SAME'/'SAME_LOWER'/'VALID', lhs_dilation (transposed convolution) and rhs_dilation
    (atrous), feature or batch groups. dimension_numbers: None (NCHW, OIHW, NCHW), a
    ConvDimensionNumbers, or three strings such as ('NHWC', 'HWIO', 'NHWC')."""
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    n = len(ls) - 2
    lhs_dilation = (1,) * n if lhs_dilation is None else _ints(lhs_dilation)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints(rhs_dilation)
    window_strides = _ints(window_strides)
    pads = _explicit_padding(padding, ls, rs, dn, window_strides, lhs_dilation, rhs_dilation)
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    typed_as = out_type(out_sharding, "conv_general_dilated")
    out = conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=pet,
        out_sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


# ---------------------------------------------------------------- derivatives

def reshape_axis_into(src, dst, x):
    """x with axis src merged into axis dst as its major part (dst counts the axes of x
    without src)."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [d for i, d in enumerate(shape) if i != src]
    new[dst] *= shape[src]
    return st.reshape(x, tuple(new), tuple(perm))


def reshape_axis_out_of(src, size, x):
    """x with axis src split into (size, rest)."""
    shape = list(get_aval(x).shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return st.reshape(x, tuple(shape))


def _converted(x, dtype):
    return x if get_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def _transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, **params):
    """The input's cotangent: the cotangent convolved with the spatially flipped kernel (in
    and out features swapped, groups moved onto its input features), at unit stride over the
    stride-dilated cotangent."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1],
                                reshape_axis_out_of(rhs_spec[0], groups, rhs))
    rhs_shape = get_aval(rhs).shape
    pads = vjp_lhs_padding(_permuted(lhs_aval.shape, _sdims(lhs_spec)),
                           _permuted(rhs_shape, _sdims(rhs_spec)), window_strides,
                           _permuted(get_aval(ct).shape, _sdims(out_spec)), padding,
                           lhs_dilation, rhs_dilation)
    flipped = _converted(st.rev(rhs, _sdims(rhs_spec)), get_aval(ct).dtype)
    # laid out as lhs (JAX's out_sharding=, which a contraction over sharded dims needs)
    params["out_sharding"] = cotangent_sharding(lhs_aval) if batch_group_count == 1 else None
    out = conv_general_dilated_p.bind(
        ct, flipped, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation, dimension_numbers=ConvDimensionNumbers(
            out_spec, _swap01(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, **params)
    out = _converted(out, lhs_aval.dtype)
    if batch_group_count > 1:
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0],
                                reshape_axis_out_of(lhs_spec[1], batch_group_count, out))
    return out


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, **params):
    """The kernel's cotangent: the input convolved with the output cotangent as the window
    (batch and feature roles swapped, so feature groups become batch groups and back)."""
    if math.prod(get_aval(ct).shape) == 0:
        return Zero(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = vjp_rhs_padding(_permuted(get_aval(lhs).shape, _sdims(lhs_spec)),
                           _permuted(rhs_aval.shape, _sdims(rhs_spec)), window_strides,
                           _permuted(get_aval(ct).shape, _sdims(out_spec)), padding,
                           lhs_dilation, rhs_dilation)
    params["out_sharding"] = cotangent_sharding(rhs_aval)  # laid out as rhs (JAX's)
    out = conv_general_dilated_p.bind(
        _converted(lhs, get_aval(ct).dtype), ct, window_strides=rhs_dilation, padding=pads,
        lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_swap01(lhs_spec), _swap01(out_spec),
                                               _swap01(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count, **params)
    return _converted(out, rhs_aval.dtype)


defbilinear(conv_general_dilated_p, _transpose_lhs, _transpose_rhs)


# ---------------------------------------------------------------- batching

def _conv_batch(axis_data, vals, dims, *, dimension_numbers, feature_group_count,
                batch_group_count, **params):
    """The vmapped dimension is folded into the batch dimension (input batched), the output
    features (kernel batched) or the feature groups (both), then split out of the output."""
    (lhs, rhs), (lbd, rbd), size = vals, dims, axis_data.size
    dn = dimension_numbers
    groups = {"feature_group_count": feature_group_count, "batch_group_count": batch_group_count}
    if size == 0:
        return _empty_batch(lhs, rhs, lbd, rbd, dn, groups, params), 0
    lhs = lhs if lbd is None else bdim_at_front(lhs, lbd, size)
    rhs = rhs if rbd is None else bdim_at_front(rhs, rbd, size)
    if lbd is not None and rbd is not None:
        return _batch_both(lhs, rhs, size, dn, groups, params)
    if lbd is not None:
        return _batch_lhs(lhs, rhs, size, dn, groups, params)
    return _batch_rhs(lhs, rhs, size, dn, groups, params)


def _bind(lhs, rhs, dn, groups, params):
    return conv_general_dilated_p.bind(lhs, rhs, dimension_numbers=dn, **groups, **params)


def _batch_both(lhs, rhs, size, dn, groups, params):
    """Each member is a group: into the batch groups if there are some, else feature groups."""
    key = "batch_group_count" if groups["batch_group_count"] > 1 else "feature_group_count"
    lhs = reshape_axis_into(0, dn.lhs_spec[0 if key == "batch_group_count" else 1], lhs)
    rhs = reshape_axis_into(0, dn.rhs_spec[0], rhs)
    out = _bind(lhs, rhs, dn, {**groups, key: groups[key] * size}, params)
    return reshape_axis_out_of(dn.out_spec[1], size, out), dn.out_spec[1]


def _batch_lhs(lhs, rhs, size, dn, groups, params):
    """Members join the batch, inside each batch group."""
    n, bgc = dn.lhs_spec[0], groups["batch_group_count"]
    if bgc == 1:
        lhs = reshape_axis_into(0, n, lhs)
    else:
        lhs = reshape_axis_out_of(n + 1, bgc, lhs)          # (B, ..., G, n/G, ...)
        lhs = reshape_axis_into(0, n + 1, lhs)              # (..., G, B n/G, ...)
        lhs = reshape_axis_into(n, n, lhs)                  # (..., G B n/G, ...)
    out = _bind(lhs, rhs, dn, groups, params)
    return reshape_axis_out_of(dn.out_spec[0], size, out), dn.out_spec[0]


def _batch_rhs(lhs, rhs, size, dn, groups, params):
    """Members join the output features, inside each group."""
    o, f = dn.rhs_spec[0], dn.out_spec[1]
    g = max(groups.values())
    if g == 1:
        out = _bind(lhs, reshape_axis_into(0, o, rhs), dn, groups, params)
        return reshape_axis_out_of(f, size, out), f
    rhs = reshape_axis_out_of(o + 1, g, rhs)                # (B, ..., G, O/G, ...)
    rhs = reshape_axis_into(0, o + 1, rhs)                  # (..., G, B O/G, ...)
    out = _bind(lhs, reshape_axis_into(o, o, rhs), dn, groups, params)
    out = reshape_axis_out_of(f + 1, size, reshape_axis_out_of(f, g, out))  # (G, B, O/G)
    return reshape_axis_into(f, f + 1, out), f              # (B, G O/G)


def _empty_batch(lhs, rhs, lbd, rbd, dn, groups, params):
    """A batch of no members: zeros of the per-member output shape (grouped folds of an
    empty axis would make zero group counts)."""
    def member(x, d):
        aval = get_aval(x)
        shape = aval.shape if d is None else aval.shape[:d] + aval.shape[d + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)
    out = conv_general_dilated_p.abstract_eval(member(lhs, lbd), member(rhs, rbd),
                                               dimension_numbers=dn, **groups, **params)
    return ew.full((0,) + out.shape, 0, out.dtype)


conv_general_dilated_p.def_batch(_conv_batch)


@conv_general_dilated_p.def_sharding
def _conv_sharding(in_specs, in_avals, out_avals, *, dimension_numbers, batch_group_count,
                   out_sharding=None, **_):
    """The output batch keeps the input batch's entry (without batch groups), the output
    features the kernel's out-feature entry; spatial dimensions (windows overlap) none (the
    result type out_sharding= gives, if any, decides)."""
    if out_sharding is not None:
        return [param_spec(out_sharding, out_avals[0].ndim)]
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out = [None] * len(out_spec)
    if batch_group_count == 1:
        out[out_spec[0]] = in_specs[0][lhs_spec[0]]
    out[out_spec[1]] = in_specs[1][rhs_spec[0]]
    return [sp.dedupe(out)]


# ---------------------------------------------------------------- lax helpers

def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW/NCHW layouts and 'SAME'/'VALID' padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW/NCHW layouts, explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of the dilated input of a transposed convolution whose forward
    convolution has kernel size k, stride s and `padding` ('SAME', 'VALID' or a pair)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        before, total = k - padding[0] - 1, 2 * (k - 1) - padding[0] - padding[1]
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """Transposed ("fractionally strided") convolution: a convolution over lhs dilated by
    `strides`. 'SAME'/'VALID' (and, with use_consistent_padding, explicit pairs) name the
    forward convolution's padding; otherwise explicit pairs pad the dilated input. Layouts
    default to TensorFlow's (NHWC, HWIO, NHWC); transpose_kernel flips the kernel spatially
    and swaps its in/out features (Keras' Conv2DTranspose)."""
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    if len(ls) != len(rs) or len(ls) < 2:
        raise ValueError(f"conv_transpose requires lhs and rhs of equal rank at least 2, got "
                         f"shapes {ls} and {rs}")
    if dimension_numbers is None:
        if len(ls) not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[len(ls)]
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    window = _permuted(rs, _sdims(dn.rhs_spec))
    rhs_dilation = (1,) * len(window) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else padding
        padding = tuple(_conv_transpose_padding(dilate_dim(k, r), s, p) for k, r, s, p in
                        zip(window, rhs_dilation, strides, per_dim))
    if transpose_kernel:
        perm = list(range(len(rs)))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = st.transpose(st.rev(rhs, _sdims(dn.rhs_spec)), tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * len(window), padding, strides, rhs_dilation,
                                dn, precision=precision,
                                preferred_element_type=preferred_element_type)


def _eye(dtype, n):
    rows, cols = (st.broadcasted_iota(dtypes.int32, (n, n), d) for d in (0, 1))
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _moved_to(x, sources, destinations):
    """x with axes `sources` moved to `destinations`, the others in their order."""
    ndim = len(get_aval(x).shape)
    rest = iter(i for i in range(ndim) if i not in sources)
    where = dict(zip(destinations, sources))
    return st.transpose(x, tuple(where[d] if d in where else next(rest) for d in range(ndim)))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches conv_general_dilated's windows see: a convolution with a one-hot kernel,
    so that the output feature dimension holds each patch flattened (input features major,
    then the spatial dims in rhs_spec order); filter_shape is the window, in rhs_spec order."""
    from ..trace import as_value
    lhs = as_value(lhs)
    filter_shape = tuple(filter_shape)
    dn = conv_dimension_numbers(get_aval(lhs).shape, (1, 1) + filter_shape, dimension_numbers)
    size, channels = math.prod(filter_shape), get_aval(lhs).shape[dn.lhs_spec[1]]
    rhs = st.broadcast_in_dim(_eye(get_aval(lhs).dtype, size), (channels, size, size), (1, 2))
    rhs = _moved_to(st.reshape(rhs, (channels * size, 1) + filter_shape), (0, 1),
                    (dn.rhs_spec[0], dn.rhs_spec[1]))
    from .linalg import Precision
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of a convolution with string dimension_numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out_t = conv_shape_tuple(_permuted(lhs_shape, lhs_perm), _permuted(rhs_shape, rhs_perm),
                             window_strides, padding)
    return _unpermuted(out_t, out_perm)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of conv_transpose with string dimension_numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = _permuted(lhs_shape, lhs_perm), _permuted(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    spatial = tuple((i - 1) * s - k + 2 + sum(p)
                    for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, padding))
    return _unpermuted((lhs_t[0], rhs_t[0]) + spatial, out_perm)
