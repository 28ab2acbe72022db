"""Array and Tracer methods beyond the operators: copy (copy.copy/deepcopy, clone), view,
byteswap, the jnp wrappers (argpartition, choose, compress, searchsorted), and JAX's answers
for the removed or concrete-only names (flat, device_buffer(s), platform,
unsafe_buffer_pointer; a tracer's traceback and pickling), a traced reference's addupdate."""
import numpy as np

from ..core import errors, tracebacks
from .layout import array_format
from .numpy.promotion import _user_dtype as user_dtype


def _np():
    from . import numpy as jnp
    return jnp


def _copy(self):
    """A copy of the array (jnp.copy): a new Array, on the same devices and equally committed,
    sharing no memory with the original."""
    return _np().copy(self)


def _deepcopy(self, memo):
    del memo  # an Array holds no Python objects to copy
    return _np().copy(self)


def _argpartition(self, kth, axis=-1):
    """Indices that partition the array around its kth element (jnp.argpartition)."""
    return _np().argpartition(self, kth, axis=axis)


def _choose(self, choices, out=None, mode="raise"):
    """Elements of `choices` picked by this index array (jnp.choose)."""
    return _np().choose(self, choices, out=out, mode=mode)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    """Slices of this array along `axis` where `condition` holds (jnp.compress)."""
    return _np().compress(condition, self, axis=axis, out=out, size=size,
                          fill_value=fill_value)


def _searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    """Where the values `v` would be inserted into this sorted 1-d array (jnp.searchsorted)."""
    return _np().searchsorted(self, v, side=side, sorter=sorter, method=method)


def _view(self, dtype=None, type=None):
    """The array's bits read as `dtype` (lax.bitcast_convert_type): a different width
    changes the size of the last axis; bool reads as uint8, complex as its (real, imag)
    pairs. `type=` is NumPy's and, as in JAX, unsupported."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = user_dtype(dtype, "view")
    bits_in, bits_out = _bits(self.dtype), _bits(dtype)
    if self.ndim == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return _np().squeeze(_view(_np().expand_dims(self, 0), dtype))
    if (self.shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    return self if self.dtype == dtype else _view_as(self, dtype, bits_in, bits_out)


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _complex(dtype):
    return np.dtype(dtype).kind == "c"


def _view_as(x, dtype, bits_in, bits_out):
    """x's bits as another dtype of a width dividing the last axis (checked by _view)."""
    from . import lax
    jnp = _np()
    if x.dtype == np.bool_:
        return _view(jnp.astype(x, np.uint8), dtype)
    if _complex(x.dtype):
        parts = jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)
        return _view(jnp.reshape(parts, (*x.shape[:-1], 2 * x.shape[-1])), dtype)
    if dtype == np.bool_:
        return jnp.astype(_view(x, np.uint8), np.bool_)
    if _complex(dtype):
        pairs = _view(x, np.finfo(dtype).dtype)
        return lax.complex(pairs[..., 0::2], pairs[..., 1::2])
    if bits_in < bits_out:
        factor = bits_out // bits_in
        return lax.bitcast_convert_type(
            jnp.reshape(x, (*x.shape[:-1], x.shape[-1] // factor, factor)), dtype)
    out = lax.bitcast_convert_type(x, dtype)
    return jnp.reshape(out, (*out.shape[:-2], -1)) if bits_in > bits_out else out


def _byteswap(self):
    """The array with the bytes of each element reversed (little- to big-endian and back);
    as in JAX, the result is never weakly typed."""
    from . import lax
    jnp = _np()
    if _complex(self.dtype):
        return lax.complex(_byteswap(jnp.real(self)), _byteswap(jnp.imag(self)))
    if self.dtype.itemsize == 1:
        return jnp.copy(self)
    swapped = lax.rev(lax.bitcast_convert_type(self, np.uint8), (self.ndim,))
    return lax.bitcast_convert_type(swapped, self.dtype)


def _flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider "
                              "arr.flatten() instead.")


def methods():
    """The methods shared by Array and Tracer, by name."""
    return {"copy": _copy, "__copy__": _copy, "__deepcopy__": _deepcopy,
            "argpartition": _argpartition, "choose": _choose, "compress": _compress,
            "searchsorted": _searchsorted, "view": _view, "byteswap": _byteswap,
            "flat": property(_flat, doc="Not implemented: use flatten() instead.")}


# ------------------------------------------------------------- concrete arrays only

def _deprecated(name, instead):
    def attribute(self):
        raise AttributeError(f"arr.{name} has been deprecated. Use {instead}")
    return property(attribute, doc=f"Removed in JAX: use {instead}.")


def _platform(self):
    """The platform ('cpu') of the devices holding the array (of a deleted array too, whose
    sharding stays readable: JAX's crashes the process)."""
    return next(iter(self.sharding.device_set)).platform


def _unsafe_buffer_pointer(self):
    """The address of the array's buffer: the memory the backend holds the values in (the
    NumPy oracle's own array, XLA's device buffer on CPU), which NumPy views of the array
    share. Only for arrays on one device (JaxRuntimeError otherwise), as in JAX."""
    if self.is_deleted():  # JAX's message, less its typo ("UnsafeBufferPointer(")
        raise errors.JaxRuntimeError(
            "INVALID_ARGUMENT: UnsafeBufferPointer() called on deleted or donated buffer")
    if len(self.sharding.device_set) != 1:
        raise errors.JaxRuntimeError(
            "INVALID_ARGUMENT: UnsafeBufferPointer() is supported only for unsharded arrays.")
    return self._value().ctypes.data


def _clone(self):
    """A new Array with the same value, sharding, committedness and weak type (JAX's may share
    the buffer, which immutability allows; refjax's copies it). A deleted array raises
    RuntimeError, where JAX crashes the process."""
    return _np().copy(self)


def array_methods():
    """The names only concrete arrays have (JAX's ArrayImpl)."""
    return {"clone": _clone, "device_buffer": _deprecated("device_buffer", "arr.addressable_data(0)"),
            "device_buffers": _deprecated(
                "device_buffers", "[x.data for x in arr.addressable_shards]"),
            "platform": _platform, "unsafe_buffer_pointer": _unsafe_buffer_pointer,
            "format": property(array_format, doc=array_format.__doc__),
            "traceback": property(_traceback, doc=_traceback.__doc__)}


def _traceback(self):
    """The Python stack where the array was made, innermost frame first (its frames are
    refjax's where JAX's are its own, then the user's); None once it is deleted, as JAX's."""
    return None if self.is_deleted() else tracebacks.resolve(self._traceback)


def _tracer_unsafe_buffer_pointer(self):
    raise errors.ConcretizationTypeError(
        self, f"The unsafe_buffer_pointer() method was called on {errors.describe(self)}.")


def _tracer_traceback(self):
    raise errors.ConcretizationTypeError(
        self, f"The traceback property was called on {errors.describe(self)}.")


def _tracer_addupdate(self):
    """`ref.addupdate(x, idx=())` of a traced reference (a jax.Ref argument inside jit);
    other tracers have none (JAX's AttributeError)."""
    from ..core.primitives.state import addupdate
    from ..core.state import is_ref_type
    if not is_ref_type(self.aval):
        raise AttributeError(f"{type(self).__name__} has no attribute addupdate")
    return lambda x, idx=(): addupdate(self, idx, x)


def _tracer_reduce(self):
    raise errors.ConcretizationTypeError(
        self, "The error occurred in the __reduce__ method, which may indicate an attempt to "
              "serialize/pickle a traced value.")


def tracer_methods():
    """The concrete-only names a tracer refuses with JAX's ConcretizationTypeError, and
    pickling, refused as JAX refuses it."""
    return {"unsafe_buffer_pointer": _tracer_unsafe_buffer_pointer, "__reduce__": _tracer_reduce,
            "addupdate": property(_tracer_addupdate),
            "traceback": property(_tracer_traceback, doc="Refused: a tracer has no creation "
                                                         "traceback.")}
