"""jax.lax lowerings of the windowed reductions: JAX's own primitives (exported by jax.lax)
with the same params, a user's computation interpreted with the xla lowerings."""
import jax
import numpy as np
from jax import lax

from ....core.jaxpr import ClosedJaxpr
from ...base import get_backend
from ....core.primitives import elementwise as ew
from ....core.primitives import reductions as red
from ....core.primitives import windowed as wd
from ._common import LOW_FLOATS, computed_whole, convert, pad, rule, whole
from .reductions import jax_computation

_SELECT = {ew.ge_p: lax.ge_p, ew.le_p: lax.le_p}


def _wide(x):
    """Half floats as float32 (sums near numpy_ref's exact ones; selections unchanged)."""
    return convert(x, "float32") if x.dtype in LOW_FLOATS else x


def _monoid_window(prim, identity):
    """JAX's primitive; where a padding is negative the operand is padded and dilated
    beforehand with the identity (XLA aborts on some negative paddings, e.g. with windows of
    one element), which the reduction cannot tell from padding."""
    def lowered(x, *, padding, base_dilation, **params):
        if all(lo >= 0 and hi >= 0 for lo, hi in padding):
            return prim.bind(x, padding=padding, base_dilation=base_dilation, **params)
        n = len(padding)
        x = _prepadded(x, np.asarray(identity(x.dtype), x.dtype), padding, base_dilation)
        return prim.bind(x, padding=((0, 0),) * n, base_dilation=(1,) * n, **params)
    return lowered


def _prepadded(x, value, padding, base_dilation):
    """x padded and dilated with `value` as a window's padding and base dilation would."""
    return pad(x, value, [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)])


_sum = _monoid_window(lax.reduce_window_sum_p, lambda d: 0)


@rule(wd.reduce_window_sum_p)
def _reduce_window_sum(x, **params):
    return convert(_sum(_wide(x), **params), x.dtype)


rule(wd.reduce_window_max_p)(_monoid_window(lax.reduce_window_max_p, red.max_identity))
rule(wd.reduce_window_min_p)(_monoid_window(lax.reduce_window_min_p, red.min_identity))


@rule(wd.select_and_gather_add_p)
def _select_and_gather_add(t, x, *, select_prim, padding, base_dilation, **params):
    """A negative padding pads and dilates the operand with the selection's identity and the
    tangents with zeros beforehand (the padding JAX's own rule selects from), through the
    pad that XLA's partitioner does not abort on."""
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        identity = (red.max_identity if select_prim is ew.ge_p else red.min_identity)(x.dtype)
        x = _prepadded(x, np.asarray(identity, x.dtype), padding, base_dilation)
        t = _prepadded(t, np.zeros((), t.dtype), padding, base_dilation)
        padding, base_dilation = ((0, 0),) * len(padding), (1,) * len(padding)
    return lax.select_and_gather_add_p.bind(t, x, select_prim=_SELECT[select_prim],
                                            padding=padding, base_dilation=base_dilation,
                                            **params)


@rule(wd.select_and_scatter_add_p)
def _select_and_scatter_add(source, operand, **params):
    """Computed whole on a mesh (see _select_and_scatter): max pooling's gradient."""
    return computed_whole(lambda o: _scatter_add(whole(source), o, **params), operand)


def _scatter_add(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    """As JAX on CPU: the operand padded with the selection's identity beforehand (negative
    padding crops), the sums cut back to the operand's extent (zeros where it was cropped).
    A scalar's one window selects it (XLA aborts on rank 0)."""
    if not operand.shape:
        return source
    operand, wide_source = _wide(operand), _wide(source)
    identity = (red.max_identity if select_prim is ew.ge_p else red.min_identity)(operand.dtype)
    padded = pad(operand, identity, [(lo, hi, 0) for lo, hi in padding])
    out = lax.select_and_scatter_add_p.bind(
        wide_source, padded, select_prim=_SELECT[select_prim],
        window_dimensions=window_dimensions, window_strides=window_strides,
        padding=((0, 0),) * len(padding))
    out = pad(out, np.zeros((), out.dtype), [(-lo, -hi, 0) for lo, hi in padding])
    return convert(out, source.dtype)


@rule(wd.reduce_window_p)
def _reduce_window(*args, jaxpr, consts, padding, base_dilation, **params):
    """A negative padding pads and dilates the operands with the initial values beforehand
    (as the window would), through the pad that XLA's partitioner does not abort on."""
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        operands = [_prepadded(x, v, padding, base_dilation) for x, v in zip(operands, inits)]
        padding, base_dilation = ((0, 0),) * len(padding), (1,) * len(padding)
    fn = jax_computation(ClosedJaxpr(jaxpr, consts))
    return list(lax.reduce_window(tuple(operands), tuple(inits), lambda a, b: tuple(fn(a, b)),
                                  padding=padding, base_dilation=base_dilation, **params))


def _jax_scalar_jaxpr(jaxpr, consts, dtype):
    """A refjax computation on two scalars as a JAX ClosedJaxpr (interpreted with the xla
    lowerings), the form JAX's select_and_scatter_p takes."""
    closed = ClosedJaxpr(jaxpr, list(consts))
    scalar = jax.ShapeDtypeStruct((), dtype)
    return jax.make_jaxpr(lambda a, b: get_backend("xla").interpret(closed, [a, b])[0])(
        scalar, scalar)


@rule(wd.select_and_scatter_p)
def _select_and_scatter(operand, source, init_value, **params):
    """JAX's select_and_scatter_p (public in jax.lax; no lax function binds it), computed
    whole on a mesh: XLA's partitioner scatters into an operand split along a window
    dimension wrongly (real JAX's select_and_scatter and select_and_scatter_add give wrong
    values there)."""
    return computed_whole(lambda o: _scatter(o, whole(source), init_value, **params), operand)


def _scatter(operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
             scatter_consts, **params):
    select = _jax_scalar_jaxpr(select_jaxpr, select_consts, operand.dtype)
    scatter = _jax_scalar_jaxpr(scatter_jaxpr, scatter_consts, operand.dtype)
    return lax.select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=select.jaxpr,
        select_consts=tuple(select.consts), scatter_jaxpr=scatter.jaxpr,
        scatter_consts=tuple(scatter.consts), **params)
