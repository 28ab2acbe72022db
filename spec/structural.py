"""Spec entries of the structural primitives (broadcast_in_dim, reshape, ..., iota, copy)."""
import math

import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, FLOAT, INT, Arg, Invalid, PrimitiveSpec, Signature, all_args,
                   args_at, floats, kind, np_dtype, shapes, weak_flag)

ANY = ALL + COMPLEX
_SIDE = st.sampled_from((1, 2, 3, 0))


def _operand(dtype, shape, draw, diff):
    """The main operand: smooth values in derivative samples, the defaults otherwise."""
    elems = floats(-3.0, 3.0, dtype) if diff and kind(dtype) == "f" else None
    return Arg(tuple(shape), dtype, draw(weak_flag(dtype)), elems)


def unary_structural(name, params_for, reference, invalid=(), min_rank=0, notes=""):
    """The entry of a one-operand structural primitive: `params_for(shape)` is a strategy of
    params; structural primitives are exact, linear and defined for every dtype."""
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape = draw(shapes(min_rank=min_rank))
            return Signature((_operand(dtype, shape, draw, diff),), draw(params_for(shape)))
        return sig()
    return PrimitiveSpec(name=name, dtypes=ANY, family="structural", signature=signature,
                         reference=reference, exact=True, diff_args=all_args,
                         linear_args=all_args, invalid=invalid, notes=notes)


def _f32(*shape):
    return np.ones(shape, np.float32)


# ---------------------------------------------------------------- broadcast_in_dim

@st.composite
def _broadcast_params(draw, shape):
    out_rank = draw(st.integers(len(shape), len(shape) + 2))
    dims = tuple(sorted(draw(st.permutations(range(out_rank)))[:len(shape)]))
    out = [draw(_SIDE) for _ in range(out_rank)]
    for i, d in enumerate(dims):
        out[d] = shape[i] if shape[i] != 1 else draw(_SIDE)
    return {"shape": tuple(out), "broadcast_dimensions": dims, "sharding": None}


_BROADCAST_IN_DIM = unary_structural(
    "broadcast_in_dim", _broadcast_params,
    lambda jax, x, *, shape, broadcast_dimensions, sharding:
        jax.lax.broadcast_in_dim(x, shape, broadcast_dimensions),
    invalid=(Invalid("dimensions of the wrong length", (_f32(2),),
                     {"shape": (2, 3), "broadcast_dimensions": (0, 1), "sharding": None}),
             Invalid("a size that is neither 1 nor the target's", (_f32(2),),
                     {"shape": (3,), "broadcast_dimensions": (0,), "sharding": None})))


# ---------------------------------------------------------------- reshape

@st.composite
def _reshape_params(draw, shape):
    size = math.prod(shape)
    if size == 0:
        rank = draw(st.integers(1, 3))
        new = [draw(_SIDE) for _ in range(rank)]
        new[draw(st.integers(0, rank - 1))] = 0
    else:
        factors = _prime_factors(size)
        rank = draw(st.integers(max(1 if factors else 0, 0), 3))
        new = [1] * rank
        for f in factors:
            new[draw(st.integers(0, rank - 1))] *= f
    return {"new_sizes": tuple(new), "dimensions": None, "sharding": None}


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


_RESHAPE = unary_structural(
    "reshape", _reshape_params,
    lambda jax, x, *, new_sizes, dimensions, sharding: jax.lax.reshape(x, new_sizes),
    invalid=(Invalid("a shape of another size", (_f32(2, 3),),
                     {"new_sizes": (4,), "dimensions": None, "sharding": None}, ValueError),),
    notes="for a size mismatch JAX fails late (a ValueError from its MLIR verifier); refjax "
          "raises JAX's class at once, naming reshape and the shapes (jnp.reshape checks "
          "first, with JAX's TypeError)")


# ---------------------------------------------------------------- squeeze

def _squeeze_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = list(draw(shapes(max_rank=2)))
        ones = draw(st.integers(0, 2))
        for _ in range(ones):
            shape.insert(draw(st.integers(0, len(shape))), 1)
        candidates = [i for i, d in enumerate(shape) if d == 1]
        chosen = draw(st.permutations(candidates))[:draw(st.integers(0, len(candidates)))]
        dims = tuple(sorted(chosen))
        return Signature((_operand(dtype, shape, draw, diff),), {"dimensions": dims})
    return sig()


_SQUEEZE = PrimitiveSpec(
    name="squeeze", dtypes=ANY, family="structural", signature=_squeeze_signature,
    reference=lambda jax, x, *, dimensions: jax.lax.squeeze(x, dimensions), exact=True,
    diff_args=all_args, linear_args=all_args,
    invalid=(Invalid("a dimension of size 2", (_f32(2, 1),), {"dimensions": (0,)}, ValueError),))


# ---------------------------------------------------------------- transpose, rev

def _transpose_params(shape):
    return st.permutations(range(len(shape))).map(lambda p: {"permutation": tuple(p)})


_TRANSPOSE = unary_structural(
    "transpose", _transpose_params,
    lambda jax, x, *, permutation: jax.lax.transpose(x, permutation),
    invalid=(Invalid("a permutation of the wrong rank", (_f32(2),), {"permutation": (1, 0)}),
             Invalid("a repeated axis", (_f32(2, 2),), {"permutation": (0, 0)})))


@st.composite
def _rev_params(draw, shape):
    perm = draw(st.permutations(range(len(shape))))
    return {"dimensions": tuple(perm[:draw(st.integers(0, len(shape)))])}


_REV = unary_structural(
    "rev", _rev_params, lambda jax, x, *, dimensions: jax.lax.rev(x, dimensions),
    invalid=(Invalid("a dimension out of range", (_f32(2),), {"dimensions": (1,)}),))


# ---------------------------------------------------------------- slice

@st.composite
def _slice_params(draw, shape):
    starts, limits, strides = [], [], []
    for d in shape:
        start = draw(st.integers(0, d))
        starts.append(start)
        limits.append(draw(st.integers(start, d)))
        strides.append(draw(st.integers(1, 3)))
    use_strides = draw(st.booleans())
    return {"start_indices": tuple(starts), "limit_indices": tuple(limits),
            "strides": tuple(strides) if use_strides else None}


_SLICE = unary_structural(
    "slice", _slice_params,
    lambda jax, x, *, start_indices, limit_indices, strides:
        jax.lax.slice(x, start_indices, limit_indices, strides),
    invalid=(Invalid("a limit past the end", (_f32(2),),
                     {"start_indices": (0,), "limit_indices": (3,), "strides": None}),
             Invalid("start after limit", (_f32(3),),
                     {"start_indices": (2,), "limit_indices": (1,), "strides": None})))


# ---------------------------------------------------------------- dynamic_slice, dynamic_update

_INDEX_DTYPES = st.sampled_from(("int32", "int32", "int8", "uint32"))


def _index_args(draw, shape):
    """Scalar start indices of one integer dtype, sometimes out of bounds (they get clamped)."""
    name = draw(_INDEX_DTYPES)
    lo = 0 if kind(name) == "u" else -3
    return [Arg((), name, False, st.integers(lo, d + 3)) for d in shape]


def _dynamic_slice_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        sizes = tuple(draw(st.integers(0, d)) for d in shape)
        args = [_operand(dtype, shape, draw, diff)] + _index_args(draw, shape)
        return Signature(tuple(args), {"slice_sizes": sizes})
    return sig()


_DYNAMIC_SLICE = PrimitiveSpec(
    name="dynamic_slice", dtypes=ANY, family="structural", signature=_dynamic_slice_signature,
    reference=lambda jax, x, *idx, slice_sizes:
        jax.lax.dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes),
    exact=True, diff_args=args_at(0), linear_args=args_at(0),
    invalid=(Invalid("a slice larger than the operand", (_f32(2), np.int32(0)),
                     {"slice_sizes": (3,)}),
             Invalid("a float start index", (_f32(2), np.float32(0)), {"slice_sizes": (1,)}),
             # JAX's primitive does not check this; its MLIR verifier fails later.
             Invalid("too few start indices", (_f32(2, 2), np.int32(0)), {"slice_sizes": (1, 1)},
                     jax_error=Exception)),
    notes="start indices are clamped so that the slice stays in bounds (the primitive does "
          "not wrap negative indices; jax.lax.dynamic_slice does, before binding)")


def _dus_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        update = tuple(draw(st.integers(0, d)) for d in shape)
        args = [_operand(dtype, shape, draw, diff), _operand(dtype, update, draw, diff)]
        return Signature(tuple(args + _index_args(draw, shape)), {})
    return sig()


_DYNAMIC_UPDATE_SLICE = PrimitiveSpec(
    name="dynamic_update_slice", dtypes=ANY, family="structural", signature=_dus_signature,
    reference=lambda jax, x, u, *idx: jax.lax.dynamic_update_slice_p.bind(x, u, *idx),
    exact=True,
    diff_args=args_at(0, 1), linear_args=args_at(0, 1),
    invalid=(Invalid("an update larger than the operand", (_f32(2), _f32(3), np.int32(0)), {}),
             Invalid("an update of another dtype",
                     (_f32(2), np.ones((1,), np.int32), np.int32(0)), {}),
             Invalid("too few start indices", (_f32(2, 2), _f32(1, 1), np.int32(0)), {})),
    notes="start indices are clamped so that the update stays in bounds")


# ---------------------------------------------------------------- pad

@st.composite
def _padding_config(draw, shape):
    config = []
    for d in shape:
        interior = draw(st.integers(0, 2))
        core = d + max(d - 1, 0) * interior
        lo = draw(st.integers(max(-core, -2), 2))
        hi = draw(st.integers(max(-(core + lo), -2), 2))
        config.append((lo, hi, interior))
    return tuple(config)


def _pad_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        args = (_operand(dtype, shape, draw, diff), _operand(dtype, (), draw, diff))
        return Signature(args, {"padding_config": draw(_padding_config(shape))})
    return sig()


_PAD = PrimitiveSpec(
    name="pad", dtypes=ANY, family="structural", signature=_pad_signature,
    reference=lambda jax, x, v, *, padding_config: jax.lax.pad(x, v, padding_config),
    exact=True, diff_args=all_args, linear_args=all_args,
    invalid=(Invalid("negative interior padding", (_f32(2), np.float32(0)),
                     {"padding_config": ((0, 0, -1),)}, ValueError),
             Invalid("a padding value of another dtype", (_f32(2), np.int32(0)),
                     {"padding_config": ((0, 0, 0),)}),
             Invalid("a config of the wrong length", (_f32(2), np.float32(0)),
                     {"padding_config": ((0, 0, 0), (0, 0, 0))}, ValueError)),
    notes="lo/hi may be negative (cropping); interior padding goes between elements")


# ---------------------------------------------------------------- concatenate

def _concatenate_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = list(draw(shapes(min_rank=1)))
        dim = draw(st.integers(0, len(shape) - 1))
        weak = draw(weak_flag(dtype))
        args = []
        for _ in range(draw(st.integers(1, 3))):
            shape[dim] = draw(_SIDE)
            args.append(_operand(dtype, shape, draw, diff)._replace(weak=weak))
        return Signature(tuple(args), {"dimension": dim})
    return sig()


_CONCATENATE = PrimitiveSpec(
    name="concatenate", dtypes=ANY, family="structural", signature=_concatenate_signature,
    reference=lambda jax, *xs, dimension: jax.lax.concatenate(xs, dimension), exact=True,
    diff_args=all_args, linear_args=all_args,
    invalid=(Invalid("shapes differing off the axis", (_f32(2, 2), _f32(3, 2)), {"dimension": 1}),
             Invalid("a dimension out of range", (_f32(2), _f32(2)), {"dimension": 1}),
             Invalid("operands of different dtypes", (_f32(2), np.ones(2, np.int32)),
                     {"dimension": 0})))


# ---------------------------------------------------------------- iota, copy

def _iota_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes(min_rank=1))
        dim = draw(st.integers(0, len(shape) - 1))
        return Signature((), {"dtype": np_dtype(dtype), "shape": shape, "dimension": dim,
                              "sharding": None})
    return sig()


_IOTA = PrimitiveSpec(
    name="iota", dtypes=INT + FLOAT + COMPLEX, family="structural", signature=_iota_signature,
    reference=lambda jax, *, dtype, shape, dimension, sharding:
        jax.lax.broadcasted_iota(dtype, shape, dimension),
    exact=True, nondiff="zero",
    invalid=(Invalid("a dimension out of range", (),
                     {"dtype": np.dtype(np.int32), "shape": (2,), "dimension": 1,
                      "sharding": None}, ValueError),),
    notes="the sample dtype is the `dtype` param; it has no operands")


_COPY = unary_structural("copy", lambda shape: st.just({}),
                         lambda jax, x: jax.lax.copy_p.bind(x))

SPECS = [_BROADCAST_IN_DIM, _RESHAPE, _SQUEEZE, _TRANSPOSE, _REV, _SLICE, _DYNAMIC_SLICE,
         _DYNAMIC_UPDATE_SLICE, _PAD, _CONCATENATE, _IOTA, _COPY]
