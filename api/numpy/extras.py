"""NumPy's re-exports in jnp (printing options, abstract scalar types, iterable, array_repr,
save/savez), the narrow ml_dtypes scalar types (float8_*, int4, ...), and array construction
from buffers, files, strings, iterables and DLPack."""
import ml_dtypes
import numpy as np

from ...core import dtypes as _dt
from ...core.sharding import Sharding
from ..out_sharding import place_as
from .promotion import asarray, bool_, _make_scalar_type

get_printoptions, set_printoptions, printoptions = (np.get_printoptions, np.set_printoptions,
                                                    np.printoptions)
array_repr, array_str, iterable, save, savez = (np.array_repr, np.array_str, np.iterable,
                                                np.save, np.savez)
character, flexible, object_ = np.character, np.flexible, np.object_
ComplexWarning = np.exceptions.ComplexWarning
bool = bool_  # noqa: A001  (jnp.bool, as numpy 2's np.bool)

_NARROW = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
           "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
           "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2",
           "uint4")
(float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
 float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, int1, int2, int4,
 uint1, uint2, uint4) = (_make_scalar_type(getattr(ml_dtypes, name)) for name in _NARROW)


def _from_numpy(value):
    return asarray(value, dtype=_dt.canonicalize_dtype(value.dtype))


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-d array of the buffer's bytes interpreted as dtype (a copy)."""
    return _from_numpy(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-d array of the numbers in a text string separated by sep."""
    return _from_numpy(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    """A 1-d array of a file's data (read now: the file is not read again under jit, where
    JAX refuses this function)."""
    return _from_numpy(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


def fromiter(iterable, dtype, count=-1, *, like=None):
    """A 1-d array of an iterable's items (consumed now; JAX refuses this function)."""
    return _from_numpy(np.fromiter(iterable, dtype=dtype, count=count))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from an object with the DLPack interface (copied), committed to `device`
    (one device: a Sharding over several is refused with JAX's ValueError)."""
    if isinstance(device, Sharding) and len(device.device_set) > 1:
        raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, "
                         f"but a Sharding with {len(device.device_set)} devices was provided.")
    out = _from_numpy(np.from_dlpack(x))
    return out if device is None else place_as("from_dlpack", out, device, None)


def load(file, *args, **kwargs):
    """numpy.load, with arrays as jnp arrays (bfloat16 saved by np.save restored)."""
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == "V2":  # NumPy writes bfloat16 as two raw bytes
        out = out.view(_dt.bfloat16)
    return asarray(out)


def einsum_path(subscripts, *operands, optimize="auto"):
    """The contraction order opt_einsum chooses for an einsum, and its report (as JAX's)."""
    import opt_einsum
    if optimize is True:
        optimize = "optimal"
    shapes = [np.shape(op) for op in operands]
    return opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=optimize)
