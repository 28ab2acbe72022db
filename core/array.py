"""Array: the concrete value users see, a backend buffer plus its aval; BaseArray, the type
users check (refjax.Array), which tracers are instances of too, as with jax.Array."""
import abc
import gc

import numpy as np

from . import dtypes, errors, runtime
from .avals import ShapedArray
from .sequence import LeadingAxis
from .shard import Shard
from . import tracebacks
from .trace import Tracer


class Array(LeadingAxis):
    """A concrete array held by a backend. Operators and methods are installed by
    api/array_methods (shared with Tracer), so this class holds only what is concrete."""

    __slots__ = ("aval", "_buf", "_backend", "_traceback", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, aval, buf, backend):
        self.aval = aval
        self._buf = buf
        self._backend = backend
        self._traceback = tracebacks.record()  # where it is made: jax.Array.traceback

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _value(self):
        return self._backend.to_numpy(self._live_buf(), self.aval)

    def _live_buf(self):
        buf = self._buf
        if type(buf) is DeletedBuffer:
            buf.raise_deleted()
        return buf

    def __array__(self, dtype=None, copy=None):
        """The value as a NumPy array: a read-only view of the Array's own buffer unless a
        copy is asked for (np.array(x)) or a dtype conversion makes one."""
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            if copy is False:
                raise ValueError(f"converting an Array of dtype {value.dtype} to {np.dtype(dtype)} "
                                 "needs a copy, but copy=False was given")
            return value.astype(dtype)
        return value.copy() if copy else value

    def __bool__(self):
        if self.size != 1:
            raise ValueError(errors.ambiguous_truth(self.size))
        return bool(self._value())

    def __int__(self):
        return int(self._scalar_value())

    def __float__(self):
        return float(self._scalar_value())

    def __complex__(self):
        return complex(self._scalar_value())

    def _scalar_value(self):
        if self.ndim:
            raise TypeError(f"Only scalar arrays can be converted to Python scalars; got "
                            f"arr.ndim={self.ndim}")
        return self._value()

    def __index__(self):
        if self.ndim or self.dtype.kind not in "iu":
            raise TypeError(f"Only integer scalar arrays can be converted to a scalar index. "
                            f"(got {self.aval.str_short()})")
        return int(self._value())

    __hash__ = None

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def tobytes(self, order="C"):
        return self._value().tobytes(order)

    def block_until_ready(self):
        if type(self._buf) is DeletedBuffer:
            raise errors.JaxRuntimeError(
                "INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or donated buffer")
        self._backend.block_until_ready(self._buf)
        return self

    def copy_to_host_async(self):
        """Start copying the value to host memory; refjax's buffers are host memory already,
        so this only checks, as JAX does, that the array was not deleted."""
        self._live_buf()

    def delete(self):
        """Free the array's buffers; any later use of its values raises RuntimeError (its
        shape, dtype and sharding stay readable), as in JAX. Deleting twice is allowed."""
        if type(self._buf) is not DeletedBuffer:
            sharding = self.sharding
            self._backend.delete(self._buf)
            self._buf = DeletedBuffer(self.aval, sharding)

    def is_ready(self):
        """Whether the value has been computed (JAX segfaults on a deleted array; refjax raises
        the RuntimeError any other use of it gives)."""
        return self._backend.is_ready(self._live_buf())

    def addressable_data(self, index):
        """The shard of the `index`-th addressable device, as an Array on that device."""
        return self.addressable_shards[index].data

    def is_deleted(self):
        """Whether delete() was called on this array."""
        return type(self._buf) is DeletedBuffer

    @property
    def committed(self):
        """Whether the placement was asked for (device_put to a device or sharding, or
        computed from committed arrays), so that mixing it with other devices is an error."""
        return type(self._buf) is not DeletedBuffer and self._backend.committed(self._buf)

    @property
    def device(self):
        """The one device holding the array, or its sharding when it spans several."""
        sharding = self._backend.sharding_of(self._live_buf(), self.aval)
        devices = sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else sharding

    def on_device_size_in_bytes(self):
        """Bytes the array occupies over all its devices (each device's shard counted)."""
        if type(self._buf) is DeletedBuffer:
            raise errors.JaxRuntimeError(
                "INVALID_ARGUMENT: GetOnDeviceSizeInBytes() called on deleted or donated buffer")
        blocks = self.sharding.devices_indices_map(self.shape).values()
        return self.dtype.itemsize * sum(_block_size(idx, self.shape) for idx in blocks)

    def to_concrete_value(self):
        return self

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    def __iter__(self):
        """Rows, as JAX's: of an array split over several devices, read to the host and put
        each on the default device (uncommitted); otherwise sliced where the array is."""
        sharding = self.sharding if self.shape else None
        if sharding is None or len(sharding.device_set) == 1 or sharding.is_fully_replicated:
            return super().__iter__()
        value = self._value()
        return (runtime.make_array(row, ShapedArray(row.shape, self.dtype), self._backend)
                for row in value)

    @property
    def is_fully_addressable(self):
        return True

    @property
    def sharding(self):
        if type(self._buf) is DeletedBuffer:
            return self._buf.sharding
        return self._backend.sharding_of(self._buf, self.aval)

    def devices(self):
        return set(self.sharding.device_set)

    @property
    def addressable_shards(self):
        """[Shard] of this array, one per device holding a piece (refjax.Shard, as jax.Shard)."""
        committed = self.committed
        return [Shard.of(p, self.aval, committed)
                for p in self._backend.shards(self._live_buf(), self.aval)]

    global_shards = addressable_shards

    def __repr__(self):
        """JAX's repr: NumPy's text of the values (`[]` and the shape when empty), then the
        dtype and weak type, on the last line when it fits in NumPy's line width."""
        dtype = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if self._unreduced():
            return f"Array(shape={self.shape}, {dtype}, sharding={self.sharding})"  # JAX's
        value = self._value()
        if value.dtype == dtypes.float0:
            return f"Array({value!r})"
        prefix, width = "Array(", np.get_printoptions()["linewidth"]
        if value.size == 0:
            body = f"[], shape={value.shape}"
        else:
            body = np.array2string(value, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=width)
        last_line = len(body) - body.rfind("\n") + 1
        # JAX pads with the prefix's width, on the same line, when the dtype would overflow.
        sep = " " * len(prefix) if last_line + len(dtype) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype})"

    def _unreduced(self):
        """Whether each device holds a partial value (an unreduced layout)."""
        return bool(getattr(getattr(self.sharding, "spec", None), "unreduced", None))

    def __str__(self):
        if self._unreduced():
            return repr(self)  # an unreduced array has no value to show (JAX's)
        return str(self._value())

    def __format__(self, spec):
        value = self._value()
        return format(value if self.ndim else value[()], spec)

    def __reduce__(self):
        return (_rebuild, (self._value(), self.weak_type))

    def __dlpack__(self, *args, **kwargs):
        return self._value().__dlpack__(*args, **kwargs)


class DeletedBuffer:
    """What a deleted Array holds instead of its buffer: the sharding (still readable, as in
    JAX) and an error for any attempt to read values, from the API or from a backend."""

    __slots__ = ("aval", "sharding")

    def __init__(self, aval, sharding):
        self.aval, self.sharding = aval, sharding

    def raise_deleted(self):
        raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")

    def __getattr__(self, name):
        self.raise_deleted()


def _block_size(index, shape):
    size = 1
    for s, d in zip(index, shape):
        size *= len(range(*s.indices(d)))
    return size


def live_arrays(backend):
    """The Arrays on `backend` that are alive (referenced) and not deleted."""
    return [x for x in gc.get_objects()
            if type(x) is Array and x._backend is backend and type(x._buf) is not DeletedBuffer]


# Printed as JAX's concrete class is (`type(x)` shows ArrayImpl); refjax's modules call it Array.
Array.__name__ = Array.__qualname__ = "ArrayImpl"


class BaseArray(abc.ABC):
    """The array type of the public API, exported as `refjax.Array` (and `refjax.numpy.ndarray`)
    as jax.Array is: concrete arrays (`ArrayImpl`) and tracers are instances of it, so
    `isinstance(x, jax.Array)` holds inside transformations as it does in JAX, while `type(x)`
    is the concrete or tracer class."""

    __slots__ = ()


BaseArray.__name__ = BaseArray.__qualname__ = "Array"
BaseArray.__module__ = "refjax"
BaseArray.register(Array)
BaseArray.register(Tracer)


def _rebuild(value, weak_type):
    return runtime.make_array(value, ShapedArray(value.shape, value.dtype, weak_type))


def concrete_or_error(x, context):
    """x as a concrete value, or ConcretizationTypeError naming the context."""
    if hasattr(x, "to_concrete_value"):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(x, context)
        return value
    return x
