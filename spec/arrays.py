"""Spec entries of split, tile, optimization_barrier, xla_metadata_value, empty and empty2
(core/primitives/arrays.py)."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, UNCHECKED, Arg, Invalid, PrimitiveSpec, Signature, all_args,
                   kind, shapes, weak_flag)
from .elementwise import SMOOTH


def _elements(dtype, diff):
    return SMOOTH(dtype) if diff and kind(dtype) in "fc" else None


def _split_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes(min_rank=1))
        axis = draw(st.integers(0, len(shape) - 1))
        cuts = sorted(draw(st.lists(st.integers(0, shape[axis]), min_size=0, max_size=3)))
        sizes = tuple(np.diff([0] + cuts + [shape[axis]]).tolist())
        return Signature((Arg(shape, dtype, draw(weak_flag(dtype)), _elements(dtype, diff)),),
                         {"sizes": sizes, "axis": axis})
    return sig()


def _stack_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape, n = draw(shapes()), draw(st.integers(1, 3))
        args = tuple(Arg(shape, dtype, draw(weak_flag(dtype)), _elements(dtype, diff))
                     for _ in range(n))
        return Signature(args, {"axis": draw(st.integers(0, len(shape)))})
    return sig()


def _unstack_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes(min_rank=1))
        return Signature((Arg(shape, dtype, draw(weak_flag(dtype)), _elements(dtype, diff)),),
                         {"axis": draw(st.integers(0, len(shape) - 1))})
    return sig()


def _tile_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        reps = tuple(draw(st.integers(0, 3)) for _ in shape)
        return Signature((Arg(shape, dtype, draw(weak_flag(dtype)), _elements(dtype, diff)),),
                         {"reps": reps})
    return sig()


def _barrier_signature(dtype, diff):
    @st.composite
    def sig(draw):
        n = draw(st.integers(1, 3))
        return Signature(tuple(Arg(draw(shapes()), dtype, draw(weak_flag(dtype)),
                                   _elements(dtype, diff)) for _ in range(n)), {})
    return sig()


def _metadata_signature(dtype, diff):
    @st.composite
    def sig(draw):
        kvs = draw(st.sampled_from(((("tag", "a"),), (("breakpoint", True), ("tag", "b")))))
        return Signature((Arg(draw(shapes()), dtype, draw(weak_flag(dtype)),
                              _elements(dtype, diff)),), {"xla_metadata_kvs": kvs})
    return sig()


def _tagged(jax, x, *, xla_metadata_kvs):
    import importlib
    module = importlib.import_module(f"{jax.__name__}.experimental.xla_metadata")
    return module.set_xla_metadata(x, **dict(xla_metadata_kvs))


_F = np.ones((2, 3), np.float32)

SPECS = [
    PrimitiveSpec(
        name="split", dtypes=ALL + COMPLEX, family="arrays", signature=_split_signature,
        reference=lambda jax, x, *, sizes, axis: jax.lax.split(x, sizes, axis=axis), exact=True,
        diff_args=all_args, linear_args=all_args,
        invalid=(Invalid("sizes not summing to the axis", (_F,), {"sizes": (1, 1), "axis": 1},
                         ValueError),
                 Invalid("a negative size", (_F,), {"sizes": (4, -1), "axis": 1}, ValueError)),
        notes="multiple results; the transpose concatenates the cotangents"),
    PrimitiveSpec(
        name="stack", dtypes=ALL + COMPLEX, family="arrays", signature=_stack_signature,
        reference=lambda jax, *xs, axis: jax.lax.stack(xs, axis=axis), exact=True,
        diff_args=all_args, linear_args=all_args,
        invalid=(Invalid("operands of two shapes", (_F, _F[:1]), {"axis": 0}, ValueError),
                 Invalid("operands of two dtypes", (_F, _F.astype(np.int32)), {"axis": 0})),
        notes="the transpose unstacks the cotangent"),
    PrimitiveSpec(
        name="unstack", dtypes=ALL + COMPLEX, family="arrays", signature=_unstack_signature,
        reference=lambda jax, x, *, axis: list(jax.lax.unstack(x, axis=axis)), exact=True,
        diff_args=all_args, linear_args=all_args,
        notes="multiple results (one per slice); the transpose stacks the cotangents"),
    PrimitiveSpec(
        name="tile", dtypes=ALL + COMPLEX, family="arrays", signature=_tile_signature,
        reference=lambda jax, x, *, reps: jax.lax.tile(x, reps), exact=True,
        diff_args=all_args, linear_args=all_args,
        invalid=(Invalid("reps of another length", (_F,), {"reps": (2,)}, TypeError),),
        notes="the transpose sums the cotangent's tiles"),
    PrimitiveSpec(
        name="optimization_barrier", dtypes=ALL + COMPLEX, family="arrays",
        signature=_barrier_signature, apply=lambda *xs: _barrier(xs),
        reference=lambda jax, *xs: list(jax.lax.optimization_barrier(xs)), exact=True,
        diff_args=all_args, linear_args=all_args,
        notes="an identity on its operands (multiple results); XLA moves no operation across "
              "it; JVP and transpose put the tangents / cotangents through a barrier, as JAX"),
    PrimitiveSpec(
        name="xla_metadata_value", dtypes=ALL + COMPLEX, family="arrays",
        signature=_metadata_signature, reference=_tagged, exact=True,
        diff_args=all_args, linear_args=all_args,
        notes="an identity tagging the op making its operand with XLA frontend attributes "
              "(experimental.xla_metadata.set_xla_metadata); the tangent is tagged too, the "
              "cotangent passes untagged, as JAX's"),
]


def _empty_signature(dtype, diff):
    @st.composite
    def sig(draw):
        return Signature((), {"shape": draw(shapes()), "dtype": np.dtype(dtype),
                              "out_sharding": None})
    return sig()


SPECS.append(PrimitiveSpec(
    name="empty", dtypes=ALL + COMPLEX, family="arrays", signature=_empty_signature,
    reference=lambda jax, *, shape, dtype, out_sharding: jax.lax.empty(shape, dtype),
    exact=True, nondiff="zero",
    invalid=(Invalid("a negative dimension", (), {"shape": (2, -1), "dtype": np.dtype(
        np.float32), "out_sharding": None}, TypeError, jax_error=UNCHECKED),),
    notes="no operands; its values are unspecified (XLA's on CPU: zeros, which numpy_ref "
          "gives); JAX fails a negative dimension in MLIR (MLIRError)"))


def _empty2_signature(dtype, diff):
    from refjax.core.primitives.arrays import MemorySpace
    return st.just(Signature((), {"dtype": np.dtype(dtype), "memory_space": MemorySpace.Device}))


SPECS.append(PrimitiveSpec(
    name="empty2", dtypes=ALL + COMPLEX, family="arrays", signature=_empty2_signature,
    reference=lambda jax, *, dtype, memory_space: jax.lax.empty((), dtype),
    exact=True, nondiff="zero",
    notes="a scalar whose value is unspecified (zero on CPU, as XLA's), made where cond's "
          "partial evaluation fills a branch's unused residual slots; JAX's lax.empty2 is "
          "not public, so lax.empty of a scalar is its reference"))


def _barrier(xs):
    from refjax import lax
    return list(lax.optimization_barrier(tuple(xs)))
