"""Array: the concrete value users see, a backend buffer plus its aval."""
import numpy as np

from . import errors, runtime
from .avals import ShapedArray
from .sequence import LeadingAxis


class Array(LeadingAxis):
    """A concrete array held by a backend. Operators and methods are installed by
    api/array_methods (shared with Tracer), so this class holds only what is concrete."""

    __slots__ = ("aval", "_buf", "_backend", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, aval, buf, backend):
        self.aval = aval
        self._buf = buf
        self._backend = backend

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _value(self):
        return self._backend.to_numpy(self._buf, self.aval)

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
            raise ValueError(f"The truth value of an array with {self.size} elements is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __index__(self):
        if self.ndim or self.dtype.kind not in "iu":
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index, "
                            f"got {self.aval.str_short()}")
        return int(self._value())

    __hash__ = None

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def block_until_ready(self):
        self._backend.block_until_ready(self._buf)
        return self

    def copy_to_host_async(self):
        pass

    def to_concrete_value(self):
        return self

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self):
        return True

    @property
    def sharding(self):
        return self._backend.sharding_of(self._buf, self.aval)

    def devices(self):
        return set(self.sharding.device_set)

    @property
    def addressable_shards(self):
        return self._backend.shards(self._buf, self.aval)

    global_shards = addressable_shards

    def __repr__(self):
        value = self._value()
        if value.dtype.kind == "V":  # float0
            return f"Array({value!r})"
        prefix = "Array("
        body = np.array2string(value, separator=", ", prefix=prefix)
        dtype = f"dtype={self.dtype.name}"
        if self.weak_type:
            dtype += ", weak_type=True"
        last = (prefix + body).rsplit("\n", 1)[-1]
        sep = "\n" + " " * len(prefix) if len(last) + len(dtype) + 3 > 80 else " "
        return f"{prefix}{body},{sep}{dtype})"

    def __str__(self):
        return str(self._value())

    def __format__(self, spec):
        return format(self._value(), spec) if self.ndim == 0 else str(self)

    def __reduce__(self):
        return (_rebuild, (self._value(), self.weak_type))

    def __dlpack__(self, *args, **kwargs):
        return self._value().__dlpack__(*args, **kwargs)


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
