"""Mutable array references: new_ref, get, swap, addupdate, freeze, empty_ref and free_ref,
with their rules, and the functions of jax.ref binding them (JAX's state primitives)."""
from ..avals import ShapedArray
from ..jaxpr import DropVar, Literal, pp_literal, pp_eqn_rules
from ..primitive import make_primitive
from ..sharding_propagation import ref_writes
from ..state import (REF_PRIMITIVES, AbstractRef, IntArray, Ref, indexed_shape, is_int_entry,
                     is_ref, make_indexer, pp_indexer)
from ..trace import get_aval
from .. import dtypes
from ..transforms.ad import (JVP_OF_ZEROS, Zero, bind_tangent, instantiate,
                             is_undefined_primal, zeros_like_aval)
from ..transforms.batching import BATCH_OF_UNBATCHED, bdim_at_front
from .elementwise import convert_element_type

new_ref_p = make_primitive("new_ref")
empty_ref_p = make_primitive("empty_ref")
get_p = make_primitive("get")
swap_p = make_primitive("swap")
addupdate_p = make_primitive("addupdate", multiple_results=True)
freeze_p = make_primitive("freeze")
free_ref_p = make_primitive("free_ref", multiple_results=True)
REF_PRIMITIVES.update((new_ref_p, empty_ref_p, get_p, swap_p, addupdate_p, freeze_p, free_ref_p))


# ---------------------------------------------------------------- abstract evaluation

def _check_ref(name, aval):
    if not isinstance(aval, AbstractRef):
        raise TypeError(f"`{name}` must be called on a Ref (a mutable array reference made by "
                        f"jax.new_ref); got a value of type {aval.str_short(short_dtypes=False)}")


def _check_indices(name, idx_avals, indexer):
    """Each operand an integer scalar or array of the shape its indexer entry says."""
    shapes = [() if e is None else e.shape for e in indexer or () if is_int_entry(e)]
    for a, shape in zip(idx_avals, shapes, strict=True):
        if tuple(a.shape) != shape or a.dtype.kind not in "iu":
            raise TypeError(f"`{name}`: reference indices must be integer scalars or arrays "
                            f"of the indexer's shapes ({shape}); got "
                            f"{a.str_short(short_dtypes=False)}")


def _indexed(name, ref_aval, idx_avals, indexer):
    """The type of ref[indexer], the operands checked."""
    _check_ref(name, ref_aval)
    _check_indices(name, idx_avals, indexer)
    return ShapedArray(indexed_shape(indexer, ref_aval.shape), ref_aval.dtype, ref_aval.weak_type)


def _check_value(name, ref_aval, expected, val_aval, indexer):
    if isinstance(val_aval, AbstractRef):
        raise TypeError(f"`{name}`: a Ref cannot be stored in a Ref (got a value of type "
                        f"{val_aval})")
    if expected.shape != val_aval.shape:
        raise ValueError(f"Invalid shape for `{name}`. Ref shape: {ref_aval.shape}. Expected "
                         f"shape: {expected.shape}. Value shape: {val_aval.shape}. Indexer: "
                         f"{_str_indexer(indexer, ref_aval.shape)}. ")
    if expected.dtype != val_aval.dtype:
        raise ValueError(f"Invalid dtype for `{name}`. Ref dtype: {ref_aval.dtype}. Value "
                         f"dtype: {val_aval.dtype}. ")


def _str_indexer(indexer, shape):
    n = 0 if indexer is None else sum(map(is_int_entry, indexer))
    return pp_indexer(indexer, shape, ["i"] * n, str)


@new_ref_p.def_abstract_eval
def _new_ref_abstract_eval(aval, *, kind, memory_space):
    if isinstance(aval, AbstractRef):
        # JAX fails here with a bare AssertionError
        raise TypeError(f"new_ref: the initial value must be an array, not a Ref (got {aval})")
    return AbstractRef.of(aval)


@empty_ref_p.def_abstract_eval
def _empty_ref_abstract_eval(*, ty, memory_space):
    return AbstractRef.of(ty)


@get_p.def_abstract_eval
def _get_abstract_eval(ref_aval, *idx_avals, indexer):
    return _indexed("get", ref_aval, idx_avals, indexer)


@swap_p.def_abstract_eval
def _swap_abstract_eval(ref_aval, val_aval, *idx_avals, indexer):
    expected = _indexed("swap", ref_aval, idx_avals, indexer)
    _check_value("swap", ref_aval, expected, val_aval, indexer)
    return expected


@addupdate_p.def_abstract_eval
def _addupdate_abstract_eval(ref_aval, val_aval, *idx_avals, indexer):
    expected = _indexed("addupdate", ref_aval, idx_avals, indexer)
    if ref_aval.dtype == bool:  # JAX's addition refuses booleans
        raise TypeError("addupdate does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    _check_value("addupdate", ref_aval, expected, val_aval, indexer)
    return []


@freeze_p.def_abstract_eval
def _freeze_abstract_eval(ref_aval):
    _check_ref("freeze", ref_aval)
    return ref_aval.inner_aval


@free_ref_p.def_abstract_eval
def _free_ref_abstract_eval(ref_aval):
    _check_ref("free_ref", ref_aval)
    return []


# ---------------------------------------------------------------- printing, as JAX's

def _pp_operand(context):
    def pp(v):
        return str(pp_literal(v).split(":")[0]) if type(v) is Literal else context.name(v)
    return pp


def _pp_ref(eqn, context, ref, idx):
    return context.name(ref) + pp_indexer(eqn.params["indexer"], ref.aval.shape, idx,
                                          _pp_operand(context))


def _binder(v, context):
    return f"{context.name(v)}:{context.type_of(v)}"


def _pp_get(eqn, context):
    ref, *idx = eqn.invars
    return f"{_binder(eqn.outvars[0], context)} <- {_pp_ref(eqn, context, ref, idx)}"


def _pp_swap(eqn, context):
    """`r[i] <- v` when the old value is unused, else `y:T, r[i] <- r[i], v`."""
    (out,), (ref, val, *idx) = eqn.outvars, eqn.invars
    if isinstance(out, DropVar) or context.var_names.get(out) == "_":
        return f"{_pp_ref(eqn, context, ref, idx)} <- {_pp_value(val, context)}"
    binder = _binder(out, context)
    target = _pp_ref(eqn, context, ref, idx)
    return f"{binder}, {target} <- {target}, {_pp_value(val, context)}"


def _pp_value(v, context):
    return pp_literal(v) if type(v) is Literal else context.name(v)


def _pp_addupdate(eqn, context):
    ref, val, *idx = eqn.invars
    return f"{_pp_ref(eqn, context, ref, idx)} += {_pp_value(val, context)}"


pp_eqn_rules.update({get_p: _pp_get, swap_p: _pp_swap, addupdate_p: _pp_addupdate})
freeze_p.def_pp(lambda eqn, context: [])
free_ref_p.def_pp(lambda eqn, context: [])
empty_ref_p.def_pp(lambda eqn, context: [("memory_space", eqn.params["memory_space"]),
                                         ("ty", eqn.params["ty"])])


# ---------------------------------------------------------------- differentiation

@new_ref_p.def_jvp
def _new_ref_jvp(primals, tangents, **params):
    """The tangent of a new reference is a reference too (of zeros when the value has none),
    so that differentiated values written into it later are followed, as in JAX."""
    (x,), (t,) = primals, tangents
    out = new_ref_p.bind(x, **params)
    if get_aval(out).to_tangent_aval().dtype == dtypes.float0:
        return out, Zero(get_aval(out).to_tangent_aval())
    if type(t) is Zero:
        return out, bind_tangent(new_ref_p, zeros_like_aval(t.aval), **params)
    return out, new_ref_p.bind(t, **params)


@empty_ref_p.def_jvp
def _empty_ref_jvp(primals, tangents, **params):
    out = empty_ref_p.bind(**params)
    tangent_aval = params["ty"].to_tangent_aval()
    if tangent_aval.dtype == dtypes.float0:
        return out, Zero(AbstractRef.of(tangent_aval))
    return out, bind_tangent(empty_ref_p, **dict(params, ty=tangent_aval))


@free_ref_p.def_jvp
def _free_ref_jvp(primals, tangents):
    free_ref_p.bind(*primals)
    if type(tangents[0]) is not Zero:
        free_ref_p.bind(tangents[0])
    return [], []


JVP_OF_ZEROS.update((new_ref_p, empty_ref_p))


@get_p.def_jvp
def _get_jvp(primals, tangents, **params):
    (ref, *idx), ref_t = primals, tangents[0]
    out = get_p.bind(ref, *idx, **params)
    if type(ref_t) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, get_p.bind(ref_t, *idx, **params)


@swap_p.def_jvp
def _swap_jvp(primals, tangents, **params):
    (ref, val, *idx), (ref_t, val_t, *_) = primals, tangents
    out = swap_p.bind(ref, val, *idx, **params)
    if type(ref_t) is Zero and type(val_t) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    if type(ref_t) is Zero:
        raise ValueError(
            "performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {get_aval(ref)}. Move the array "
            "reference to be an argument of the differentiated function?")
    return out, swap_p.bind(ref_t, instantiate(val_t), *idx, **params)


@addupdate_p.def_jvp
def _addupdate_jvp(primals, tangents, **params):
    (ref, val, *idx), (ref_t, val_t, *_) = primals, tangents
    addupdate_p.bind(ref, val, *idx, **params)
    if type(ref_t) is Zero:
        if type(val_t) is not Zero:
            raise ValueError(
                "performing an addupdate operation with a differentiated value on a "
                f"non-differentiated array reference of type {get_aval(ref)}. Move the array "
                "reference to be an argument of the differentiated function?")
        return [], []
    addupdate_p.bind(ref_t, instantiate(val_t), *idx, **params)
    return [], []


@freeze_p.def_jvp
def _freeze_jvp(primals, tangents):
    (ref,), (ref_t,) = primals, tangents
    out = freeze_p.bind(ref)
    return out, Zero(get_aval(out).to_tangent_aval()) if type(ref_t) is Zero \
        else freeze_p.bind(ref_t)


# ---------------------------------------------------------------- transposition
#
# A linear reference reaches these rules as the reference accumulating its cotangent (see
# transforms/transpose.py): reads of it become additions into it and writes swap cotangents
# out of it, as JAX's state transposes.

@new_ref_p.def_transpose
def _new_ref_transpose(ct_ref, x, **params):
    return [None if type(ct_ref) is Zero else freeze(ct_ref)]


empty_ref_p.def_transpose(lambda ct_ref, **params: [])
free_ref_p.def_transpose(lambda cts, ct_ref: [None])


@freeze_p.def_transpose
def _freeze_transpose(ct, ct_ref):
    if type(ct) is not Zero:
        addupdate_p.bind(ct_ref, ct, indexer=None)
    return [None]


@get_p.def_transpose
def _get_transpose(ct, ct_ref, *idx, indexer):
    if type(ct) is not Zero:
        addupdate_p.bind(ct_ref, ct, *idx, indexer=indexer)
    return [None] * (1 + len(idx))


@swap_p.def_transpose
def _swap_transpose(ct, ct_ref, val, *idx, indexer):
    """What was written takes the cotangent the reference held there; the value it replaced
    takes the output's cotangent."""
    ct_val = swap_p.bind(ct_ref, instantiate(ct), *idx, indexer=indexer)
    return [None, ct_val if is_undefined_primal(val) else None] + [None] * len(idx)


@addupdate_p.def_transpose
def _addupdate_transpose(cts, ct_ref, val, *idx, indexer):
    ct_val = get_p.bind(ct_ref, *idx, indexer=indexer)
    return [None, ct_val if is_undefined_primal(val) else None] + [None] * len(idx)


# ---------------------------------------------------------------- batching

@new_ref_p.def_batch
def _new_ref_batch(axis_data, vals, dims, **params):
    return new_ref_p.bind(bdim_at_front(vals[0], dims[0], axis_data.size), **params), 0


@empty_ref_p.def_batch
def _empty_ref_batch(axis_data, vals, dims, *, ty, memory_space):
    """One reference per batch element. (JAX's empty_ref stays unbatched under vmap, so that
    writing a batched value into it fails there.)"""
    batched = ty.update(shape=(axis_data.size,) + ty.shape)
    return empty_ref_p.bind(ty=batched, memory_space=memory_space), 0


@free_ref_p.def_batch
def _free_ref_batch(axis_data, vals, dims):
    return free_ref_p.bind(vals[0]), []


BATCH_OF_UNBATCHED.update((new_ref_p, empty_ref_p))


@freeze_p.def_batch
def _freeze_batch(axis_data, vals, dims):
    return freeze_p.bind(vals[0]), dims[0]


def _batched_indexer(indexer, size):
    """The indexer of a reference batched at 0, from its unbatched one."""
    if indexer is None:
        return None
    return ((0, size, 1),) + indexer


def _unbatched_ref_error(name, ref):
    return ValueError(
        f"performing a {name} operation with vmapped value on an unbatched array "
        f"reference of type {get_aval(ref)}. Move the array reference to be an argument to the "
        "vmapped function?")


def _check_batched_ref(name, ref_dim, idx_dims, indexer):
    arrays = indexer is not None and any(type(e) is IntArray for e in indexer)
    if ref_dim not in (None, 0) or any(d is not None for d in idx_dims) or arrays:
        raise NotImplementedError(
            f"vmap of `{name}`: refjax batches references along their leading axis, indexed "
            "by unbatched integers and slices only (not integer arrays)")


@get_p.def_batch
def _get_batch(axis_data, vals, dims, *, indexer):
    (ref, *idx), (ref_dim, *idx_dims) = vals, dims
    _check_batched_ref("get", ref_dim, idx_dims, indexer)
    return get_p.bind(ref, *idx, indexer=_batched_indexer(indexer, axis_data.size)), 0


def _update_batch(prim, name):
    def batch(axis_data, vals, dims, *, indexer):
        (ref, val, *idx), (ref_dim, val_dim, *idx_dims) = vals, dims
        if ref_dim is None:
            raise _unbatched_ref_error(name, ref)
        _check_batched_ref(name, ref_dim, idx_dims, indexer)
        val = bdim_at_front(val, val_dim, axis_data.size)
        out = prim.bind(ref, val, *idx, indexer=_batched_indexer(indexer, axis_data.size))
        return (out, 0) if prim is swap_p else ([], [])
    prim.def_batch(batch)


_update_batch(swap_p, "set/swap")
_update_batch(addupdate_p, "addupdate")


# ---------------------------------------------------------------- the functions of jax.ref

def new_ref(init_val, *, memory_space=None, kind=None):
    """Create a mutable array reference (`jax.Ref`) holding `init_val` (an array, copied)."""
    return new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def empty_ref(ty, memory_space=None):
    """A reference of type `ty` (a ShapedArray or ShapeDtypeStruct) whose contents are not
    set; it can be staged (under jit), not evaluated, as in JAX."""
    aval = ShapedArray(ty.shape, ty.dtype, getattr(ty, "weak_type", False))
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref):
    """Invalidate a reference (staged; JAX cannot evaluate it eagerly either)."""
    free_ref_p.bind(ref)


def freeze(ref):
    """The final value of the reference, as an immutable array."""
    return freeze_p.bind(ref)


def _index(ref, idx):
    _check_ref_value(ref)
    whole = idx is None or type(idx) is tuple and not idx
    return make_indexer(Ellipsis if whole else idx, ref.shape)


def _check_ref_value(ref):
    if not is_ref(ref):
        _check_ref("ref operation", get_aval(ref))


def get(ref, idx=None):
    """ref[idx]: the value at `idx` (integers, integer arrays, static slices, '...')."""
    indexer, operands = _index(ref, idx)
    return get_p.bind(ref, *operands, indexer=indexer)


def _as_stored(ref, value):
    """JAX's implicit cast of a written value: weakly typed floats (Python floats) and any
    integers take the reference's dtype; anything else is written as it is."""
    aval = get_aval(value)
    if type(aval) is not ShapedArray:
        return value
    floats = dtypes.kind(ref.dtype) == "f" and dtypes.kind(aval.dtype) == "f"
    ints = dtypes.kind(ref.dtype) in "iu" and dtypes.kind(aval.dtype) in "iu"
    if aval.weak_type and floats or ints:
        return convert_element_type(value, ref.dtype, weak_type=False)
    return value


def swap(ref, idx, value, _function_name="ref_swap"):
    """Write `value` at ref[idx] and return the value it replaces."""
    indexer, operands = _index(ref, idx)
    return swap_p.bind(ref, _as_stored(ref, value), *operands, indexer=indexer)


def set(ref, idx, value):  # noqa: A001 - jax.ref.set
    """ref[idx] = value."""
    swap(ref, idx, value)


def addupdate(ref, idx, x):
    """ref[idx] += x as one operation (its transpose is a read, as JAX's). Unlike a write,
    `x` is not cast to the reference's dtype (JAX's ValueError for another dtype)."""
    indexer, operands = _index(ref, idx)
    addupdate_p.bind(ref, x, *operands, indexer=indexer)


def _ref_repr(ref):
    """JAX's: its buffer's repr (with the weak type the writes left it, core/ref_weak.py),
    Array renamed, its rows still aligned under `Array([`."""
    value = freeze(ref)
    if value.weak_type != ref.stored_weak:
        value = convert_element_type(value, value.dtype, weak_type=ref.stored_weak)
    return "Ref" + repr(value)[len("Array"):]


def _install_methods():
    Ref.__getitem__ = get
    Ref.__setitem__ = set
    Ref.__repr__ = _ref_repr
    Ref.__str__ = Ref.__repr__
    Ref.addupdate = lambda self, x, idx=(): addupdate(self, idx, x)
    Ref.sharding = property(lambda self: freeze(self).sharding)


_install_methods()


def _like_the_reference(in_specs, in_avals, out_avals, **_):
    """A reference keeps the layout of the array it was made from (JAX's): reading or
    swapping all of it, or freezing it, gives that layout; a part is replicated."""
    ref, spec = in_avals[0], in_specs[0]
    whole = any(e is not None for e in spec)
    return [spec if whole and tuple(a.shape) == tuple(ref.shape) else (None,) * len(a.shape)
            for a in out_avals]


for _p in (new_ref_p, get_p, swap_p, freeze_p):
    _p.def_sharding(_like_the_reference)


def _writes_all(ref_aval, params):
    """Whether a swap replaces the whole reference (its layout becomes the value's)."""
    indexer = params["indexer"]
    return indexer is None or all(e == (0, d, 1) for e, d in zip(indexer, ref_aval.shape))


ref_writes[swap_p] = _writes_all
