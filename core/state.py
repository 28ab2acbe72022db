"""Mutable array references: their type (AbstractRef), the concrete Ref, and indexers."""
import dataclasses
import operator

import numpy as np

from .array import Array
from .avals import ShapedArray
from .trace import Tracer


class AbstractRef(ShapedArray):
    """The type of a mutable array reference, `Ref{float32[3]}`: the shape and dtype of the
    array it holds (its `inner_aval`)."""

    __slots__ = ()

    @property
    def inner_aval(self):
        """The type of the array the reference holds."""
        return ShapedArray(self.shape, self.dtype, self.weak_type, self.sharding, self.vma)

    def update(self, **changes):
        return AbstractRef.of(self.inner_aval.update(**changes))

    @staticmethod
    def of(aval):
        """The reference type holding arrays of type `aval`."""
        return AbstractRef(aval.shape, aval.dtype, aval.weak_type, aval.sharding, aval.vma)

    def to_tangent_aval(self):
        return AbstractRef.of(self.inner_aval.to_tangent_aval())

    def _key(self):
        return ("Ref",) + super()._key()

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and self._key() == other._key()

    __hash__ = ShapedArray.__hash__

    def str_short(self, short_dtypes=True):
        return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __repr__(self):
        return f"Ref{{{self.inner_aval.str_short(short_dtypes=False)}}}"

    __str__ = __repr__


def is_ref_type(aval):
    return isinstance(aval, AbstractRef)


class Ref:
    """A concrete mutable array reference (`jax.Ref`): a backend box holding an immutable
    array, which `r[idx]` reads and `r[idx] = v` replaces. Methods are installed by
    core/primitives/state.py (they bind its primitives)."""

    # Array.__init__'s, and the weak type of the array held (core/ref_weak.py: JAX prints it)
    __slots__ = ("aval", "_buf", "_backend", "_traceback", "__weakref__", "_stored_weak")

    __init__ = Array.__init__
    # what an Array reads from its type
    shape, dtype, ndim, size, weak_type = (Array.shape, Array.dtype, Array.ndim, Array.size,
                                           Array.weak_type)

    def __len__(self):
        return len(self.aval)

    __hash__ = object.__hash__

    @property
    def stored_weak(self):
        """Whether the array the reference holds is weakly typed: as made until a write
        changes it (what JAX prints; reading it gives the reference's type)."""
        try:
            return self._stored_weak
        except AttributeError:
            return self.aval.weak_type

    @stored_weak.setter
    def stored_weak(self, weak):
        self._stored_weak = weak

    @property
    def committed(self):
        """True: a reference stays where it was made, as JAX's (writes to it do not move it;
        values on other devices are refused)."""
        return True

    @property
    def at(self):
        """Refused, as by JAX (whose bare NotImplementedError says nothing): index the
        reference itself."""
        raise NotImplementedError(
            f"`Ref.at` is not implemented for a concrete reference of type {self.aval}: read "
            "`ref[idx]` and write `ref[idx] = value` instead")


def is_ref(x):
    """Whether x is a reference: a concrete Ref or a traced value of a Ref type."""
    return type(x) is Ref or (isinstance(x, Tracer) and is_ref_type(x.aval))


# ---------------------------------------------------------------- indexers
#
# An indexer is None (the whole array, printed `[...]`) or one entry per dimension of the
# referenced array: (start, size, stride) for a static slice, None for an integer index,
# IntArray(shape) for an integer-array index; the values of integer and integer-array indices
# are operands of the primitive (literals when static), as JAX's NDIndexer.

@dataclasses.dataclass(frozen=True)
class IntArray:
    """An indexer entry: an integer-array index of this shape (advanced indexing, as NumPy's
    and JAX's: the index arrays broadcast together)."""
    shape: tuple


def is_int_entry(entry):
    """Whether an indexer entry takes an operand (an integer or an integer array)."""
    return entry is None or type(entry) is IntArray


def make_indexer(idx, shape):
    """(indexer, integer operands) for `ref[idx]` on an array of `shape`."""
    if idx is Ellipsis or (type(idx) is tuple and len(idx) == 1 and idx[0] is Ellipsis):
        return None, []
    items = list(idx) if type(idx) is tuple else [idx]
    items = _expand_ellipsis(items, len(shape))
    if len(items) > len(shape):
        raise ValueError(f"`indices` must not be longer than `shape`: indices={tuple(items)}, "
                         f"shape={tuple(shape)}")
    items += [slice(None)] * (len(shape) - len(items))
    entries, operands = [], []
    for item, dim in zip(items, shape):
        entries.append(_entry(item, dim, operands))
    return tuple(entries), operands


def _expand_ellipsis(items, ndim):
    at = [k for k, i in enumerate(items) if i is Ellipsis]  # (`in` would compare arrays)
    if len(at) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if not at:
        return items
    at = at[0]
    return items[:at] + [slice(None)] * (ndim - len(items) + 1) + items[at + 1:]


def _entry(item, dim, operands):
    if type(item) is slice:
        start, stop, step = (_static(s, "slice") for s in (item.start, item.stop, item.step))
        if step is not None and step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        start, stop, step = slice(start, stop, step).indices(dim)
        if start and start >= dim:  # an empty slice at the end, refused as JAX does
            raise ValueError(f"Out of bound slice: start={start}, dim={dim}.")
        return (start, len(range(start, stop, step)), step)
    if item is None:
        raise IndexError("refjax references take no new axes (None) in an index, as JAX's")
    if _is_integer_scalar(item):
        if not isinstance(item, Tracer) and operator.index(item) >= dim:
            raise ValueError(f"Out of bound indexer: idx={operator.index(item)}, dim={dim}.")
        operands.append(item)
        return None
    if _is_integer_array(item):
        operands.append(item)
        return IntArray(tuple(item.shape))
    kind = getattr(getattr(item, "dtype", None), "kind", "b")
    if kind not in "biu":  # JAX's error for a float array index
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{item.dtype}")
    raise IndexError(f"references take integers, integer arrays, slices and '...' as "
                     f"indices; got {type(item).__name__}")


def _is_integer_array(x):
    dtype = getattr(x, "dtype", None)
    return dtype is not None and getattr(dtype, "kind", None) in "iu" and len(x.shape) > 0


def _static(x, what):
    if x is None:
        return None
    try:
        return operator.index(x)
    except TypeError:
        raise IndexError(f"{what} bounds of a reference index must be static integers; got "
                         f"{x!r}") from None


def _is_integer_scalar(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.shape == () and aval.dtype.kind in "iu"
    try:
        operator.index(x)
    except TypeError:
        return False
    return not isinstance(x, bool)


def indexed_shape(indexer, shape):
    """The shape of `ref[indexer]`: the slices' sizes, with the integer indices' broadcast
    shape where they are (when they are adjacent) or in front (JAX's and NumPy's rule)."""
    if indexer is None:
        return tuple(shape)
    slices = tuple(e[1] for e in indexer if not is_int_entry(e))
    ints = [i for i, e in enumerate(indexer) if is_int_entry(e)]
    int_shape = _broadcast_index_shapes([e.shape for e in indexer if type(e) is IntArray])
    if not ints or ints != list(range(ints[0], ints[-1] + 1)):
        return int_shape + slices
    return slices[:ints[0]] + int_shape + slices[ints[0]:]


def _broadcast_index_shapes(shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:  # JAX's class (its message forgets to format the shapes)
        raise ValueError(f"Cannot broadcast shapes for indexing: {list(shapes)}") from None


def pp_indexer(indexer, shape, operands, pp_operand):
    """`[...]`, `[0]`, `[1:,:2]`... as JAX prints an indexer (a slice as start:start+size)."""
    if indexer is None:
        return "[...]"
    operands = iter(operands)
    parts = [pp_operand(next(operands)) if is_int_entry(e) else _pp_slice(e, dim)
             for e, dim in zip(indexer, shape)]
    return "[" + ",".join(parts) + "]"


def _pp_slice(entry, dim):
    start, size, _ = entry
    end = start + size
    return f"{start or ''}:{'' if end == dim else end}"



# Primitives that take references as operands: the state primitives (added by
# core/primitives/state.py) and higher-order ones (a jaxpr param), which pass them through.
REF_PRIMITIVES = set()


def check_no_refs(prim, in_avals, params):
    """JAX's error for a reference given to a primitive computing on arrays (`jnp.sin(r)`)."""
    for aval in in_avals:
        if type(aval) is AbstractRef and prim not in REF_PRIMITIVES \
                and not _higher_order(params):
            raise ValueError(f"Attempting to pass a Ref {aval} to a primitive: {prim.name} -- "
                             "did you forget to unpack ([...]) the ref?")


def _higher_order(params):
    return any(hasattr(v, "eqns") or hasattr(v, "jaxpr") or
               type(v) is tuple and v and hasattr(v[0], "jaxpr") for v in params.values())


def uses_refs(params):
    """Whether the jaxprs among an equation's params (a loop body, a jitted function) make,
    take or use a reference."""
    from .jaxpr import subjaxprs
    return any(_jaxpr_uses_refs(j) for j in subjaxprs(params.values()))


def _jaxpr_uses_refs(jaxpr):
    if any(is_ref_type(v.aval) for v in (*jaxpr.constvars, *jaxpr.invars)):
        return True
    return any(any(is_ref_type(v.aval) for v in eqn.outvars) or uses_refs(eqn.params)
               for eqn in jaxpr.eqns)
