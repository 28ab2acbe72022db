"""pure_callback and io_callback: primitives calling a Python function on the runtime values
of their operands and returning arrays of declared types (jax.pure_callback,
jax.experimental.io_callback), with JAX's rules under vmap and differentiation."""
import re

import numpy as np

from .. import dtypes, errors, pytree
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..transforms.batching import moveaxis
from . import structural as st

pure_callback_p = make_primitive("pure_callback", multiple_results=True)
io_callback_p = make_primitive("io_callback", multiple_results=True)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class FlatCallback:
    """The user's callback over flat operands, unflattened to (args, kwargs) when called (a
    param: hashed by identity; printed as JAX prints its `_FlatCallback`)."""

    def __init__(self, callback_func, in_tree):
        self.callback_func, self.in_tree = callback_func, in_tree

    def __call__(self, *flat_args):
        args, kwargs = pytree.tree_unflatten(self.in_tree, flat_args)
        return pytree.tree_leaves(self.callback_func(*args, **kwargs))

    def __repr__(self):
        func = re.sub(r" at 0x[0-9a-fA-F]+>", " at 0xXXXXXXXXXXXX>", repr(self.callback_func))
        return f"_FlatCallback(callback_func={func}, in_tree={self.in_tree!r})"


def _result_avals(*avals, result_avals, **params):
    return list(result_avals)


def _no_jvp(message):
    def jvp(primals, tangents, **params):
        raise ValueError(message)
    return jvp


pure_callback_p.def_abstract_eval(_result_avals)
io_callback_p.def_abstract_eval(_result_avals)
pure_callback_p.def_sharding(sp.replicated_outputs)
io_callback_p.def_sharding(sp.replicated_outputs)
pure_callback_p.def_jvp(_no_jvp(
    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while "
    "taking gradients. (pure_callback)"))
io_callback_p.def_jvp(_no_jvp("IO callbacks do not support JVP. (io_callback)"))


# ---------------------------------------------------------------- vmap

def _batched_avals(size, result_avals):
    return tuple(ShapedArray((size,) + tuple(a.shape), a.dtype) for a in result_avals)


def _sequential(prim, size, vals, dims, params):
    """One call per batch element, as a scan over the batched operands (JAX's lax.map); the
    unbatched ones are the scan's constants."""
    from .control_flow.loops import scan
    batched = [moveaxis(v, d, 0) for v, d in zip(vals, dims) if d is not None]

    def body(carry, xs):
        xs = iter(xs)
        return carry, prim.bind(*[v if d is None else next(xs) for v, d in zip(vals, dims)],
                                **params)
    unroll = size if params.get("vmap_method") == "sequential_unrolled" else 1
    _, outs = scan(body, (), batched, length=size, unroll=unroll)
    return list(outs), [0] * len(outs)


def _pure_callback_batch(axis_data, vals, dims, *, vmap_method, result_avals, **params):
    size = axis_data.size
    # Under shard_map the body runs once per device, and so does the callback (on the
    # device's block), whatever its vmap_method says about vmap.
    if vmap_method in ("sequential", "sequential_unrolled") or axis_data.per_device:
        return _sequential(pure_callback_p, size, vals, dims,
                           dict(params, vmap_method=vmap_method, result_avals=result_avals))
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method}.")
    front = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    if vmap_method != "legacy_vectorized":
        width = size if vmap_method == "broadcast_all" else 1
        front = [st.broadcast(v, (width,)) if d is None else v for v, d in zip(front, dims)]
    outs = pure_callback_p.bind(*front, vmap_method=vmap_method,
                                result_avals=_batched_avals(size, result_avals), **params)
    return outs, [0] * len(outs)


def _io_callback_batch(axis_data, vals, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, axis_data.size, vals, dims, dict(params, ordered=False))


pure_callback_p.def_batch(_pure_callback_batch)
io_callback_p.def_batch(_io_callback_batch)


# ---------------------------------------------------------------- running the callback

def run(params, arrays):
    """What a backend does: call the callback on the operands (Arrays of that backend) and
    return its results as NumPy arrays, checked against the declared result types (JAX's
    checks and messages; JaxRuntimeError, as JAX raises when the program runs)."""
    outs = params["callback"](*arrays)
    expected = params["result_avals"]
    if len(outs) != len(expected):
        raise errors.JaxRuntimeError(
            f"Mismatched number of outputs from callback. Expected: {len(expected)}, "
            f"Actual: {len(outs)}")
    return [_checked(i, np.asarray(out), aval) for i, (out, aval) in
            enumerate(zip(outs, expected))]


def _checked(i, out, aval):
    out = out.astype(dtypes.canonicalize_dtype(out.dtype), copy=False)
    if out.shape != tuple(aval.shape):
        raise errors.JaxRuntimeError(f"Incorrect output shape for return value #{i}: "
                                     f"Expected: {tuple(aval.shape)}, Actual: {out.shape}")
    if out.dtype != aval.dtype:
        raise errors.JaxRuntimeError(f"Incorrect output dtype for return value #{i}: "
                                     f"Expected: {aval.dtype}, Actual: {out.dtype}")
    return out


# ---------------------------------------------------------------- the API

def _flat_types(result_shape_dtypes):
    """(flat result avals, their tree); 64-bit types are refused without x64, as in JAX."""
    leaves, tree = pytree.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(leaf.shape), dtype))
    return tuple(avals), tree


def _bind(prim, callback, result_shape_dtypes, args, kwargs, **params):
    if not callable(callback):
        raise TypeError(f"{prim.name}: the callback must be callable, got an object of type "
                        f"{type(callback)}")
    flat_args, in_tree = pytree.tree_flatten((args, kwargs))
    avals, out_tree = _flat_types(result_shape_dtypes)
    outs = prim.bind(*flat_args, callback=FlatCallback(callback, in_tree), result_avals=avals,
                     **params)
    return pytree.tree_unflatten(out_tree, outs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call the pure Python function `callback(*args, **kwargs)` on runtime values (under
    jit, when the program runs) and return arrays of the types `result_shape_dtypes` declares
    (a pytree of objects with .shape and .dtype). Under vmap, `vmap_method` says how:
    'sequential' (one call per element), 'expand_dims' / 'broadcast_all' (one call, unbatched
    operands given a leading axis of size 1 / the batch size), 'legacy_vectorized' (one call,
    unbatched operands as they are). Not differentiable: wrap it in custom_jvp."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    return _bind(pure_callback_p, callback, result_shape_dtypes, args, kwargs,
                 sharding=sharding, vmap_method=vmap_method)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Call the impure Python function `callback(*args, **kwargs)` on runtime values and
    return arrays of the declared types; `ordered=True` keeps calls in program order (and
    cannot be vmapped). Never differentiable."""
    return _bind(io_callback_p, callback, result_shape_dtypes, args, kwargs,
                 sharding=sharding, ordered=ordered)
