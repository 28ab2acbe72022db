"""Windowed reductions with all their rules: reduce_window (a user's computation),
reduce_window_sum/max/min, select_and_gather_add (the JVP of max/min pooling),
select_and_scatter_add (its transpose, max pooling's gradient) and the generic
select_and_scatter (a user's select and scatter computations); lax.reduce_window."""
import operator

import numpy as np

from .. import dtypes, pytree
from ..avals import ShapedArray
from ..jaxpr import ClosedJaxpr, jaxpr_as_fun
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms.ad import Zero, defjvp, deflinear, instantiate
from ..transforms.batching import bdim_at_front, not_mapped
from ..transforms.jvp import jvp
from . import elementwise as ew
from . import structural as st
from .reductions import (check_computation, max_identity, min_identity, monoid_reduction,
                         reduction_jaxpr, split_operands, stage_computation, unrolled_batch)
from .rng import unrolled_batch_rule
from .window_shapes import (check_shapelike, dilate_shape, padded_sizes, padtype_to_pads,
                            stride_dim, vjp_lhs_padding)


# ---------------------------------------------------------------- window shapes

def window_shape(name, shape, *, window_dimensions, window_strides, padding,
                 base_dilation=None, window_dilation=None, **_):
    """The output shape of a windowed reduction of an operand of `shape` (params checked)."""
    n = len(window_dimensions)
    base_dilation = base_dilation or (1,) * n
    window_dilation = window_dilation or (1,) * n
    check_shapelike(name, "window_dimensions", window_dimensions)
    check_shapelike(name, "window_strides", window_strides)
    if len(shape) != n:
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                        f"operand shape {tuple(shape)} with window_dimensions "
                        f"{tuple(window_dimensions)}.")
    for what, value in (("window_strides", window_strides), ("padding", padding),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(value) != n:
            raise TypeError(f"{name} got inconsistent {what} and window_dimensions: got {what} "
                            f"{tuple(value)} and window_dimensions {tuple(window_dimensions)}.")
    base = dilate_shape(name, shape, base_dilation)
    window = dilate_shape(name, window_dimensions, window_dilation)
    return tuple(map(stride_dim, padded_sizes(name, base, padding), window, window_strides))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of a windowed reduction."""
    return window_shape("reduce_window", operand_shape, window_dimensions=window_dimensions,
                        window_strides=window_strides, padding=padding,
                        base_dilation=base_dilation, window_dilation=window_dilation)


_UNIT = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0), "base_dilation": 1,
         "window_dilation": 1}


def _with_unit_window(params, d):
    """Window params with a window of one element inserted at dimension d."""
    return {k: (tuple(v[:d]) + (_UNIT[k],) + tuple(v[d:]) if k in _UNIT else v)
            for k, v in params.items()}


def _untouched(i, params):
    """Whether dimension i is left as it is: a window of one element at unit stride."""
    return all(params[k][i] == _UNIT[k] for k in _UNIT if k in params and k != "window_dilation")


def _window_sharding(operand_index):
    """Dimensions the windows leave untouched keep the operand's entry; windowed ones none."""
    def rule(in_specs, in_avals, out_avals, **params):
        spec = in_specs[operand_index]
        out = tuple(e if _untouched(i, params) else None for i, e in enumerate(spec))
        return [out] * len(out_avals)
    return rule


# ---------------------------------------------------------------- reduce_window_sum / max / min

def _check_number(name, dtype):
    if dtypes.kind(dtype) not in "iufc":
        raise TypeError(f"operand to {name} must have a number dtype, got {dtype.name}")


def _check_not_float0(name, dtype):
    if dtype == dtypes.float0:
        raise TypeError(f"{name} does not accept dtype float0 (the tangent type of integer "
                        "values)")


def _window_reducer(name, check_dtype):
    """A reduction over windows of one operand, to its dtype and weak type."""
    prim = make_primitive(name)

    @prim.def_abstract_eval
    def abstract_eval(x, **params):
        check_dtype(name, x.dtype)
        return ShapedArray(window_shape(name, x.shape, **params), x.dtype, x.weak_type)

    def batch(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **_with_unit_window(params, d)), d
    prim.def_batch(batch)
    prim.def_sharding(_window_sharding(0))
    return prim


reduce_window_sum_p = _window_reducer("reduce_window_sum", _check_number)
reduce_window_max_p = _window_reducer("reduce_window_max", _check_not_float0)
reduce_window_min_p = _window_reducer("reduce_window_min", _check_not_float0)


def _zero_scalar(x):
    return ew.full((), 0, get_aval(x).dtype)


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    """Each input element receives the sum of the cotangents of the windows holding it: the
    cotangent dilated by the strides and padded, summed over windows (strided by the base
    dilation), as JAX does."""
    shape = x.aval.shape
    pads = vjp_lhs_padding(shape, window_dimensions, window_strides, get_aval(ct).shape,
                           padding, base_dilation, window_dilation)
    padded = st.pad(ct, _zero_scalar(ct), [(lo, hi, s - 1)
                                           for (lo, hi), s in zip(pads, window_strides)])
    return [reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                     window_strides=base_dilation,
                                     padding=((0, 0),) * len(shape), base_dilation=(1,) * len(shape),
                                     window_dilation=window_dilation)]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(select_prim):
    """The tangent at the element each window selects (JAX's select_and_gather_add)."""
    def rule(t, x, **params):
        return select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)
    return rule


defjvp(reduce_window_max_p, _chooser_jvp(ew.ge_p))
defjvp(reduce_window_min_p, _chooser_jvp(ew.le_p))


# ---------------------------------------------------------------- select_and_gather_add

select_and_gather_add_p = make_primitive("select_and_gather_add")


def _check_select_prim(name, select_prim):
    if select_prim not in (ew.ge_p, ew.le_p):
        raise ValueError(f"{name}: select_prim must be lax.ge_p (max pooling) or lax.le_p "
                         f"(min pooling), got {select_prim}")


@select_and_gather_add_p.def_abstract_eval
def _sga_abstract_eval(tangents, operand, *, select_prim, **params):
    name = "select_and_gather_add"
    _check_select_prim(name, select_prim)
    if tangents.shape != operand.shape:
        raise TypeError(f"{name} tangents and operand shapes must match, got {tangents.shape} "
                        f"and {operand.shape}.")
    if not dtypes.is_float(operand.dtype) or tangents.dtype != operand.dtype:
        raise TypeError(f"{name} requires tangents and operand of one floating dtype, got "
                        f"{tangents.dtype.name} and {operand.dtype.name}")
    return ShapedArray(window_shape(name, operand.shape, **params), operand.dtype,
                       tangents.weak_type and operand.weak_type)


def _linear_in_first(prim):
    """The JVP of a primitive linear in its first operand, the second one only selecting."""
    def jvp(primals, tangents, **params):
        (v, x), (dv, _) = primals, tangents
        out = prim.bind(v, x, **params)
        if type(dv) is Zero:
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, prim.bind(dv, x, **params)
    prim.def_jvp(jvp)


def _sga_transpose(ct, t, x, *, select_prim, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation):
    """select_and_scatter_add of the cotangent, over the operand dilated with the selection's
    identity where the windows see a base dilation (then every base_dilation-th element)."""
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(f"VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    if type(ct) is Zero:
        return [Zero(t.aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        identity = (max_identity if select_prim is ew.ge_p else min_identity)(get_aval(x).dtype)
        x = st.pad(x, ew.full((), identity.item(), identity.dtype),
                   [(0, 0, d - 1) for d in base_dilation])
    out = select_and_scatter_add_p.bind(ct, x, select_prim=select_prim,
                                        window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    if dilated:
        out = st.slice(out, (0,) * len(base_dilation), get_aval(out).shape, base_dilation)
    return [out, None]


def _both_at_front(prim):
    """Batching of the two-operand window primitives: both batched at 0, a unit window
    there."""
    def rule(axis_data, vals, dims, **params):
        a, b = (bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims))
        return prim.bind(a, b, **_with_unit_window(params, 0)), 0
    prim.def_batch(rule)


_linear_in_first(select_and_gather_add_p)
select_and_gather_add_p.def_transpose(_sga_transpose)
_both_at_front(select_and_gather_add_p)
select_and_gather_add_p.def_sharding(_window_sharding(1))


# ---------------------------------------------------------------- select_and_scatter_add

select_and_scatter_add_p = make_primitive("select_and_scatter_add")


@select_and_scatter_add_p.def_abstract_eval
def _ssa_abstract_eval(source, operand, *, select_prim, **params):
    name = "select_and_scatter_add"
    _check_select_prim(name, select_prim)
    if dtypes.kind(operand.dtype) not in "biuf" or source.dtype != operand.dtype:
        raise TypeError(f"{name} requires source and operand of one bool, integer or floating "
                        f"dtype, got {source.dtype.name} and {operand.dtype.name}")
    windows = window_shape(name, operand.shape, **params)
    if tuple(source.shape) != windows:
        raise ValueError(f"{name}: source must have one element per window, shape {windows} "
                         f"for operand {operand.str_short()}, got {source.str_short()}")
    return ShapedArray(operand.shape, source.dtype, source.weak_type and operand.weak_type)


def _ssa_transpose(ct, s, x, *, select_prim, window_dimensions, window_strides, padding):
    if type(ct) is Zero:
        return [Zero(s.aval), None]
    ones = (1,) * len(window_dimensions)
    return [select_and_gather_add_p.bind(ct, x, select_prim=select_prim,
                                         window_dimensions=window_dimensions,
                                         window_strides=window_strides, padding=padding,
                                         base_dilation=ones, window_dilation=ones), None]


_linear_in_first(select_and_scatter_add_p)
select_and_scatter_add_p.def_transpose(_ssa_transpose)
_both_at_front(select_and_scatter_add_p)
select_and_scatter_add_p.def_sharding(_window_sharding(1))


# ---------------------------------------------------------------- reduce_window (generic)

reduce_window_p = make_primitive("reduce_window", multiple_results=True)


@reduce_window_p.def_abstract_eval
def _reduce_window_abstract_eval(*avals, jaxpr, consts, **params):
    operands, inits = avals[:len(avals) // 2], avals[len(avals) // 2:]
    if [a.dtype for a in operands] != [a.dtype for a in inits]:
        raise TypeError(f"reduce_window got inconsistent dtypes for operands and init_values: "
                        f"got operand dtypes {[a.dtype.name for a in operands]} and init_value "
                        f"dtypes {[a.dtype.name for a in inits]}.")
    if any(a.shape != () for a in inits):
        raise TypeError(f"reduce_window expected init_values to be scalars but init_values have "
                        f"shapes {[a.shape for a in inits]}.")
    if len({a.shape for a in operands}) != 1:
        raise ValueError(f"reduce_window operands must have one shape, got "
                         f"{[a.str_short() for a in operands]}")
    check_computation("reduce_window", jaxpr, inits)
    shape = window_shape("reduce_window", operands[0].shape, **params)
    return [ShapedArray(shape, a.dtype) for a in operands]


def _float_indices(avals):
    return [i for i, a in enumerate(avals) if dtypes.is_inexact(a.dtype)]


def _with_tangents(comp, n, floats):
    """The computation on (primals, tangents of the float ones) pairs: its JVP, the
    combine of the JVP's reduce_window."""
    k = len(floats)

    def combine(left, right):
        (pl, tl), (pr, tr) = ((side[:n], side[n:]) for side in (left, right))

        def of_floats(*fs):
            args = [list(pl), list(pr)]
            for j, i in enumerate(floats):
                args[0][i], args[1][i] = fs[j], fs[k + j]
            return comp(*args[0], *args[1])
        outs, t_outs = jvp(of_floats, [pl[i] for i in floats] + [pr[i] for i in floats],
                           list(tl) + list(tr))
        return tuple(outs) + tuple(t_outs[i] for i in floats)
    return combine


def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, **params):
    """As JAX's: one reduce_window over the primals and their tangents, combined by the JVP
    of the computation (init values' tangents must be zero)."""
    n = len(primals) // 2
    if any(type(t) is not Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    avals = [get_aval(p) for p in primals[:n]]
    floats = _float_indices(avals)
    if all(type(tangents[i]) is Zero for i in floats):
        outs = reduce_window_p.bind(*primals, jaxpr=jaxpr, consts=consts, **params)
        return outs, [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    comp = jaxpr_as_fun(ClosedJaxpr(jaxpr, consts))
    t_inits = [ew.full((), 0, avals[i].dtype) for i in floats]
    all_inits = list(primals[n:]) + t_inits
    tree = pytree.tree_structure(tuple(range(len(all_inits))))
    closed = stage_computation("reduce_window", _with_tangents(comp, n, floats),
                               tuple(get_aval(i) for i in all_inits), tree)
    outs = reduce_window_p.bind(*primals[:n], *[instantiate(tangents[i]) for i in floats],
                                *all_inits, jaxpr=closed.jaxpr, consts=tuple(closed.consts),
                                **params)
    t_outs = iter(outs[n:])
    return outs[:n], [next(t_outs) if i in floats else Zero(avals[i].to_tangent_aval())
                      for i in range(n)]


def _reduce_window_batch(axis_data, vals, dims, *, jaxpr, consts, **params):
    """Batched operands: a unit window over the batch; batched init values: member by
    member (JAX raises NotImplementedError)."""
    n = len(vals) // 2
    if any(d is not not_mapped for d in dims[n:]):
        return unrolled_batch(reduce_window_p, axis_data, vals, dims, jaxpr=jaxpr, consts=consts,
                              **params)
    ops = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals[:n], dims[:n])]
    outs = reduce_window_p.bind(*ops, *vals[n:], jaxpr=jaxpr, consts=consts,
                                **_with_unit_window(params, 0))
    return outs, [0] * n


def _reduce_window_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.reduce_window with a "
                     "general computation (its JVP is a reduce_window over primals and tangents "
                     "together, which has no transpose); lax.add, lax.max and lax.min "
                     "computations with their identity as init value are differentiable in "
                     "both modes. JAX raises 'Linearization failed to produce known values'.")


reduce_window_p.def_jvp(_reduce_window_jvp)
reduce_window_p.def_transpose(_reduce_window_transpose)
reduce_window_p.def_batch(_reduce_window_batch)
reduce_window_p.def_sharding(_window_sharding(0))


_WINDOW_MONOIDS = (
    (ew.add, lambda d: 0, lambda d: True, reduce_window_sum_p),
    (ew.max, max_identity, lambda d: True, reduce_window_max_p),
    (ew.min, min_identity, lambda d: True, reduce_window_min_p),
)


def _ints(values, n):
    return (1,) * n if values is None else tuple(operator.index(v) for v in values)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """XLA's ReduceWindow: each window of the pytree `operand` reduced by computation(xs, ys)
    from `init_value` (scalars; padding and dilation holes hold them). padding: 'VALID',
    'SAME', 'SAME_LOWER' or (low, high) pairs. lax.add with 0, lax.max / lax.min with their
    identity bind reduce_window_sum / max / min, as JAX does."""
    flat_ops, flat_inits, tree = split_operands("reduce_window", operand, init_value)
    window_dimensions = tuple(operator.index(d) for d in window_dimensions)
    n = len(window_dimensions)
    params = {"window_dimensions": window_dimensions,
              "window_strides": _ints(window_strides, n),
              "base_dilation": _ints(base_dilation, n), "window_dilation": _ints(window_dilation, n)}
    if isinstance(padding, str):
        window = dilate_shape("reduce_window", window_dimensions, params["window_dilation"])
        padding = padtype_to_pads(get_aval(flat_ops[0]).shape, window, params["window_strides"],
                                  padding)
    params["padding"] = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    special = monoid_reduction(computation, flat_inits, _WINDOW_MONOIDS)
    if special is not None:
        return pytree.tree_unflatten(tree, [special.bind(flat_ops[0], **params)])
    closed = reduction_jaxpr("reduce_window", computation,
                             tuple(get_aval(x) for x in flat_inits), tree)
    outs = reduce_window_p.bind(*flat_ops, *flat_inits, jaxpr=closed.jaxpr,
                                consts=tuple(closed.consts), **params)
    return pytree.tree_unflatten(tree, outs)



# ---------------------------------------------------------------- select_and_scatter (generic)

select_and_scatter_p = make_primitive("select_and_scatter")
_SAS = "select_and_scatter"


def _check_sas_computation(what, jaxpr, consts, init, out_dtype):
    """select maps two scalars of the init value's type to a bool, scatter to that type
    (ValueError, JAX's class: its lowering's verifier rejects the regions)."""
    closed = ClosedJaxpr(jaxpr, list(consts))
    takes = [(a.dtype, a.shape) for a in closed.in_avals]
    gives = [(a.dtype, a.shape) for a in closed.out_avals]
    if takes != [(init.dtype, ())] * 2 or gives != [(out_dtype, ())]:
        raise ValueError(
            f"{_SAS}: the {what} computation must map two {init.dtype.name}[] scalars to one "
            f"{out_dtype.name}[]; its jaxpr takes "
            f"({', '.join(a.str_short() for a in closed.in_avals)}) and returns "
            f"({', '.join(a.str_short() for a in closed.out_avals)})")


def _check_sas_operands(operand, source, init_value, window_dimensions):
    """JAX's lowering fails on these with verifier ValueErrors; refjax names the shapes."""
    if len(window_dimensions) != len(operand.shape):
        raise ValueError(f"{_SAS}: window_dimensions {tuple(window_dimensions)} do not match "
                         f"the rank of operand {operand.str_short()}")
    if not source.dtype == init_value.dtype == operand.dtype or init_value.shape != ():
        raise ValueError(f"{_SAS}: operand, source and a scalar init_value of one dtype "
                         f"required, got {operand.str_short()}, {source.str_short()} and "
                         f"{init_value.str_short()}")


@select_and_scatter_p.def_abstract_eval
def _sas_abstract_eval(operand, source, init_value, *, select_jaxpr, select_consts,
                       scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                       padding):
    check_shapelike(_SAS, "window_dimensions", window_dimensions)
    check_shapelike(_SAS, "window_strides", window_strides)
    if len(window_dimensions) != len(window_strides):  # JAX's one check (a TypeError)
        raise TypeError(f"{_SAS} got inconsistent window_strides and window_dimensions: got "
                        f"window_strides {tuple(window_strides)} and window_dimensions "
                        f"{tuple(window_dimensions)}.")
    _check_sas_operands(operand, source, init_value, window_dimensions)
    _check_sas_computation("select", select_jaxpr, select_consts, init_value,
                           np.dtype(bool))
    _check_sas_computation("scatter", scatter_jaxpr, scatter_consts, init_value,
                           init_value.dtype)
    windows = window_shape(_SAS, operand.shape, window_dimensions=window_dimensions,
                           window_strides=window_strides, padding=padding)
    if tuple(source.shape) != windows:
        raise ValueError(f"{_SAS}: source must have one element per window, shape {windows} "
                         f"for operand {operand.str_short()}, got {source.str_short()}")
    weak = operand.weak_type and source.weak_type and init_value.weak_type
    return ShapedArray(operand.shape, operand.dtype, weak)


def _sas_batch(axis_data, vals, dims, **params):
    """Batched operand or source: a unit window over the batch dimension (JAX has no batching
    rule); a batched init value: member by member."""
    if dims[2] is not not_mapped:
        return unrolled_batch_rule(select_and_scatter_p)(axis_data, vals, dims, **params)
    operand, source = (bdim_at_front(v, d, axis_data.size) for v, d in zip(vals[:2], dims[:2]))
    out = select_and_scatter_p.bind(operand, source, vals[2], **_with_unit_window(params, 0))
    return out, 0


select_and_scatter_p.def_batch(_sas_batch)
select_and_scatter_p.def_sharding(_window_sharding(0))


def select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                       init_value, scatter):
    """XLA's SelectAndScatter (JAX's lax._select_and_scatter; lax exports only the primitive):
    each window of `operand` selects an element by select(a, b) (keep a while it holds), and
    each `source` value is combined into the init_value-filled output at its window's
    selection by scatter(out, value). padding: (low, high) pairs."""
    init_aval = get_aval(init_value)
    select_jaxpr = _scalar_computation(select, init_aval)
    scatter_jaxpr = _scalar_computation(scatter, init_aval)
    return select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=select_jaxpr.jaxpr,
        select_consts=tuple(select_jaxpr.consts), scatter_jaxpr=scatter_jaxpr.jaxpr,
        scatter_consts=tuple(scatter_jaxpr.consts),
        window_dimensions=tuple(map(operator.index, window_dimensions)),
        window_strides=tuple(map(operator.index, window_strides)),
        padding=tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding))


def _scalar_computation(fn, init_aval):
    from ..transforms.staging import stage
    scalar = ShapedArray((), init_aval.dtype)
    closed, tracer_consts = stage(lambda a, b: [fn(a, b)], [scalar, scalar])
    if tracer_consts:
        raise NotImplementedError(f"{_SAS}: select and scatter computations can't close over "
                                  "values traced by an enclosing transformation")
    return closed
