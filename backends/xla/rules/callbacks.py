"""XLA rules of pure_callback and io_callback: jax.pure_callback / jax.experimental.io_callback
calling Python with the operands as (xla backend) Arrays when the compiled program runs."""
import jax
import numpy as np
from jax import lax
from jax.experimental import io_callback as _jax_io_callback

from ....core import dtypes
from ....core.primitives import callbacks
from .debugging import _host_arrays
from ._common import rule

# The host returns floating results as their bits (complex ones as (real, imag) pairs):
# XLA spreads a callback's result, made on one device, over a mesh by an all-reduce with
# zeros, which turns -0.0 into +0.0 (real JAX too, whenever jit is given out_shardings).


def _host_call(params):
    def call(*values):
        return [_as_bits(out) for out in callbacks.run(params, _host_arrays(values))]
    return call


def _as_bits(x):
    """A float or complex array as unsigned integers of its (real) width; others as they are."""
    if dtypes.kind(x.dtype) == "c":
        x = np.stack([x.real, x.imag], axis=-1)
    if dtypes.kind(x.dtype) != "f":
        return x
    return x.view(_bits_dtype(x.dtype))


def _bits_dtype(dtype):
    return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


def _part(dtype):
    """The real dtype of a complex one's parts."""
    return np.zeros((), dtype).real.dtype


def _bits_type(aval):
    """The type the host returns for a result of type `aval` (see _as_bits)."""
    if dtypes.kind(aval.dtype) == "c":
        part = _part(aval.dtype)
        return jax.ShapeDtypeStruct((*aval.shape, 2), _bits_dtype(part))
    if dtypes.kind(aval.dtype) == "f":
        return jax.ShapeDtypeStruct(aval.shape, _bits_dtype(aval.dtype))
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)


def _from_bits(bits, aval):
    """A result of type `aval` from what the host returned."""
    if dtypes.kind(aval.dtype) == "c":
        parts = lax.bitcast_convert_type(bits, _part(aval.dtype))
        return lax.complex(parts[..., 0], parts[..., 1])
    if dtypes.kind(aval.dtype) == "f":
        return lax.bitcast_convert_type(bits, aval.dtype)
    return bits


def _results(outs, params):
    return [_from_bits(o, a) for o, a in zip(outs, params["result_avals"])]


def _bits_types(params):
    return [_bits_type(a) for a in params["result_avals"]]


@rule(callbacks.pure_callback_p)
def _pure_callback(*values, **params):
    return _results(jax.pure_callback(_host_call(params), _bits_types(params), *values,
                                      vmap_method="sequential"), params)


@rule(callbacks.io_callback_p)
def _io_callback(*values, **params):
    return _results(_jax_io_callback(_host_call(params), _bits_types(params), *values,
                                     ordered=params["ordered"]), params)
