"""Spec entries of gather, scatter-add, scatter-mul, scatter-min, scatter-max and scatter.

One strategy draws a gather configuration (operand shape, batching dims, start_index_map,
slice sizes, collapsed dims, indices shape, offset dims); a scatter's configuration is the
one that writes back what that gather reads (its updates have the gather's output shape)."""
import dataclasses

import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, NUM, Arg, Invalid, PrimitiveSpec, Signature, args_at,
                   scaled_tolerance, shapes, weak_flag)
from .structural import _operand

ANY = ALL + COMPLEX
_SIDE = st.sampled_from((1, 2, 3, 2, 1, 0))


def _modes():
    from refjax.core.primitives.gather import GatherScatterMode as M
    return st.sampled_from((M.CLIP, M.FILL_OR_DROP, M.PROMISE_IN_BOUNDS))


def _index_dtype(draw):
    import refjax
    wide = refjax.config.read("jax_enable_x64")
    return draw(st.sampled_from(("int32", "int64") if wide else ("int32", "int8", "int32")))


def _subset(draw, items):
    items = list(items)
    return sorted(draw(st.permutations(items))[:draw(st.integers(0, len(items)))])


@st.composite
def _gather_config(draw, unit_index_windows=False):
    """(operand shape, indices shape, GatherDimensionNumbers, slice_sizes). With
    `unit_index_windows`, indexed dims have slice size 1 (windows at distinct starts are
    disjoint)."""
    from refjax.core.primitives.gather import GatherDimensionNumbers
    shape = draw(shapes(max_rank=3))
    rank = len(shape)
    nonempty = [d for d in range(rank) if shape[d]]
    operand_bdims = _subset(draw, nonempty) if draw(st.integers(0, 3)) == 0 else []
    free = [d for d in range(rank) if d not in operand_bdims]
    index_map = list(draw(st.permutations(free)))[:draw(st.integers(0, len(free)))]
    sizes = [1 if d in operand_bdims else min(1, shape[d])
             if unit_index_windows and d in index_map else draw(st.integers(0, shape[d]))
             for d in range(rank)]
    collapsed = _subset(draw, [d for d in free if sizes[d] == 1])
    batch = [draw(_SIDE) for _ in range(draw(st.integers(0, 2)))]
    positions = []
    for o in operand_bdims:   # each operand batching dim pairs with a new indices dim
        p = draw(st.integers(0, len(batch)))
        batch.insert(p, shape[o])
        positions = [q + (q >= p) for q in positions] + [p]
    indices_shape = tuple(batch) + (len(index_map),)
    n_offset = rank - len(collapsed) - len(operand_bdims)
    out_rank = n_offset + len(batch)
    offset = sorted(draw(st.permutations(range(out_rank)))[:n_offset])
    dn = GatherDimensionNumbers(tuple(offset), tuple(collapsed), tuple(index_map),
                                tuple(operand_bdims), tuple(positions))
    return tuple(shape), indices_shape, dn, tuple(sizes)


def _index_bounds(shape, dn, sizes, mode, in_bounds):
    """The range of index values: in bounds of every indexed dim (PROMISE_IN_BOUNDS, or
    `in_bounds`), else a little beyond both ends."""
    his = [shape[d] - sizes[d] for d in dn.start_index_map]
    if in_bounds or mode.name == "PROMISE_IN_BOUNDS":
        return 0, max(min(his, default=0), 0)
    return -2, max(his, default=0) + 2


def _gather_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape, ishape, dn, sizes = draw(_gather_config())
        mode = draw(_modes())
        lo, hi = _index_bounds(shape, dn, sizes, mode, False)
        # NaN fills would make finite differences NaN: derivative samples fill with 0.
        fill = None if mode.name != "FILL_OR_DROP" or (draw(st.booleans()) and not diff) else 0
        indices = Arg(ishape, _index_dtype(draw), False, st.integers(lo, hi))
        params = {"dimension_numbers": dn, "slice_sizes": sizes, "indices_are_sorted": False,
                  "unique_indices": False, "mode": mode, "fill_value": fill}
        return Signature((_operand(dtype, shape, draw, diff), indices), params)
    return sig()


def _jax_gather(jax, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                unique_indices, mode, fill_value):
    return jax.lax.gather(x, idx, jax.lax.GatherDimensionNumbers(**dimension_numbers._asdict()),
                          slice_sizes, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted,
                          mode=jax.lax.GatherScatterMode[mode.name], fill_value=fill_value)


def _jax_scatter(fn_name):
    def reference(jax, x, idx, u, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
        dn = jax.lax.ScatterDimensionNumbers(**dimension_numbers._asdict())
        return getattr(jax.lax, fn_name)(x, idx, u, dn, indices_are_sorted=indices_are_sorted,
                                         unique_indices=unique_indices,
                                         mode=jax.lax.GatherScatterMode[mode.name])
    return reference


def _gather_params(dn, sizes, mode="CLIP"):
    from refjax.core.primitives.gather import GatherDimensionNumbers, GatherScatterMode
    return {"dimension_numbers": GatherDimensionNumbers(*dn), "slice_sizes": sizes,
            "indices_are_sorted": False, "unique_indices": False,
            "mode": GatherScatterMode[mode], "fill_value": None}


def _f32(*shape):
    return np.ones(shape, np.float32)


def _i32(*shape):
    return np.zeros(shape, np.int32)


def _gather_invalid():
    return (
        Invalid("collapsing a dim of slice size 2", (_f32(3, 4), _i32(2, 1)),
                _gather_params(((1,), (0,), (0,)), (2, 4))),
        Invalid("a slice larger than the operand", (_f32(3, 4), _i32(2, 1)),
                _gather_params(((1,), (0,), (0,)), (1, 5))),
        Invalid("an index vector longer than start_index_map", (_f32(3, 4), _i32(2, 2)),
                _gather_params(((1,), (0,), (0,)), (1, 4))),
        Invalid("float indices", (_f32(3, 4), np.zeros((2, 1), np.float32)),
                _gather_params(((1,), (0,), (0,)), (1, 4)), ValueError),
        Invalid("rank-0 indices", (_f32(3, 4), np.int32(0)),
                _gather_params(((0, 1), (), ()), (1, 4))),
        Invalid("an operand dim neither offset nor collapsed", (_f32(3, 4), _i32(2, 1)),
                _gather_params(((1,), (), (0,)), (1, 4))),
        Invalid("unsorted offset_dims", (_f32(3, 4), _i32(2, 1)),
                _gather_params(((2, 1), (), (0,)), (1, 4))))


_GATHER = PrimitiveSpec(
    name="gather", dtypes=ANY, family="gather", signature=_gather_signature,
    reference=_jax_gather, exact=True, diff_args=args_at(0), linear_args=args_at(0),
    invalid=_gather_invalid,
    notes="index vector = last dim of the indices; out-of-bounds windows: CLIP and "
          "PROMISE_IN_BOUNDS clamp, FILL_OR_DROP fills (fill_value None: NaN, the dtype's "
          "min (signed), max (unsigned), True); the tangent's fill is 0; transpose is a "
          "scatter-add")


# ---------------------------------------------------------------- scatter-add, scatter

def _scatter_config(config):
    from refjax.core.primitives.gather import ScatterDimensionNumbers, _gather_shape
    shape, ishape, dn, sizes = config
    sdn = ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                  dn.operand_batching_dims, dn.start_indices_batching_dims)
    return shape, ishape, sdn, _gather_shape(ishape, dn, sizes), dn, sizes


def _few_enough(config, extra):
    """Distinct index values (in a range `extra` values wider than the smallest indexed dim)
    exist for every element of the indices, and no two updates share a window (scatter)."""
    shape, ishape, dn, sizes = config
    updates = int(np.prod(ishape[:-1], dtype=np.int64))
    if not dn.start_index_map:   # the updates of one batch coordinate write the same window
        batching = int(np.prod([ishape[p] for p in dn.start_indices_batching_dims],
                               dtype=np.int64))
        return updates == batching
    room = min(shape[d] for d in dn.start_index_map)
    return updates * len(dn.start_index_map) <= room + extra


def _one_update_per_window_without_index_vector(config):
    return bool(config[2].start_index_map) or _few_enough(config, 0)


def _steps(offset):
    """Floats on a grid of step 1/256 shifted by `offset`: operand and updates drawn from
    grids shifted apart never tie (a min/max kink finite differences cannot cross)."""
    return st.integers(-2048, 2048).map(lambda k: (k + offset) / 256)


def _values(dtype, shape, draw, diff, untied, offset, unique=False):
    """An operand or updates Arg; with `untied` (min/max derivative samples), on its own grid
    (and with `unique`, distinct values)."""
    if not (diff and untied):
        return _operand(dtype, shape, draw, diff)
    return Arg(tuple(shape), dtype, draw(weak_flag(dtype)), _steps(offset), unique)


def _scatter_signature(unique, untied=False):
    """Scatter samples; `unique`: distinct, non-overlapping windows (unique_indices=True),
    None: drawn. `untied`: derivative samples whose operand and updates never tie."""
    if unique is None:
        return lambda dtype, diff: st.booleans().flatmap(
            lambda u: _scatter_signature(u, untied)(dtype, diff))

    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            mode = draw(_modes())
            fill = mode.name == "FILL_OR_DROP"
            config = _gather_config(unit_index_windows=unique)
            if unique:
                config = config.filter(lambda c: _few_enough(c, 4 if fill else 0))
            # XLA (JAX's reference) mishandles several updates of one window with an empty
            # index vector (refjax's xla rule works around it).
            config = config.filter(_one_update_per_window_without_index_vector)
            shape, ishape, sdn, ushape, dn, sizes = _scatter_config(draw(config))
            lo, hi = _index_bounds(shape, dn, sizes, mode, unique and not fill)
            if unique:   # distinct values: no two windows overlap (out-of-bounds ones drop)
                lo, hi = (-2, hi + 2) if fill else (0, hi)
            indices = Arg(ishape, _index_dtype(draw), False, st.integers(lo, hi), unique)
            operand = _values(dtype, shape, draw, diff, untied, 0.0)
            updates = _values(dtype, ushape, draw, diff, untied, 0.5, unique=True)
            params = {"dimension_numbers": sdn, "indices_are_sorted": False,
                      "unique_indices": unique, "mode": mode}
            return Signature((operand, indices, updates), params)
        return sig()
    return signature


def _scatter_params(dn, mode="FILL_OR_DROP"):
    from refjax.core.primitives.gather import GatherScatterMode, ScatterDimensionNumbers
    return {"dimension_numbers": ScatterDimensionNumbers(*dn), "indices_are_sorted": False,
            "unique_indices": False, "mode": GatherScatterMode[mode]}


def _scatter_invalid():
    dn = ((1,), (0,), (0,))
    return (
        Invalid("updates of another dtype", (_f32(3, 4), _i32(2, 1), _i32(2, 4)),
                _scatter_params(dn)),
        Invalid("a window larger than the operand", (_f32(3, 4), _i32(2, 1), _f32(2, 5)),
                _scatter_params(dn)),
        Invalid("scatter dims of the wrong size", (_f32(3, 4), _i32(2, 1), _f32(3, 4)),
                _scatter_params(dn)),
        Invalid("a window of the wrong rank", (_f32(3, 4), _i32(2, 1), _f32(2, 4)),
                _scatter_params(((1,), (), (0,)))),
        Invalid("float indices", (_f32(3, 4), np.zeros((2, 1), np.float32), _f32(2, 4)),
                _scatter_params(dn), ValueError))


_SCATTER_ADD = PrimitiveSpec(
    name="scatter-add", dtypes=NUM + COMPLEX, family="gather",
    signature=_scatter_signature(False), reference=_jax_scatter("scatter_add"),
    tol=scaled_tolerance(8), diff_args=args_at(0, 2), linear_args=args_at(0, 2),
    invalid=_scatter_invalid,
    notes="repeated indices accumulate (floats in another order than XLA: a tolerance); "
          "out-of-bounds windows are dropped (FILL_OR_DROP, PROMISE_IN_BOUNDS) or clamped "
          "(CLIP); no update_jaxpr param; transpose: the cotangent, and its gather")

_SCATTER_SUB = dataclasses.replace(
    _SCATTER_ADD, name="scatter-sub", reference=_jax_scatter("scatter_sub"),
    notes="operand minus the updates at their indices (repeated indices accumulate; floats in "
          "another order than XLA: a tolerance); transpose: the cotangent, and its negated "
          "gather")

_SCATTER = PrimitiveSpec(
    name="scatter", dtypes=ANY, family="gather", signature=_scatter_signature(True),
    reference=_jax_scatter("scatter"), exact=True, diff_args=args_at(0, 2),
    linear_args=args_at(0, 2), invalid=_scatter_invalid,
    notes="samples have distinct, non-overlapping windows (unique_indices=True), where the "
          "result is specified; with unique_indices=False the JVP uses JAX's id trick "
          "(a scatter-add of masked tangents) and there is no transpose")

_SCATTER_MUL = PrimitiveSpec(
    name="scatter-mul", dtypes=NUM + COMPLEX, family="gather",
    signature=_scatter_signature(None), reference=_jax_scatter("scatter_mul"),
    tol=scaled_tolerance(8), diff_args=args_at(0, 2), linear_args=args_at(0),
    invalid=_scatter_invalid,
    notes="repeated indices multiply (floats in another order than XLA: a tolerance; every "
          "product rounded to the dtype, half floats too); out-of-bounds windows dropped or "
          "clamped (CLIP); JVP linear in the operand; in the updates JAX's with "
          "unique_indices=True, else (JAX raises NotImplementedError) the product rule, the "
          "product of the other factors by division with zeros counted apart; transpose: the "
          "operand's only (a scatter-mul of the cotangent)")


def _extremal(name, fn_name):
    return PrimitiveSpec(
        name=name, dtypes=ALL + COMPLEX, family="gather",
        signature=_scatter_signature(None, untied=True), reference=_jax_scatter(fn_name),
        exact=True, diff_args=args_at(0, 2), invalid=_scatter_invalid,
        notes="NaN propagates; -0.0 < +0.0 as in XLA; JVP: JAX's, the tangent shared equally "
              "by the operand and updates equal to the result (gathers in the scatter's mode, "
              "so CLIP tangents are finite where JAX's are NaN); not linear: no transpose; "
              "derivative samples draw operand and updates on disjoint grids (no ties)")


_SCATTER_MIN = _extremal("scatter-min", "scatter_min")
_SCATTER_MAX = _extremal("scatter-max", "scatter_max")

SPECS = [_GATHER, _SCATTER_ADD, _SCATTER_SUB, _SCATTER_MUL, _SCATTER_MIN, _SCATTER_MAX, _SCATTER]
