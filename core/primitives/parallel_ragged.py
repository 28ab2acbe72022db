"""ragged_all_to_all (lax.ragged_all_to_all): chunks of rows of varying sizes exchanged among
the lanes of a named axis, with its abstract eval, lanes (batching), jvp and transpose."""
from .. import dtypes
from ..avals import ShapedArray
from ..trace import get_aval
from ..transforms.ad import Zero, instantiate, is_undefined_primal
from ..transforms.batching import bdim_at_front
from . import elementwise as ew
from . import structural as st
from .axis_env import _no_groups, _single_name, axis_size
from .parallel_lanes import take_rows
from .parallel import _collective, all_to_all


ragged_all_to_all_p = _collective("ragged_all_to_all")
_RAGGED_INDEX_ARGS = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


@ragged_all_to_all_p.def_abstract_eval
def _ragged_abstract_eval(operand, output, *index_args, axis_name, axis_index_groups):
    for name, a in zip(_RAGGED_INDEX_ARGS, index_args):
        if dtypes.kind(a.dtype) not in "iu":
            raise ValueError(f"ragged_all_to_all {name} must be integer type.")
        if a.ndim != 1 or a.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {name} must be rank 1 with positive dimension "
                             f"size, but got shape {a.shape}")
    if operand.dtype != output.dtype or operand.shape[1:] != output.shape[1:]:
        raise TypeError(f"ragged_all_to_all: operand {operand.str_short()} and output "
                        f"{output.str_short()} must agree in dtype and in all but the leading "
                        "dimension")
    return ShapedArray(output.shape, output.dtype, weak_type=False)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """Ragged all_to_all (lax.ragged_all_to_all): chunk k of the offsets (k // (K / n) is its
    destination lane, of n) sends operand[input_offsets[k]:][:send_sizes[k]] to that lane's
    output at output_offsets[k]; the rest of `output` is kept."""
    _no_groups(axis_index_groups, "ragged_all_to_all")
    name = _single_name(axis_name, "ragged_all_to_all")
    size = axis_size(name, "ragged_all_to_all")
    k = get_aval(input_offsets).shape[0] if get_aval(input_offsets).ndim == 1 else size
    if k % size:
        raise ValueError(f"ragged_all_to_all: the {k} offsets must be a multiple of the size "
                         f"{size} of axis {name!r}")
    return ragged_all_to_all_p.bind(operand, output, input_offsets, send_sizes, output_offsets,
                                    recv_sizes, axis_name=(name,), axis_index_groups=None)


def _ragged_written(start, size, m):
    """The int32 positions 0..m-1 in [start, start + size), as a bool vector."""
    p = st.iota(dtypes.int32, m)
    return ew.bitwise_and(ew.ge(p, start), ew.lt(p, ew.add(start, size)))


def _ragged_lanes(operand, output, offsets, n):
    """Lanes at dim 0: every lane's result, from every lane's chunks (offsets: the int32
    (n, K) input_offsets, send_sizes, output_offsets)."""
    io, ss, oo = offsets
    per, m, rows = get_aval(io).shape[1] // n, get_aval(output).shape[1], \
        get_aval(operand).shape[1]
    lanes = []
    for d in range(n):
        res = st.index_in_dim(output, d, 0)
        for i in range(n):
            for k in range(d * per, (d + 1) * per):
                at = [st.index_in_dim(st.index_in_dim(a, i, 0), k, 0) for a in (io, ss, oo)]
                written = _ragged_written(at[2], at[1], m)
                if not rows:
                    continue
                src = ew.clamp(0, ew.add(st.iota(dtypes.int32, m), ew.sub(at[0], at[2])),
                               rows - 1)
                moved = take_rows(st.index_in_dim(operand, i, 0), src)
                shape = get_aval(res).shape
                res = ew.select_n(st.broadcast_in_dim(written, shape, (0,)), res, moved)
        lanes.append(st.expand_dims(res, (0,)))
    return st.concatenate(lanes, 0)


def _ragged_batch(axis_data, vals, dims, *, axis_name, axis_index_groups):
    if axis_data.name not in axis_name:  # a vmap inside shard_map: one exchange per member
        from .rng import unrolled_batch_rule
        return unrolled_batch_rule(ragged_all_to_all_p)(
            axis_data, vals, dims, axis_name=axis_name, axis_index_groups=axis_index_groups)
    n = axis_data.size
    operand, output, *index = [bdim_at_front(v, d, n) for v, d in zip(vals, dims)]
    index = [ew.convert_element_type(a, dtypes.int32) for a in index]
    out = _ragged_lanes(operand, output, index[:3], n)
    # strongly typed, as the primitive's result (lanes no chunk writes to keep output's type)
    return ew.convert_element_type(out, get_aval(out).dtype, weak_type=False), 0


def _ragged_jvp(primals, tangents, **params):
    out = ragged_all_to_all_p.bind(*primals, **params)
    t_operand, t_output = tangents[:2]
    if type(t_operand) is Zero and type(t_output) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, ragged_all_to_all_p.bind(instantiate(t_operand), instantiate(t_output),
                                         *primals[2:], **params)


def _ragged_transpose(ct, operand, output, io, ss, oo, rs, *, axis_name, axis_index_groups):
    """The chunks go back (offsets exchanged by an all_to_all, sizes swapped); the output's
    cotangent is ct where nothing was written."""
    if type(ct) is Zero:
        return [Zero(a.aval) if is_undefined_primal(a) else None for a in (operand, output)] + \
            [None] * 4
    name = axis_name[0]
    swap = [all_to_all(a, name, 0, 0, tiled=True) for a in (oo, io)]
    aval = operand.aval if is_undefined_primal(operand) else get_aval(operand)
    ct_operand = ragged_all_to_all_p.bind(ct, ew.full(aval.shape, 0, aval.dtype), swap[0], rs,
                                          swap[1], ss, axis_name=axis_name,
                                          axis_index_groups=axis_index_groups)
    shape = get_aval(ct).shape
    written = ew.full((shape[0],), False, dtypes.bool_)
    for k in range(get_aval(rs).shape[0]):
        at = [ew.convert_element_type(st.index_in_dim(a, k, 0), dtypes.int32)
              for a in (swap[0], rs)]
        written = ew.bitwise_or(written, _ragged_written(at[0], at[1], shape[0]))
    ct_output = ew.select_n(st.broadcast_in_dim(written, shape, (0,)), ct,
                            ew.full(shape, 0, get_aval(ct).dtype))
    return [ct_operand if is_undefined_primal(operand) else None,
            ct_output if is_undefined_primal(output) else None, None, None, None, None]


ragged_all_to_all_p.def_jvp(_ragged_jvp)
ragged_all_to_all_p.def_transpose(_ragged_transpose)
ragged_all_to_all_p.def_batch(_ragged_batch)
ragged_all_to_all_p.def_vma(lambda eqn, ins, strict: [
    frozenset().union(*ins) | set(eqn.params["axis_name"])])
