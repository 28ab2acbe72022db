"""Operators and methods of Array and Tracer (installed onto both, as JAX does), among them
`x.at[idx]`, JAX's functional indexed update (`.get`, `.set`, `.add`, `.multiply`, ...).

As in JAX, `x.at[idx].set/add/subtract/multiply/min/max` is one scatter primitive on x
(scatter, scatter-add, scatter-mul, scatter-min, scatter-max) with the index array and
dimension numbers JAX builds (numpy/index_gather.py); divide and power combine x with
ones_like(x).at[idx].multiply(y). `apply` (a Python function, applied once per occurrence of
an index) compares x's flat positions with the flat targets, found by indexing an iota of x
padded by one slot per dimension (where out-of-bounds indices are sent, so that they are
dropped): an (x.size, n_updates) one-hot mask. `.get` is x[idx] with the gather's mode.
"""
import builtins
import operator
import warnings

import numpy as np

from . import array_methods_more as more
from ..core.array import Array
from ..core.primitive import named
from ..core.sharding import NamedSharding, P
from ..core.sharding_types import is_typed, out_type, spec_of, typed_aval
from ..core.trace import Tracer
from ..core.primitives import state
from ..core.state import is_ref_type
from .numpy.index_gather import gather, index_to_gather
from .numpy.indexing import expand_ellipsis, expand_masks, gather_fill_value, getitem
from .numpy.promotion import (concrete, concrete_value, is_traced, lax_full, lax_select,
                              promote_dtypes)


def _np():
    from . import numpy as jnp
    return jnp


def _swap(fn):
    return lambda self, other: fn(other, self)


def _defer(name):
    """Binary operators return NotImplemented for operand types JAX would not accept."""
    def op(self, other):
        if not _acceptable(other):
            return NotImplemented
        return getattr(_np(), name)(self, other)
    return op


def _rdefer(name):
    def op(self, other):
        if not _acceptable(other):
            return NotImplemented
        return getattr(_np(), name)(other, self)
    return op


def _acceptable(x):
    import numpy as np
    from ..core import dtypes
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or dtypes.is_python_scalar(x)


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def _methods():
    m = {}
    for op, name in _BINOPS.items():
        m[f"__{op}__"] = _defer(name)
        m[f"__r{op}__"] = _rdefer(name)
    for op, name in _COMPARE.items():
        m[f"__{op}__"] = _defer(name)
    m["__neg__"] = lambda self: _np().negative(self)
    m["__pos__"] = lambda self: self
    m["__abs__"] = lambda self: _np().absolute(self)
    m["__invert__"] = lambda self: _np().invert(self)
    m["__getitem__"] = _getitem
    m["__divmod__"] = lambda self, o: (_np().floor_divide(self, o), _np().remainder(self, o))
    m["__round__"] = lambda self, ndigits=None: _np().round(self, ndigits or 0)
    m["T"] = property(lambda self: _np().transpose(self))
    m["mT"] = property(lambda self: _np().swapaxes(self, -1, -2))
    m["real"] = property(lambda self: _np().real(self))
    m["imag"] = property(lambda self: _np().imag(self))
    m["reshape"] = _reshape
    m["astype"] = lambda self, dtype, copy=False, device=None: _np().astype(self, dtype,
                                                                            device=device)
    m["transpose"] = lambda self, *axes: _np().transpose(
        self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else (axes or None))
    m["conj"] = m["conjugate"] = lambda self: _np().conjugate(self)
    m["nbytes"] = property(lambda self: self.size * self.dtype.itemsize)
    m["itemsize"] = property(lambda self: self.dtype.itemsize)
    for name in ("sum", "mean", "prod", "max", "min", "all", "any", "std", "var", "argmax",
                 "argmin", "cumsum", "cumprod", "ravel", "flatten", "squeeze", "swapaxes",
                 "clip", "sort", "argsort", "round", "dot", "nonzero", "repeat", "take",
                 "trace", "diagonal", "ptp", "flatten"):
        m[name] = _method(name)
    m["flatten"] = lambda self, order="C": _np().ravel(self, order)
    m["at"] = property(_at, doc=_IndexUpdateHelper.__doc__)
    m.update(_array_api_methods())
    m.update(more.methods())
    return m


_IMMUTABLE = ("JAX arrays are immutable and do not support in-place item assignment. Instead "
              "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
              "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def _at(self):
    """x.at; of a traced reference (jax.Ref inside jit), JAX's view of a part of it."""
    if is_ref_type(self.aval):
        from .ref_views import ref_at
        return ref_at(self)
    return _IndexUpdateHelper(self)


def _getitem(self, idx):
    """x[idx]; a traced reference (jax.Ref inside jit) reads what it holds."""
    if is_ref_type(self.aval):
        return state.get(self, idx)
    return getitem(self, idx)


def _setitem(self, idx, value):
    if is_ref_type(self.aval):  # a traced reference (jax.Ref inside jit) is written to
        return state.set(self, idx, value)
    raise TypeError(f"'{type(self).__name__}' object does not support item assignment. "
                    + _IMMUTABLE)


def _array_api_methods():
    """The array API's array methods: its namespace, DLPack device, to_device, and
    __setitem__ (refused: arrays are immutable, as JAX's); `device` is core Array's."""
    from .devices import device_put
    return {
        "__array_namespace__": lambda self, /, *, api_version=None: _np(),
        "__dlpack_device__": lambda self: (1, 0),  # kDLCPU, device 0
        "to_device": lambda self, device, /, *, stream=None: device_put(self, device),
        "__setitem__": _setitem,
        "__contains__": _contains,
    }


def _contains(self, query):
    """`query in x`: whether the 1-d array x holds the scalar query (JAX departs from NumPy,
    which accepts any shapes, and so does refjax)."""
    if query is None or isinstance(query, str):
        raise TypeError(f"Array.__contains__: unsupported operand type {type(query)}.")
    query = _np().asarray(query)
    if self.ndim != 1:
        raise ValueError(f"Array.__contains__: search array must be one-dimensional, got "
                         f"arr.shape={self.shape}.")
    if query.ndim != 0:
        raise ValueError(f"Array.__contains__: query value must be a scalar, got "
                         f"query.shape={query.shape}")
    return _np().any(self == query)


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    return named(method, name)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _np().reshape(self, shape, order=order)


def install():
    for cls in (Array, Tracer):
        for name, value in _methods().items():
            setattr(cls, name, value)
    for cls, names in ((Array, more.array_methods()), (Tracer, more.tracer_methods())):
        for name, value in names.items():
            setattr(cls, name, value)
    # Python truthiness of comparisons of concrete arrays goes through Array.__bool__.
    builtins  # keep the import used for readers: builtins are never shadowed here


# ---------------------------------------------------------------- x.at[idx]

_MODES = {None: "promise_in_bounds", "promise_in_bounds": "promise_in_bounds",
          "one_hot": "promise_in_bounds", "clip": "clip", "fill": "fill", "drop": "fill"}


class _IndexUpdateHelper:
    """`x.at[idx]`: functionally pure indexed updates (see `_IndexUpdateRef`).

    `x.at[idx].set(y)` is `x[idx] = y` on a copy; likewise `.add`, `.subtract`, `.multiply`
    (`.mul`), `.divide`, `.power`, `.min`, `.max`, `.apply(ufunc)`, and `.get()` is `x[idx]`.
    Repeated indices accumulate (for `.set`, the last update wins). Out-of-bound indices are
    clamped by `.get()` and dropped by the updates; `mode="clip"` clamps in both, and
    `mode="fill"` (alias `"drop"`) makes `.get()` return `fill_value` (NaN, the integer
    minimum for signed, maximum for unsigned types, True for bool)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


def _update_method(name, op, doc):
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
        # indices_are_sorted and unique_indices are performance hints in JAX; the updates
        # here give the same result without them.
        index = self.index
        return _with_out_sharding(
            lambda x, v: _scatter(x, index, v, op, _mode(mode), wrap_negative_indices,
                                  unique_indices), out_sharding, self.array, values)
    method.__name__, method.__doc__ = name, doc
    return method


class _IndexUpdateRef:
    """`x.at[idx]`: each method returns an updated copy of x, never modifying x. The keyword
    arguments are JAX's: `mode` ('promise_in_bounds' (default), 'clip', 'fill'/'drop'),
    `wrap_negative_indices`, `indices_are_sorted` and `unique_indices` (hints), and
    `fill_value` for get()."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx], with out-of-bound indices clamped (or filled with `fill_value` when
        mode='fill')."""
        index = self.index
        return _with_out_sharding(
            lambda x: _gather(x, index, _mode(mode), fill_value, wrap_negative_indices),
            out_sharding, self.array)

    set = _update_method("set", "set", "Pure equivalent of x[idx] = y (for a repeated "
                                       "index, the last update wins).")
    add = _update_method("add", "add", "Pure equivalent of x[idx] += y (repeated indices "
                                       "accumulate).")
    subtract = _update_method("subtract", "sub", "Pure equivalent of x[idx] -= y.")
    multiply = _update_method("multiply", "mul", "Pure equivalent of x[idx] *= y.")
    mul = multiply
    min = _update_method("min", "min", "Pure equivalent of x[idx] = minimum(x[idx], y).")
    max = _update_method("max", "max", "Pure equivalent of x[idx] = maximum(x[idx], y).")

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
        """Pure equivalent of x[idx] /= y: as in JAX, x / ones_like(x).at[idx].multiply(y),
        so integer x gives a float result."""
        return self._combine_with_ones(_np().true_divide, values, mode, out_sharding,
                                       wrap_negative_indices, unique_indices)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              out_sharding=None, wrap_negative_indices=True):
        """Pure equivalent of x[idx] **= y: as in JAX, x ** ones_like(x).at[idx].multiply(y)."""
        return self._combine_with_ones(_np().power, values, mode, out_sharding,
                                       wrap_negative_indices, unique_indices)

    def _combine_with_ones(self, combine, values, mode, out_sharding, wrap_negative_indices,
                           unique_indices):
        """combine(x, ones_like(x).at[idx].multiply(values)): the indexed elements meet the
        values (repeated indices multiply), the others meet 1."""
        ones = _np().ones_like(self.array).at[self.index].multiply(
            values, mode=mode, out_sharding=out_sharding, unique_indices=unique_indices,
            wrap_negative_indices=wrap_negative_indices)
        return combine(self.array, ones)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """Pure equivalent of ufunc.at(x, idx): func (a scalar function) applied to the
        indexed elements, once per occurrence of a repeated index."""
        if not callable(func):
            raise TypeError(f"x.at[...].apply: func must be a callable (a function of one "
                            f"scalar), got {func!r} of type {type(func).__name__}")
        x = _np().asarray(self.array)
        zero = lax_full((), 0, x.dtype)
        return _scatter(x, self.index, zero, func, _mode(mode), wrap_negative_indices)


def _mode(mode):
    """The out-of-bounds mode by JAX's GatherScatterMode.from_any (an enum member of real
    JAX is accepted by name)."""
    if mode is not None and not isinstance(mode, str) and hasattr(mode, "name"):
        mode = {"FILL_OR_DROP": "fill"}.get(mode.name, mode.name.lower())
    if mode not in _MODES:
        raise ValueError(f'Unknown gather mode "{mode}"')
    return _MODES[mode]


def _with_out_sharding(run, sharding, *args):
    """run(*args), the indexed operation, given `out_sharding=`: on Explicit axes run as JAX
    runs it, with those axes Auto (auto_axes: nothing to type inside) and the result typed
    as `sharding`; on other axes, its result constrained to it."""
    if sharding is None:
        return run(*args)
    typed = out_type(sharding, "at")
    if typed is None:
        from . import lax
        return lax.with_sharding_constraint(run(*args), sharding)
    from .axis_types import auto_axes
    return auto_axes(run, out_sharding=typed, axes=typed.mesh.explicit_axes)(*args)


# ------------------------------------------------ the index: items, normalisation, targets

def _index_items(shape, index):
    """idx as a tuple with one item per dimension of x (and None for new axes): Ellipsis
    expanded, boolean masks replaced by integer arrays; JAX's errors for invalid indices."""
    if isinstance(index, list):
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        "allowed; use `arr[array(seq)]` instead of `arr[seq]`.")
    items = tuple(np.asarray(i) if isinstance(i, list) else i
                  for i in (index if isinstance(index, tuple) else (index,)))
    for item in items:
        _check_item(item)
    return expand_masks(expand_ellipsis(items, len(shape)), shape)


def _check_item(item):
    from ..core import dtypes
    from ..core.trace import get_aval
    if item is None or item is Ellipsis:
        return
    if isinstance(item, slice):
        return _check_slice(item)
    if isinstance(item, str):
        raise TypeError(f"JAX does not support string indexing; got idx={item!r}")
    if isinstance(item, (Array, Tracer, np.ndarray, int, float, complex, np.generic)):
        dtype = get_aval(item).dtype if isinstance(item, (Array, Tracer)) else \
            np.asarray(item).dtype
        if dtype == dtypes.bool_ and np.ndim(item) == 0:
            raise TypeError("refjax does not support scalar boolean indices (x.at[True]); "
                            "use x.at[None] or jnp.where")
        if not (dtypes.is_int(dtype) or dtype == dtypes.bool_):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                            f"{dtype}")
        return
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                     f"integer or boolean arrays are valid indices. Got {item!r}")


def _check_slice(s):
    for part in (s.start, s.stop, s.step):
        if is_traced(part):
            raise IndexError(f"Slice entries must be static integers. Got {s}")
        if part is not None:
            operator.index(part)  # TypeError for floats, as in JAX


def _normalized(items, shape, wrap):
    """Two versions of the items: `clamped`, with integer indices wrapped (negative ones count
    from the end when `wrap`) and clipped into range, and `padded`, with out-of-bounds ones
    sent to the padding slot n of their dimension. Slices become explicit in-range slices,
    which select the same elements of the padded iota as of x."""
    clamped, padded, dim = [], [], 0
    for item in items:
        if item is None or item is Ellipsis:
            clamped.append(item)
            padded.append(item)
            continue
        n = shape[dim]
        dim += 1
        if isinstance(item, slice):
            s = _explicit_slice(item, n)
            clamped.append(s)
            padded.append(s)
        elif is_traced(item):
            clamped.append(_traced_normalize(item, n, wrap, clip=True))
            padded.append(_traced_normalize(item, n, wrap, clip=False))
        else:
            a = np.asarray(concrete_value(item, "")).astype(np.int64)
            a = np.where(a < 0, a + n, a) if wrap else a
            ok = (a >= 0) & (a < n)
            clamped.append(_static(np.clip(a, 0, n - 1) if n else a))
            padded.append(_static(np.where(ok, a, n)))
    return tuple(clamped), tuple(padded)


def _explicit_slice(s, n):
    """s as a slice with non-negative bounds (None for a reversed slice through index 0):
    it selects the same elements of an axis of size n and of that axis padded at the end."""
    r = range(*s.indices(n))
    if not r:
        return slice(0, 0, 1)
    return slice(r.start, r.stop if r.stop >= 0 else None, r.step)


def _static(a):
    """A 0-d index as a Python int (then indexing slices statically)."""
    return int(a) if a.ndim == 0 else a


def _traced_normalize(i, n, wrap, clip):
    jnp = _np()
    i = jnp.astype(i, np.int32)
    if wrap:
        i = jnp.where(jnp.less(i, 0), jnp.add(i, n), i)
    if clip:
        return jnp.clip(i, 0, builtins.max(n - 1, 0))
    return jnp.where(jnp.logical_and(jnp.greater_equal(i, 0), jnp.less(i, n)), i, n)


def _targets(shape, items):
    """The flat position in x of each element x[items] selects (shape: x[items].shape), -1
    where an index is out of bounds; NumPy computes it when every index is concrete."""
    size = int(np.prod(shape, dtype=np.int64))
    iota = np.arange(size, dtype=np.int32).reshape(shape)
    if shape:
        iota = np.pad(iota, [(0, 1)] * len(shape), constant_values=-1)
    if not builtins.any(is_traced(i) for i in items):
        return concrete(np.array(iota[tuple(_concrete_item(i) for i in items)]))
    return getitem(concrete(iota), items)


def _concrete_item(i):
    """An index item as NumPy indexes with it: concrete tracers (under grad) by their value."""
    return concrete_value(i, "") if isinstance(i, Tracer) else i


def _gather(x, index, mode, fill_value, wrap):
    """x.at[index].get(): JAX's gather (fill mode: out-of-bounds windows read fill_value,
    NaN, the dtype's minimum or maximum, or True by default)."""
    x = _np().asarray(x)
    fill = gather_fill_value(x.dtype, fill_value) if mode == "fill" else None
    return gather(x, _index_items(x.shape, index), mode, fill, normalize=wrap)


# ------------------------------------------------ the update: dtypes, then combine

_SCATTERS = {"set": "scatter", "add": "scatter_add", "sub": "scatter_add", "mul": "scatter_mul",
             "min": "scatter_min", "max": "scatter_max"}


def _scatter(x, index, values, op, mode, wrap, unique_indices=False):
    """x updated at x[idx] by `op` ("set", "add", "sub", "mul", "min", "max", or a function
    for apply): the values are broadcast to x[idx]'s shape and combined in the promoted
    dtype of x and values, and the result converted back to x's dtype and weak type (JAX's
    _scatter_update). Out-of-bound updates are dropped (clamped with mode="clip").
    `unique_indices` is passed on by mul, min and max (as in JAX, it lets scatter-mul
    differentiate in the updates)."""
    jnp = _np()
    x = jnp.asarray(x)
    y = _updates_array(x, values)
    _warn_unsafe_cast(y, x)
    items = _index_items(x.shape, index)
    if op in _SCATTERS:
        return _one_scatter(x, items, y, op, mode, wrap, unique_indices)
    clamped, padded = _normalized(items, x.shape, wrap)
    targets = _targets(x.shape, clamped if mode == "clip" else padded)
    if 0 in targets.shape:
        return x
    xp, _ = promote_dtypes(x, y)
    out = jnp.reshape(_apply_one_hot(jnp.ravel(xp), jnp.ravel(targets), op), x.shape)
    return _as_type_of(out, x)


def _as_type_of(out, x):
    from ..core.primitives import elementwise as ew
    return ew.convert_element_type(out, x.dtype, weak_type=x.weak_type)


def _one_scatter(x, items, y, op, mode, wrap, unique_indices):
    """x.at[items] updated by `op` as one scatter on x, staged as JAX's (_scatter_impl): the
    index array first, then the updates promoted, broadcast to x[items]'s shape (before its
    new axes), reversed where slices step backwards; integers and slices alone give sorted,
    unique indices. Out-of-bound updates are dropped (clamped with mode="clip")."""
    from . import lax
    jnp = _np()
    x_type = typed_aval(x)
    plan = index_to_gather(x.shape, items, normalize=wrap, spec=spec_of(x_type))
    if 0 in plan.slice_shape:
        return x
    xp, yp = promote_dtypes(x, y)
    _check_numeric(op, xp.dtype)
    updates = jnp.squeeze(jnp.broadcast_to(yp, plan.slice_shape,
                                           out_sharding=_slice_type(x_type, plan)),
                          plan.newaxis_dims)
    if plan.reversed_dims:
        updates = lax.rev(updates, plan.reversed_dims)
    dn = lax.ScatterDimensionNumbers(update_window_dims=plan.offset_dims,
                                     inserted_window_dims=plan.collapsed_slice_dims,
                                     scatter_dims_to_operand_dims=plan.start_index_map)
    updates = jnp.negative(updates) if op == "sub" else updates
    out = getattr(lax, _SCATTERS[op])(xp, plan.indices, updates, dn,
                                      indices_are_sorted=plan.basic,
                                      unique_indices=plan.basic or bool(unique_indices),
                                      mode="clip" if mode == "clip" else "drop")
    return _as_type_of(out, x)


def _slice_type(x_type, plan):
    """The type x[idx] has on Explicit axes (JAX's slice_sharding): updates are resharded to
    it, so that they meet the operand's layout (None when x is untyped)."""
    if not is_typed(x_type):
        return None
    return NamedSharding(x_type.sharding.mesh, P(*plan.slice_spec))


def _check_numeric(op, dtype):
    if op in ("add", "sub", "mul") and dtype == np.bool_:
        raise TypeError(f"{op} does not accept dtype bool at position 0. Accepted dtypes at "
                        "position 0 are subtypes of integer, floating, complexfloating.")


def _combine(op, x, s):
    """The result at an updated position, from x and the update s that reaches it."""
    from ..core.primitives import elementwise as ew
    if callable(op):
        from ..core.transforms.vmap import vmap
        scalar_op = vmap(lambda v: _np().astype(op(v), x.dtype))  # as on scalars, like JAX
        return _np().reshape(scalar_op(_np().ravel(x)), x.shape)
    return {"set": lambda: s, "add": lambda: ew.add(x, s), "sub": lambda: ew.sub(x, s),
            "mul": lambda: ew.mul(x, s), "min": lambda: ew.min(x, s),
            "max": lambda: ew.max(x, s)}[op]()


def _where(pred, on_true, on_false):
    return lax_select(_np().asarray(pred), on_true, on_false)


def _updates_array(x, values):
    """JAX's rule: a Python int that fits x's integer dtype takes that dtype."""
    from ..core import dtypes
    jnp = _np()
    if type(values) is int and dtypes.is_int(x.dtype):
        info = dtypes.iinfo(x.dtype)
        if info.min <= values <= info.max:
            return jnp.asarray(values, dtype=x.dtype)
    return jnp.asarray(values)


def _warn_unsafe_cast(y, x):
    jnp = _np()
    if jnp.result_type(y, x.dtype) != x.dtype:
        warnings.warn(f"scatter inputs have incompatible types: cannot safely cast value from "
                      f"dtype={y.dtype} to dtype={x.dtype}. In future JAX releases this will "
                      "result in an error.", FutureWarning, stacklevel=4)


def _index_math(targets):
    """The module that computes masks from the targets: NumPy when they are concrete (then
    only the update values go through primitives), refjax.numpy when they are traced. The
    two share the NumPy API used below."""
    jnp = _np()
    if is_traced(targets):
        return jnp, targets
    return np, np.asarray(concrete_value(targets, ""))


def _one_hot(x, targets):
    """(xp, hot) with hot[i, j] true when update j goes to position i of flat x: the
    (x.size, n_updates) mask every update is computed from."""
    xp, t = _index_math(targets)
    return xp, xp.arange(x.shape[0], dtype=np.int32)[:, None] == t[None, :]


def _apply_one_hot(x, targets, func):
    """Flat x with func applied at the flat targets, once per occurrence of a target."""
    xp, hot = _one_hot(x, targets)
    return _apply_repeated(x, xp, hot, func)


def _apply_repeated(x, xp, hot, func):
    """func applied k times at a position hit k times (with traced targets, up to
    n_updates masked rounds)."""
    counts = xp.sum(hot, axis=1, dtype=np.int32)
    rounds = hot.shape[1] if xp is not np else int(counts.max(initial=0))
    for k in range(rounds if x.shape[0] else 0):
        x = _where(counts > k, _combine(func, x, None), x)
    return x
