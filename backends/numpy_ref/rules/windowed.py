"""NumPy rules of the windowed reductions: windows are strided views of the operand padded and
base-dilated, reduced (sum, max, min) or folded element by element in row-major window order
(a user's computation, the selections of max/min pooling's derivatives), as XLA does: padding
and dilation holes hold the identity of a reduction and are skipped by a fold."""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ....core import dtypes
from ....core.jaxpr import ClosedJaxpr
from ....core.primitives import elementwise as ew
from ....core.primitives import reductions as red
from ....core.primitives import windowed as wd
from ....core.primitives.window_shapes import dilate_dim
from ._common import rule
from .reductions import _accumulate, _reduce_max, _reduce_min, apply_computation, fold
from .structural import _pad


def windows(x, fill, *, window_dimensions, window_strides, padding, base_dilation=None,
            window_dilation=None, **_):
    """An array of shape (output shape) + window_dimensions: element (i..., k...) is window
    i's k-th element of x padded and base-dilated with `fill`."""
    n = x.ndim
    base_dilation, window_dilation = base_dilation or (1,) * n, window_dilation or (1,) * n
    out_shape = wd.window_shape("window", x.shape, window_dimensions=window_dimensions,
                                window_strides=window_strides, padding=padding,
                                base_dilation=base_dilation, window_dilation=window_dilation)
    if 0 in out_shape:
        return np.empty(out_shape + tuple(window_dimensions), x.dtype)
    config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)]
    padded = _pad(x, np.asarray(fill, x.dtype), padding_config=config)
    span = [dilate_dim(k, r) for k, r in zip(window_dimensions, window_dilation)]
    view = sliding_window_view(padded, span)
    return view[tuple(slice(None, None, s) for s in window_strides)
                + tuple(slice(None, None, r) for r in window_dilation)]


def _flat(w, n):
    """Windows as (number of windows, elements per window), elements in row-major order."""
    return w.reshape((int(np.prod(w.shape[:n], dtype=np.int64)),
                      int(np.prod(w.shape[n:], dtype=np.int64))))


def _window_axes(x):
    return tuple(range(x.ndim, 2 * x.ndim))


@rule(wd.reduce_window_sum_p)
def _reduce_window_sum(x, **params):
    # initial=0: XLA's sums start from the init value 0, so all-(-0.0) windows give +0.0
    return _accumulate(np.sum, windows(x, 0, **params), axis=_window_axes(x), initial=0)


@rule(wd.reduce_window_max_p)
def _reduce_window_max(x, **params):
    return _reduce_max(windows(x, red.max_identity(x.dtype), **params), axes=_window_axes(x))


@rule(wd.reduce_window_min_p)
def _reduce_window_min(x, **params):
    return _reduce_min(windows(x, red.min_identity(x.dtype), **params), axes=_window_axes(x))


def _valid(x, params):
    """Which window elements are elements of x (not padding, not dilation holes)."""
    return windows(np.ones(x.shape, bool), False, **params)


_SELECT = {ew.ge_p: np.greater_equal, ew.le_p: np.less_equal}


@rule(wd.select_and_gather_add_p)
def _select_and_gather_add(t, x, *, select_prim, **params):
    """The tangent at the element each window selects: a fold from (-+inf, 0) keeping the
    accumulator where select_prim(accumulator, element) holds (so the first of ties)."""
    select = _SELECT[select_prim]

    def step(acc, e):
        keep = select(acc[0], e[0])
        return [np.where(keep, a, b) for a, b in zip(acc, e)]
    identity = (red.max_identity if select_prim is ew.ge_p else red.min_identity)(x.dtype)
    shape = wd.window_shape("select_and_gather_add", x.shape, **params)
    elements = [_flat(windows(v, 0, **params), x.ndim) for v in (x, t)]
    with np.errstate(invalid="ignore"):
        _, out = fold(step, [identity, np.zeros((), t.dtype)], elements,
                       _flat(_valid(x, params), x.ndim))
    return out.reshape(shape)


@rule(wd.select_and_scatter_add_p)
def _select_and_scatter_add(source, operand, *, select_prim, window_dimensions, window_strides,
                            padding):
    """Each source value added at the element its window selects (the first element, then
    the next one wherever select_prim(selected, next) fails). The operand is padded with the
    selection's identity first (padding can be selected, its sums dropped), as JAX on CPU."""
    identity = (red.max_identity if select_prim is ew.ge_p else red.min_identity)(operand.dtype)
    config = [(lo, hi, 0) for lo, hi in padding]
    padded = _pad(operand, identity, padding_config=config)
    params = {"window_dimensions": window_dimensions, "window_strides": window_strides,
              "padding": [(0, 0)] * operand.ndim}
    values = _flat(windows(padded, 0, **params), operand.ndim)
    where = _flat(windows(np.arange(padded.size).reshape(padded.shape), 0, **params),
                  operand.ndim)
    chosen, at = values[:, 0], where[:, 0]
    for k in range(1, values.shape[1]):
        keep = _SELECT[select_prim](chosen, values[:, k])
        chosen, at = np.where(keep, chosen, values[:, k]), np.where(keep, at, where[:, k])
    out = _scatter_add(source.reshape(-1), at, padded.shape, source.dtype)
    return _pad(out, np.zeros((), source.dtype), padding_config=[(-lo, -hi, 0) for lo, hi, _ in config])


def _scatter_add(values, at, shape, dtype):
    """Sum of `values` at the flat positions `at` of a zero array (OR for booleans; half
    floats summed in float64 and rounded once)."""
    if dtype == np.bool_:
        out = np.zeros(int(np.prod(shape)), bool)
        np.logical_or.at(out, at, values)
        return out.reshape(shape)
    wide = np.float64 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype
    out = np.zeros(int(np.prod(shape)), wide)
    with np.errstate(all="ignore"):
        np.add.at(out, at, values.astype(wide))
    return out.reshape(shape).astype(dtype)


# ---------------------------------------------------------------- reduce_window (generic)

_COMPUTATIONS = {}


def closed_computation(jaxpr, consts):
    """One ClosedJaxpr per (jaxpr, consts) object pair, so _vectorized's cache is hit."""
    key = (id(jaxpr), id(consts))
    entry = _COMPUTATIONS.get(key)
    if entry is None or entry[0] is not jaxpr or entry[1] is not consts:
        if len(_COMPUTATIONS) > 256:
            _COMPUTATIONS.clear()
        entry = _COMPUTATIONS[key] = (jaxpr, consts, ClosedJaxpr(jaxpr, consts))
    return entry[2]


@rule(wd.reduce_window_p)
def _reduce_window(*args, jaxpr, consts, **params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    closed = closed_computation(jaxpr, consts)
    shape = wd.window_shape("reduce_window", operands[0].shape, **params)
    elements = [_flat(windows(x, i, **params), x.ndim) for x, i in zip(operands, inits)]
    with np.errstate(all="ignore"):
        outs = fold(lambda acc, e: apply_computation(closed, acc, e), list(inits), elements,
                     _flat(_valid(operands[0], params), operands[0].ndim))
    return [np.asarray(o, x.dtype).reshape(shape) for o, x in zip(outs, operands)]


# ---------------------------------------------------------------- select_and_scatter (generic)

def _select_in_windows(select, values, where, valid):
    """Per window, the flat operand index of its selection (-1 for a window of padding only):
    the first element, replaced by each next one where select(selected, next) is false;
    padding is skipped, as XLA does."""
    chosen, at = values[:, 0], np.where(valid[:, 0], where[:, 0], -1)
    for k in range(1, values.shape[1]):
        keep = apply_computation(select, [chosen], [values[:, k]])[0].astype(bool)
        take = valid[:, k] & ((at < 0) | ~keep)
        chosen, at = np.where(take, values[:, k], chosen), np.where(take, where[:, k], at)
    return at


def _scatter_in_order(scatter, out, at, updates):
    """out[at[i]] = scatter(out[at[i]], updates[i]) for i in order; windows selecting the same
    element are applied in rounds (the r-th selection of every element in round r)."""
    order = np.argsort(at, kind="stable")
    starts = np.searchsorted(at[order], at[order], side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order)) - starts
    for r in range(int(rank.max(initial=-1)) + 1):
        targets, values = at[rank == r], updates[rank == r]
        out[targets] = apply_computation(scatter, [out[targets]], [values])[0]
    return out


@rule(wd.select_and_scatter_p)
def _select_and_scatter(operand, source, init_value, *, select_jaxpr, select_consts,
                        scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                        padding):
    """XLA's SelectAndScatter: each window's selection (_select_in_windows), then each source
    value combined into the init_value-filled output at its window's selection, windows in
    row-major order."""
    params = {"window_dimensions": window_dimensions, "window_strides": window_strides,
              "padding": padding}
    n = operand.ndim
    index = np.arange(operand.size).reshape(operand.shape)
    where = _flat(windows(index, -1, **params), n)
    values = _flat(windows(operand, 0, **params), n)
    out = np.full(operand.size, init_value, operand.dtype)
    if values.size == 0:
        return out.reshape(operand.shape)
    with np.errstate(all="ignore"):
        at = _select_in_windows(closed_computation(select_jaxpr, select_consts), values, where,
                                where >= 0)
        chosen = at >= 0
        out = _scatter_in_order(closed_computation(scatter_jaxpr, scatter_consts), out,
                                at[chosen], source.reshape(-1)[chosen])
    return out.reshape(operand.shape)
