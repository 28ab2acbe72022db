"""Bit-level and type primitives: bitcast_convert_type, population_count, clz, mulhi and
complex, with their rules and the lax functions binding them."""
import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..transforms import ad
from ..transforms.ad import Zero, deflinear, defnondiff
from ..transforms.batching import defvectorized
from .elementwise import (_INT, _binop_abstract_eval, _lax_binary, _lax_unary, _zero_jvp, binop,
                          imag, neg, real, unop)

population_count_p = unop("population_count", _INT)
population_count = _lax_unary(population_count_p)
clz_p = unop("clz", _INT)
clz = _lax_unary(clz_p)
mulhi_p = binop("mulhi", _INT)
mulhi = _lax_binary(mulhi_p)
for _p in (population_count_p, clz_p, mulhi_p):
    defnondiff(_p)


# ---------------------------------------------------------------- bitcast_convert_type

bitcast_convert_type_p = make_primitive("bitcast_convert_type")


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x, *, new_dtype):
    """Same width: same shape; to a narrower type a trailing dimension of the width ratio is
    added, to a wider one the trailing dimension (of that ratio) is dropped, as in JAX."""
    old, new = np.dtype(x.dtype), np.dtype(new_dtype)
    if old != new and (dtypes.kind(old) in "bc" or dtypes.kind(new) in "bc"):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless "
                        f"the operand and destination types match. Got operand dtype={old.name}, "
                        f"new_dtype={new.name}.")
    return ShapedArray(_bitcast_shape(x.shape, old, new), new, weak_type=False)


def _bitcast_shape(shape, old, new):
    if old.itemsize == new.itemsize:
        return tuple(shape)
    if old.itemsize > new.itemsize:
        return tuple(shape) + (old.itemsize // new.itemsize,)
    ratio = new.itemsize // old.itemsize
    if not shape or shape[-1] != ratio:
        raise ValueError(f"bitcast_convert_type: attempting to convert array of shape {shape} "
                         f"from {old.name} of size {8 * old.itemsize} bits to {new.name} of size "
                         f"{8 * new.itemsize} bits, but the last dimension must be {ratio} "
                         f"({ratio} * {8 * old.itemsize} = {8 * new.itemsize}).")
    return tuple(shape[:-1])


def bitcast_convert_type(operand, new_dtype):
    """The bits of `operand` reinterpreted as `new_dtype` (lax.bitcast_convert_type)."""
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


_zero_jvp(bitcast_convert_type_p)
defvectorized(bitcast_convert_type_p)


# ---------------------------------------------------------------- complex

complex_p = make_primitive("complex")


@complex_p.def_abstract_eval
def _complex_abstract_eval(x, y):
    for i, a in enumerate((x, y)):
        if a.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"complex does not accept dtype {a.dtype.name} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of float32, float64.")
    out = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}[x.dtype]
    return _binop_abstract_eval("complex", "f")(x, y).update(dtype=np.dtype(out))


def complex(x, y):
    """x + i y elementwise, for float32 or float64 operands (lax.complex)."""
    return complex_p.bind(x, y)


def _complex_transpose(ct, x, y):
    """Under the bilinear pairing Re(sum(a b)): d/dx is Re(ct), d/dy is -Im(ct), as JAX."""
    if type(ct) is Zero:
        return [Zero(a.aval) if ad.is_undefined_primal(a) else None for a in (x, y)]
    return [real(ct) if ad.is_undefined_primal(x) else None,
            imag(neg(ct)) if ad.is_undefined_primal(y) else None]


deflinear(complex_p, _complex_transpose)
defvectorized(complex_p)
complex_p.def_sharding(sp.elementwise)


@bitcast_convert_type_p.def_sharding
def _bitcast_sharding(in_specs, in_avals, out_avals, **params):
    """The operand's layout; an added trailing dimension is unsharded."""
    ndim = out_avals[0].ndim
    return [(tuple(in_specs[0]) + (None,))[:ndim]]
