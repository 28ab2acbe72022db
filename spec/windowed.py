"""Spec entries of the windowed reductions (reduce_window and reduce_window_sum/max/min,
select_and_gather_add, select_and_scatter_add, select_and_scatter), with strategies drawing window dimensions,
strides, paddings and dilations, and the reduction computations the generic ones apply."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, BOOL, COMPLEX, FLOAT, INT, NUM, UNCHECKED, Arg, Invalid, PrimitiveSpec,
                   Signature, all_args, args_at, described, floats, kind, no_args, np_dtype,
                   scaled_tolerance, weak_flag)
from .sorting import OwnDtypeErrors


def dilated(size, dilation):
    return 0 if size == 0 else 1 + dilation * (size - 1)


@st.composite
def window_dim(draw, smooth=False, min_size=0):
    """One dimension of a windowed operation: (size, window, stride, base dilation, window
    dilation, (low, high) padding). smooth: windows holding at least one element and no
    dilation (where max pooling is differentiable in both modes); otherwise paddings may be
    negative (cropping) but not beyond the dilated size, nor for windows of one element
    (XLA aborts on those; refjax's xla rule pads explicitly, as tests/test_windowed.py
    checks against numpy_ref)."""
    size = draw(st.integers(max(min_size, int(smooth)), 4))
    window = draw(st.integers(1, 3))
    stride = draw(st.integers(1, 2))
    if smooth:
        pads = tuple(draw(st.integers(0, window - 1)) for _ in range(2))
        return size, window, stride, 1, 1, pads
    base, wdil = draw(st.sampled_from((1, 1, 2))), draw(st.sampled_from((1, 1, 2)))
    least = 0 if window == 1 else -1
    lo = draw(st.integers(max(least, -dilated(size, base)), 2))
    hi = draw(st.integers(max(least, -dilated(size, base) - lo), 2))
    return size, window, stride, base, wdil, (lo, hi)


@st.composite
def windows(draw, smooth=False, min_rank=0, max_rank=3):
    """(operand shape, window params) of a windowed reduction."""
    dims = draw(st.lists(window_dim(smooth), min_size=min_rank, max_size=max_rank))
    size, window, stride, base, wdil, pads = zip(*dims) if dims else ((),) * 6
    return tuple(size), {"window_dimensions": tuple(window), "window_strides": tuple(stride),
                         "padding": tuple(pads), "base_dilation": tuple(base),
                         "window_dilation": tuple(wdil)}


def window_out_shape(shape, params):
    """The output shape of the windows of an operand of `shape`."""
    out = []
    for i, d in enumerate(shape):
        padded = dilated(d, params["base_dilation"][i]) + sum(params["padding"][i])
        span = dilated(params["window_dimensions"][i], params["window_dilation"][i])
        out.append(max((padded - span) // params["window_strides"][i] + 1, 0))
    return tuple(out)


# Distinct values on a grid: ties are kinks of max/min (the grid step keeps the finite
# differences away from them).
GRID = st.integers(-300, 300).map(lambda k: k / 100)
_SMOOTH = floats(-2.0, 2.0, "float64")
_NEAR_ONE = st.tuples(floats(0.5, 1.5, "float64"), st.booleans()).map(
    lambda p: -p[0] if p[1] else p[0])


def _operand(draw, dtype, shape, diff, elements):
    return Arg(shape, dtype, draw(weak_flag(dtype)), elements if diff else None,
               diff and elements is GRID)


# ---------------------------------------------------------------- reduce_window_sum / max / min

def _window_reducer_signature(elements, smooth):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape, params = draw(windows(smooth and diff))
            return Signature((_operand(draw, dtype, shape, diff, elements),), params)
        return sig()
    return signature


def _params(**changes):
    params = {"window_dimensions": (2,), "window_strides": (1,), "padding": ((0, 0),),
              "base_dilation": (1,), "window_dilation": (1,)}
    params.update(changes)
    return params


_X = np.arange(4, dtype=np.float32)


def window_invalid(args=(_X,), **extra):
    """Malformed windows every windowed reduction rejects (JAX: TypeError, except where
    noted)."""
    return (
        Invalid("a window of the wrong rank", args, _params(window_dimensions=(2, 2), **extra)),
        Invalid("strides of the wrong rank", args, _params(window_strides=(1, 1), **extra)),
        Invalid("an empty window", args, _params(window_dimensions=(0,), **extra)),
        Invalid("a zero stride", args, _params(window_strides=(0,), **extra)),
        Invalid("a zero dilation", args, _params(base_dilation=(0,), **extra)),
        Invalid("padding of the wrong rank (JAX: ValueError from zip)", args,
                _params(padding=((0, 0), (0, 0)), **extra), TypeError, ValueError),
        Invalid("negative padding beyond the operand (JAX: an empty result)", args,
                _params(padding=((-5, 0),), **extra), ValueError, UNCHECKED))


def _lax_window(name):
    def reference(jax, x, **params):
        return getattr(jax.lax, f"{name}_p").bind(x, **params)
    return reference


def window_reducer(name, dtypes, elements, smooth=False, linear=False, **kwargs):
    """The entry of reduce_window_sum / max / min."""
    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="windowed",
        signature=_window_reducer_signature(elements, smooth), reference=_lax_window(name),
        diff_args=all_args, linear_args=all_args if linear else no_args,
        invalid=window_invalid(), **kwargs)


_MAX_NOTES = ("max (min) of each window; padding and dilation holes hold -inf (+inf) or the "
              "integer extreme; JVP: select_and_gather_add; derivative samples have no dilation "
              "and windows holding an element (JAX has no VJP with window dilation)")

_REDUCERS = [
    window_reducer("reduce_window_sum", NUM + COMPLEX, _SMOOTH, linear=True,
                   tol=scaled_tolerance(5),
                   notes="sum of each window; transpose: the cotangent dilated by the strides, "
                         "padded, summed over windows (as JAX)"),
    window_reducer("reduce_window_max", ALL + COMPLEX, GRID, smooth=True, exact=True,
                   notes=_MAX_NOTES),
    window_reducer("reduce_window_min", ALL + COMPLEX, GRID, smooth=True, exact=True,
                   notes=_MAX_NOTES),
]


# ---------------------------------------------------------------- select_and_gather_add

def _select_prim(draw):
    from refjax.core.primitives import elementwise as ew
    return draw(st.sampled_from((ew.ge_p, ew.le_p)))


def _jax_select(jax, params):
    return {**params, "select_prim": {"ge": jax.lax.ge_p, "le": jax.lax.le_p}[
        params["select_prim"].name]}


def _selecting(draw, dtype, shape, params):
    """The operand of a selection and its windows: distinct finite values, so that no two
    elements of a window tie (XLA breaks ties of multi-dimensional windows in an order that
    depends on the padding; refjax in row-major order, which the tests check on rows); bool
    operands, which always tie, get windows along one dimension."""
    if dtype == "bool":
        keep = draw(st.integers(0, max(len(shape) - 1, 0)))
        params = {**params, "window_dimensions": tuple(
            k if i == keep else 1 for i, k in enumerate(params["window_dimensions"]))}
        return Arg(shape, dtype, draw(weak_flag(dtype))), params
    elements = GRID if kind(dtype) == "f" else None
    return Arg(shape, dtype, draw(weak_flag(dtype)), elements, True), params


def _gather_signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape, params = draw(windows(smooth=diff))
        operand, params = _selecting(draw, dtype, shape, params)
        tangents = Arg(shape, dtype, draw(weak_flag(dtype)), _SMOOTH if diff else None)
        return Signature((tangents, operand), {"select_prim": _select_prim(draw), **params})
    return sig()


def _lax_select_op(name):
    def reference(jax, *args, **params):
        return getattr(jax.lax, f"{name}_p").bind(*args, **_jax_select(jax, params))
    return reference


def _select_invalid(name, args, window_params):
    from refjax.core.primitives import elementwise as ew
    f16 = np.ones(4, np.float16)
    return (Invalid("tangents and operand of different dtypes", (f16, args[1]),
                    {"select_prim": ew.ge_p, **window_params}),
            Invalid("a select_prim other than ge / le (JAX: an assertion while lowering)",
                    args, {"select_prim": ew.lt_p, **window_params}, ValueError, UNCHECKED))


SELECT_AND_GATHER_ADD = PrimitiveSpec(
    name="select_and_gather_add", dtypes=FLOAT, family="windowed", signature=_gather_signature,
    reference=_lax_select_op("select_and_gather_add"), exact=True, diff_args=args_at(0),
    linear_args=args_at(0),
    invalid=lambda: _select_invalid("select_and_gather_add", (_X, _X), _params()) + (
        Invalid("tangents of another shape", (_X[:3], _X), {"select_prim": _ge(), **_params()}),),
    jax_dtype_errors={d: UNCHECKED for d in BOOL + INT},
    notes="the tangent at the element each window of the operand selects: a fold from "
          "(-inf, 0) (ge) or (+inf, 0) (le) keeping the accumulator where select_prim(acc, "
          "element), padding and holes skipped, window elements in row-major order (samples "
          "have no ties: XLA on CPU breaks ties of padded multi-dimensional windows in "
          "another order); linear in the tangents (JAX, unlike refjax, accepts bool and fails "
          "on integers with OverflowError)")


def _ge():
    from refjax.core.primitives import elementwise as ew
    return ew.ge_p


# ---------------------------------------------------------------- select_and_scatter_add

def _scatter_signature(dtype, diff):
    """Non-negative padding: JAX's own lowering slices the padding off and fails on a
    negative one (refjax crops); rank 1 at least: XLA aborts on rank 0 (refjax's xla rule
    does not send it there). Both are compared with numpy_ref in the tests."""
    @st.composite
    def sig(draw):
        operand, source, params = _scattering(draw, dtype, diff)
        return Signature((source, operand), {"select_prim": _select_prim(draw), **params})
    return sig()


def _scattering(draw, dtype, smooth_source):
    """(operand, source, window params) of a select-and-scatter sample."""
    shape, params = draw(windows(smooth=True, min_rank=1))
    operand, params = _selecting(draw, dtype, shape, params)
    params = {k: params[k] for k in ("window_dimensions", "window_strides", "padding")}
    out = window_out_shape(shape, {**params, "base_dilation": (1,) * len(shape),
                                   "window_dilation": (1,) * len(shape)})
    source = Arg(out, dtype, draw(weak_flag(dtype)), _SMOOTH if smooth_source else None)
    return operand, source, params


def _scatter_params(**changes):
    return {k: v for k, v in _params(**changes).items()
            if k not in ("base_dilation", "window_dilation")}


SELECT_AND_SCATTER_ADD = PrimitiveSpec(
    name="select_and_scatter_add", dtypes=BOOL + INT + FLOAT, family="windowed",
    signature=_scatter_signature, reference=_lax_select_op("select_and_scatter_add"),
    tol=scaled_tolerance(5), diff_args=args_at(0), linear_args=args_at(0),
    invalid=lambda: (
        Invalid("a source not matching the windows (JAX: a verifier ValueError)",
                (np.ones(4, np.float32), _X), {"select_prim": _ge(), **_scatter_params()},
                ValueError),
        Invalid("source and operand of different dtypes", (np.ones(3, np.int32), _X),
                {"select_prim": _ge(), **_scatter_params()})),
    notes="each source element added at the element of the operand its window selects (the "
          "first, then the next wherever select_prim(selected, next) fails; padding holds "
          "the selection's identity), OR for booleans; linear in the source: the transpose "
          "of select_and_gather_add")


# ---------------------------------------------------------------- reduction computations

def _mul(lax):
    return lambda xs, ys: (lax.mul(xs[0], ys[0]),)


def _max(lax):
    return lambda xs, ys: (lax.max(xs[0], ys[0]),)


def _argmax(lax):
    """(value, index) pairs: the greater value, of ties the smaller index (a monoid, whose
    identity is (lowest value, greatest index))."""
    def fn(xs, ys):
        pick = lax.bitwise_or(lax.gt(xs[0], ys[0]),
                              lax.bitwise_and(lax.eq(xs[0], ys[0]), lax.lt(xs[1], ys[1])))
        return lax.select(pick, xs[0], ys[0]), lax.select(pick, xs[1], ys[1])
    return fn


def _sum_prod(lax):
    return lambda xs, ys: (lax.add(xs[0], ys[0]), lax.mul(xs[1], ys[1]))


class Computation:
    """A reduction computation the generic reductions' samples apply: `build(lax)` gives
    the Python function for refjax's or JAX's lax, `operands(dtype)` the dtypes of its
    operands, `identity(dtype)` its identity, `diff` the values of derivative samples."""

    def __init__(self, name, build, operands, identity, diff):
        import refjax
        self.name, self.build, self.operands = name, build, operands
        self.identity, self.diff = identity, diff
        self.fn = build(refjax.lax)

    def jaxpr(self, dtype):
        """The staged computation (cached by lax.reduce's own cache)."""
        from refjax.core import pytree
        from refjax.core.avals import ShapedArray
        from refjax.core.primitives.reductions import reduction_jaxpr
        avals = tuple(ShapedArray((), np_dtype(d)) for d in self.operands(dtype))
        return reduction_jaxpr("reduce", self.fn, avals, pytree.tree_structure(avals))


def _lowest(dtype):
    from refjax.core.primitives.reductions import max_identity
    return max_identity(np_dtype(dtype)).item()


_FIRST_AND_INT32 = lambda d: (d, "int32")  # noqa: E731
# -0.0 is the identity of float sums (0.0 + -0.0 is 0.0).
COMPUTATIONS = {
    "mul": (_mul, lambda d: (d,), lambda d: (1,), _NEAR_ONE),
    "max": (_max, lambda d: (d,), lambda d: (_lowest(d),), GRID),
    "argmax": (_argmax, _FIRST_AND_INT32, lambda d: (_lowest(d), 2**31 - 1), GRID),
    "sum_prod": (_sum_prod, lambda d: (d, d), lambda d: (-0.0 if kind(d) == "f" else 0, 1),
                 _NEAR_ONE),
}


_BUILT = {}


def computation(name):
    """The Computation called `name` (built on first use: it stages refjax functions)."""
    if name not in _BUILT:
        _BUILT[name] = Computation(name, *COMPUTATIONS[name])
    return _BUILT[name]


def computation_args(draw, comp, dtype, shape, diff):
    """Operands and init values for a computation's samples. The init values are the
    computation's identity: XLA may apply them any number of times (it skips them
    reducing a single element), as lax.reduce's monoid contract allows."""
    kinds = comp.operands(dtype)
    ops = tuple(Arg(shape, d, draw(weak_flag(d)), comp.diff if diff and d == dtype else None,
                    diff and comp.diff is GRID and d == dtype) for d in kinds)
    inits = tuple(Arg((), d, False, st.just(v)) for d, v in zip(kinds, comp.identity(dtype)))
    return ops + inits


def jax_computation(jax, comp_jaxpr):
    """A computation for jax.lax evaluating a refjax jaxpr with JAX."""
    from .transforms import jaxpr_reference
    return lambda xs, ys: tuple(jaxpr_reference(jax, comp_jaxpr, list(xs) + list(ys)))


_GENERIC_NAMES = ("mul", "max", "argmax", "sum_prod")


def generic_computations(dtype):
    """The computations applicable to dtype (max needs an order, bool no product)."""
    return ("max",) if dtype == "bool" else ("mul",) if kind(dtype) == "c" else _GENERIC_NAMES


# ---------------------------------------------------------------- reduce_window (generic)

@described("inexact operands")
def operand_args(sig):
    """The inexact operands (of the first half of the arguments; init values have no
    tangent)."""
    return tuple(i for i in range(len(sig.args) // 2) if kind(sig.args[i].dtype) in "fc")


def _reduce_window_signature(dtype, diff):
    @st.composite
    def sig(draw):
        comp = computation(draw(st.sampled_from(generic_computations(dtype))))
        shape, params = draw(windows(smooth=diff and comp.diff is GRID))
        closed = comp.jaxpr(dtype)
        return Signature(computation_args(draw, comp, dtype, shape, diff),
                         {"jaxpr": closed.jaxpr, "consts": tuple(closed.consts), **params})
    return sig()


def _reduce_window_reference(jax, *args, jaxpr, consts, **params):
    from refjax.core.jaxpr import ClosedJaxpr
    n = len(args) // 2
    fn = jax_computation(jax, ClosedJaxpr(jaxpr, list(consts)))
    return list(jax.lax.reduce_window(tuple(args[:n]), tuple(args[n:]), fn, **params))


def _generic_invalid(name, params):
    """Operands and init values that do not fit the computation."""
    comp = computation("mul")
    closed = comp.jaxpr("float32")
    p = {"jaxpr": closed.jaxpr, "consts": tuple(closed.consts), **params} \
        if name == "reduce_window" else {"computation": comp.fn, "jaxpr": closed, **params}
    one = np.ones((), np.float32)
    return (Invalid("an init value of another dtype", (_X, np.ones((), np.int32)), p),
            Invalid("a non-scalar init value", (_X, np.ones(2, np.float32)), p,
                    TypeError if name == "reduce_window" else ValueError),
            Invalid("a computation of other types than the operands (the reference runs the "
                    "jaxpr with JAX's types; JAX: a verifier ValueError, see the tests)",
                    (_X.astype(np.int32), np.ones((), np.int32)), p, TypeError, UNCHECKED),
            Invalid("operands of different shapes (JAX: a verifier ValueError)",
                    (_X, _X[:3], one, one),
                    {**p, **_two_operand_params(name)}, ValueError))


def _two_operand_params(name):
    comp = computation("sum_prod")
    closed = comp.jaxpr("float32")
    if name == "reduce_window":
        return {"jaxpr": closed.jaxpr, "consts": tuple(closed.consts)}
    return {"computation": comp.fn, "jaxpr": closed}


REDUCE_WINDOW = PrimitiveSpec(
    name="reduce_window", dtypes=ALL + COMPLEX, family="windowed",
    signature=_reduce_window_signature, reference=_reduce_window_reference,
    tol=scaled_tolerance(5), diff_args=operand_args,
    reverse="raises",
    invalid=lambda: _generic_invalid("reduce_window", _params()) + window_invalid(
        (_X, np.ones((), np.float32)), jaxpr=computation("mul").jaxpr("float32").jaxpr,
        consts=()),
    notes="each window folded by the computation (a jaxpr on scalars) from the init values, "
          "in row-major order, padding and holes skipped; samples apply products, maxima, "
          "(value, index) argmax pairs and (sum, product) pairs; forward mode only (as JAX); "
          "batched init values are mapped member by member (JAX: NotImplementedError)")



# ---------------------------------------------------------------- select_and_scatter (generic)

_SAS_JAXPRS = {}


def _sas_jaxpr(name, dtype):
    """The refjax jaxpr of lax.<name> on two scalars of dtype (staged once)."""
    key = (name, dtype)
    if key not in _SAS_JAXPRS:
        import refjax
        from refjax.core.avals import ShapedArray
        from refjax.core.primitives.windowed import _scalar_computation
        _SAS_JAXPRS[key] = _scalar_computation(getattr(refjax.lax, name),
                                               ShapedArray((), np_dtype(dtype)))
    return _SAS_JAXPRS[key]


def _sas_params(select, scatter, dtype, window_params):
    sel, sca = _sas_jaxpr(select, dtype), _sas_jaxpr(scatter, dtype)
    return {"select_jaxpr": sel.jaxpr, "select_consts": tuple(sel.consts),
            "scatter_jaxpr": sca.jaxpr, "scatter_consts": tuple(sca.consts), **window_params}


def _sas_signature(dtype, diff):
    """Samples as select_and_scatter_add's (distinct operand values, non-negative padding,
    rank 1 at least), selecting with ge or le and scattering with add or max from 0."""
    @st.composite
    def sig(draw):
        operand, source, params = _scattering(draw, dtype, kind(dtype) == "f")
        init = Arg((), dtype, False, st.just(0))
        select, scatter = draw(st.sampled_from(("ge", "le"))), draw(st.sampled_from(("add", "max")))
        return Signature((operand, source, init), _sas_params(select, scatter, dtype, params))
    return sig()


def _jax_scalar_jaxpr(jax, jaxpr, consts):
    from refjax.core.jaxpr import ClosedJaxpr
    from .transforms import jaxpr_reference
    closed = ClosedJaxpr(jaxpr, list(consts))
    scalar = jax.ShapeDtypeStruct((), closed.in_avals[0].dtype)
    return jax.make_jaxpr(lambda a, b: jaxpr_reference(jax, closed, [a, b])[0])(scalar, scalar)


def _sas_reference(jax, operand, source, init, *, select_jaxpr, select_consts, scatter_jaxpr,
                   scatter_consts, **params):
    sel = _jax_scalar_jaxpr(jax, select_jaxpr, select_consts)
    sca = _jax_scalar_jaxpr(jax, scatter_jaxpr, scatter_consts)
    return jax.lax.select_and_scatter_p.bind(
        operand, source, init, select_jaxpr=sel.jaxpr, select_consts=tuple(sel.consts),
        scatter_jaxpr=sca.jaxpr, scatter_consts=tuple(sca.consts), **params)


def _sas_invalid():
    window = {"window_dimensions": (2,), "window_strides": (1,), "padding": ((0, 0),)}
    params = _sas_params("ge", "add", "float32", window)
    zero = np.zeros((), np.float32)
    return (
        Invalid("a source not matching the windows (JAX: a verifier ValueError)",
                (_X, np.ones(4, np.float32), zero), params, ValueError),
        Invalid("a source of another dtype (JAX: a verifier ValueError)",
                (_X, np.ones(3, np.int32), zero), params, ValueError),
        Invalid("a window of the wrong rank (JAX: a verifier ValueError)",
                (_X, np.ones(3, np.float32), zero),
                {**params, "window_dimensions": (2, 2), "window_strides": (1, 1),
                 "padding": ((0, 0), (0, 0))}, ValueError),
        Invalid("strides of the wrong rank", (_X, np.ones(3, np.float32), zero),
                {**params, "window_strides": (1, 1)}),
        Invalid("computations of another dtype than the operand (JAX: a verifier ValueError)",
                (_X, np.ones(3, np.float32), zero),
                _sas_params("ge", "add", "int32", window), ValueError))


SELECT_AND_SCATTER = OwnDtypeErrors(
    name="select_and_scatter", dtypes=INT + FLOAT, family="windowed",
    signature=_sas_signature, reference=_sas_reference, exact=True, nondiff="raises",
    invalid=_sas_invalid,
    notes="XLA's SelectAndScatter with a user's select and scatter computations (jaxprs on "
          "two scalars, which decide the dtypes accepted): each window selects its first "
          "element, replaced by each next one where select(selected, next) is false, padding "
          "skipped (a window of padding only "
          "selects nothing); each source value is scattered into the init_value-filled output "
          "at its window's selection, windows in row-major order. No derivative (as JAX); "
          "vmap through a unit window (JAX has no batching rule). JAX reports a source or "
          "dtype mismatch only when lowering, with a verifier ValueError; refjax at trace time")

SPECS = _REDUCERS + [SELECT_AND_GATHER_ADD, SELECT_AND_SCATTER_ADD, REDUCE_WINDOW,
                     SELECT_AND_SCATTER]
