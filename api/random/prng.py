"""Keys (raw and typed), the threefry2x32 hash, seeds, split, fold_in and raw random bits."""
import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from ...core import dtypes as _dt
from ...core.config import config as _config
from ...core.array import Array
from ...core.pytree import register_pytree_node
from ...core.sequence import LeadingAxis
from ...core.trace import Tracer
from .. import lax
from .. import numpy as jnp

_U32 = np.dtype(np.uint32)
_IMPL_NAME = "threefry2x32"


# ---------------------------------------------------------------- typed keys

class KeyDType:
    """The dtype of typed key arrays (JAX's `key<fry>`): one threefry2x32 key per element."""

    name = "key<fry>"
    itemsize = 8

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType) or (isinstance(other, str) and other == self.name)

    def __hash__(self):
        return hash(self.name)


_KEY_DTYPE = KeyDType()


class PRNGKeyArray(LeadingAxis):
    """An array of typed threefry2x32 keys, backed by uint32 key data of shape (*shape, 2)."""

    __slots__ = ("_base_array",)
    dtype = _KEY_DTYPE
    _kind = "key array"

    def __init__(self, base_array):
        # No validation: pytree unflattening passes tracers (and sometimes placeholders).
        self._base_array = base_array

    shape = property(lambda self: tuple(self._base_array.shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        # A trailing full slice keeps the key-data axis whatever an Ellipsis expands to.
        return PRNGKeyArray(self._base_array[idx + (slice(None),)])

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        return PRNGKeyArray(jnp.reshape(self._base_array, (*shape, 2)))

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(self._base_array == other._base_array, axis=-1)

    def __ne__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.logical_not(self == other)

    __hash__ = None

    def __repr__(self):
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base_array}"


register_pytree_node(PRNGKeyArray, lambda k: ((k._base_array,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


def _check_impl(impl):
    if impl is None or impl == _IMPL_NAME or isinstance(impl, KeyDType):
        return
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". '
                         f'Did you mean one of: "{_IMPL_NAME}"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def key_dtype(impl=None):
    """The dtype of typed keys of `impl` (only threefry2x32 exists in refjax)."""
    _check_impl(impl)
    return _KEY_DTYPE


# ---------------------------------------------------------------- small lax helpers

def _full_like(x, value):
    return lax.full(x.shape, value, x.dtype)


def _u32(x):
    return lax.convert_element_type(x, _U32)


def _is_arraylike(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or _dt.is_python_scalar(x)


# ---------------------------------------------------------------- the threefry2x32 hash

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(x, r):
    return lax.bitwise_or(lax.shift_left(x, _full_like(x, r)),
                          lax.shift_right_logical(x, _full_like(x, 32 - r)))


def _mix(x0, x1, r):
    x0 = lax.add(x0, x1)
    return x0, lax.bitwise_xor(_rotate_left(x1, r), x0)


def _threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 block cipher (20 rounds) of counters (x0, x1) under key (k0, k1).

    k0 and k1 are uint32 scalars; x0 and x1 uint32 arrays of one shape; returns two arrays of
    that shape. This is JAX's `threefry2x32_p`, unrolled into refjax.lax operations."""
    k0, k1 = lax.broadcast(k0, x0.shape), lax.broadcast(k1, x0.shape)
    ks = (k0, k1, lax.bitwise_xor(lax.bitwise_xor(k0, k1), _full_like(k0, 0x1BD11BDA)))
    x0, x1 = lax.add(x0, ks[0]), lax.add(x1, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0, x1 = _mix(x0, x1, r)
        # Key injection: the rotating key schedule plus the round-group counter.
        x0 = lax.add(x0, ks[(i + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 2) % 3]), _full_like(x1, i + 1))
    return x0, x1


def _key_words(data):
    """The two uint32 words of one key's data (shape (2,))."""
    return lax.index_in_dim(data, 0, 0), lax.index_in_dim(data, 1, 0)


def _counters(shape):
    """(hi, lo) uint32 words of the row-major flat index of each element of `shape`.

    JAX's partitionable scheme counts with a 64-bit iota split into two words; refjax arrays
    hold fewer than 2**32 elements, so the high word is always zero."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise NotImplementedError(f"random arrays of 2**32 or more elements (shape {shape})")
    lo = lax.reshape(lax.iota(_U32, size), shape)
    return lax.full(shape, 0, _U32), lo


def _hash_counters(data, shape):
    """threefry_2x32 of every counter of `shape` under one key: JAX's partitionable draw."""
    k0, k1 = _key_words(data)
    hi, lo = _counters(shape)
    return _threefry2x32(k0, k1, hi, lo)


# ---------------------------------------------------------------- key checks

def _check_key_data(data):
    """JAX's checks of raw key data (TypeError for a wrong rank, trailing shape or dtype)."""
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != (2,):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                        f"with (2,) (a threefry2x32 key); got shape={tuple(data.shape)}")
    if data.dtype != _U32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


def _check_key(name, key, allow_batched=False):
    """(key data of shape (*batch, 2), whether `key` was a typed key array)."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base_array, True
    elif _is_arraylike(key) and not isinstance(key, (int, float, complex)):
        data, typed = jnp.asarray(key), False
        _check_key_data(data)
    elif isinstance(key, (bool, int, float, complex)):  # as JAX: no shape, no key
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {key!r}")
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and data.ndim > 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(data.shape[:-1]) if typed else tuple(data.shape)} != (). "
                         "Use jax.vmap for batching.")
    return data, typed


def _return_keys(typed, data):
    return PRNGKeyArray(data) if typed else data


# ---------------------------------------------------------------- seeds and key data

def _seed_words_python(seed):
    """Key data of a Python int seed, computed exactly as JAX does it: the seed becomes an
    int64 (OverflowError outside its range), which without x64 is then truncated to int32."""
    seed = int(np.int64(seed))
    hi = (seed >> 32) & 0xFFFFFFFF if _config.read("jax_enable_x64") else 0
    return jnp.asarray(np.array([hi, seed & 0xFFFFFFFF], _U32))


def _seed_words_array(seed):
    """Key data of an integer array seed: its high and low 32 bits (high = 0 below 64 bits)."""
    if not _dt.is_int(seed.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got a seed of dtype {seed.dtype}")
    if seed.dtype.itemsize == 8:
        hi = _u32(lax.shift_right_logical(seed, _full_like(seed, 32)))
    else:
        hi = lax.full((), 0, _U32)
    return lax.concatenate([lax.broadcast(hi, (1,)), lax.broadcast(_u32(seed), (1,))], 0)


def _seed_data(ctor_name, seed, impl):
    _check_impl(impl)
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int):  # bool included: JAX turns it into np.int64 too
        return _seed_words_python(seed)
    seed = jnp.asarray(seed)
    if seed.ndim:
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{tuple(seed.shape)} != (). Use jax.vmap for batching")
    return _seed_words_array(seed)


def PRNGKey(seed, *, impl=None):
    """A legacy raw key: uint32[2] holding the high and low words of the integer `seed`."""
    return _seed_data("PRNGKey", seed, impl)


def key(seed, *, impl=None, dtype=None):
    """A typed key (a scalar `PRNGKeyArray`) from the integer `seed`; same bits as PRNGKey."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    return PRNGKeyArray(_seed_data("key", seed, impl if dtype is None else dtype))


def key_data(keys):
    """The uint32 data, of shape (*keys.shape, 2), underlying typed (or raw) keys."""
    data, _ = _check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 key data of shape (..., 2) (the inverse of key_data)."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                         "jax.random.wrap_key_data")
    _check_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, PRNGKeyArray) or not _is_arraylike(key_bits_array):
        raise TypeError("wrap_key_data expects a uint32 array of key data, got "
                        f"{type(key_bits_array).__name__}")
    data = jnp.asarray(key_bits_array)
    _check_key_data(data)
    return PRNGKeyArray(data)


def key_impl(keys):
    """The name of the PRNG implementation of `keys`: always 'threefry2x32'."""
    _check_key("key_impl", keys, allow_batched=True)
    return _IMPL_NAME


def clone(key):
    """`key` itself (JAX's clone only matters to its key-reuse checker)."""
    return key


# ---------------------------------------------------------------- split and fold_in

def _canonical_shape(shape, name="shape"):
    """A tuple of non-negative Python ints (an int means a 1-D shape), else TypeError."""
    dims = tuple(shape) if isinstance(shape, (Sequence, np.ndarray)) else (shape,)
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        dims = None
    if dims is None or any(d < 0 for d in dims):
        raise TypeError("Shapes must be 1D sequences of concrete values of non-negative integer "
                        f"type, got {shape!r} as the {name}.")
    return dims


def _split_data(data, shape):
    """Keys of `shape` from one key's data: the two hash words of each counter, stacked."""
    b0, b1 = _hash_counters(data, shape)
    nd = len(shape)
    return lax.concatenate([lax.expand_dims(b0, (nd,)), lax.expand_dims(b1, (nd,))], nd)


def _split2(data):
    keys = _split_data(data, (2,))
    return lax.index_in_dim(keys, 0, 0), lax.index_in_dim(keys, 1, 0)


def split(key, num=2):
    """`num` new keys (or an array of keys of shape `num` when it is a tuple) from `key`."""
    data, typed = _check_key("split", key)
    shape = _canonical_shape(num if isinstance(num, Sequence) else (num,), "num")
    return _return_keys(typed, _split_data(data, shape))


def _fold_in_message(data):
    # As in JAX, a Python scalar becomes uint32 directly (OverflowError outside its range).
    data = jnp.asarray(data, _U32) if _dt.is_python_scalar(data) else jnp.asarray(data)
    if data.ndim:
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{tuple(data.shape)} != (). Use jax.vmap for batching.")
    return _u32(data)


def fold_in(key, data):
    """A new key derived from `key` and the 32-bit integer `data`.

    As in JAX, this hashes the single counter (0, data): the 64-bit seed of `data`."""
    kdata, typed = _check_key("fold_in", key)
    msg = lax.broadcast(_fold_in_message(data), (1,))
    k0, k1 = _key_words(kdata)
    b0, b1 = _threefry2x32(k0, k1, lax.full((1,), 0, _U32), msg)
    return _return_keys(typed, lax.concatenate([b0, b1], 0))


# ---------------------------------------------------------------- bits

def _uint_dtype(nbits):
    return np.dtype(f"uint{nbits}")


def _random_bits(data, bit_width, shape):
    """Uniform random unsigned integers of `bit_width` bits: JAX's partitionable scheme (the xor
    of the two hash words, truncated to 8 or 16 bits; or both words side by side for 64)."""
    b0, b1 = _hash_counters(data, shape)
    if bit_width == 64:
        u64 = _uint_dtype(64)
        hi = lax.convert_element_type(b0, u64)
        hi = lax.shift_left(hi, lax.full(shape, 32, u64))
        return lax.bitwise_or(hi, lax.convert_element_type(b1, u64))
    out = lax.bitwise_xor(b0, b1)
    return out if bit_width == 32 else lax.convert_element_type(out, _uint_dtype(bit_width))


def _canonical_dtype(name, dtype, default, stacklevel=3):
    """The dtype JAX would use: `default` when None, 64-bit types narrowed without x64."""
    requested = np.dtype(default if dtype is None else dtype)
    out = _dt.canonicalize_dtype(requested)
    if dtype is not None and out != requested:
        warnings.warn(f"Explicitly requested dtype {requested} requested in {name} is not "
                      f"available, and will be truncated to dtype {out}. To enable more dtypes, "
                      "set the jax_enable_x64 configuration option.", UserWarning,
                      stacklevel=stacklevel)
    return out


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint64 by default under x64, else uint32)."""
    data, _ = _check_key("bits", key)
    dtype = _canonical_dtype("bits", dtype, np.uint64)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(data, dtype.itemsize * 8, _canonical_shape(shape))
