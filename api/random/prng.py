"""Keys (raw and typed) and PRNG implementations, the threefry2x32 hash, seeds, split, fold_in
and raw random bits."""
import functools
import math
import operator
import threading
import warnings
from collections.abc import Sequence

import numpy as np

from ...core import dtypes as _dt
from ...core import key_reuse as _key_reuse
from ...core.primitives import rng as _rng
from ...core.config import config as _config
from ...core.array import Array
from ...core.pytree import register_pytree_node
from ...core.sequence import LeadingAxis
from ...core.trace import Tracer
from .. import lax
from .. import numpy as jnp

_U32 = np.dtype(np.uint32)


# ---------------------------------------------------------------- implementations

class PRNGImpl:
    """A PRNG implementation (JAX's PRNGImpl): the shape of one key's uint32 data and the
    functions on it. `seed(words)` makes a key from a seed's uint32[2] (high, low) words;
    `split(data, shape)` gives keys of `shape`, `fold_in(data, u32)` one key, and
    `random_bits(data, bit_width, shape)` unsigned bits; `words64(data, shape)` the (high, low)
    uint32 halves of 64 random bits per element."""

    def __init__(self, name, tag, key_shape, **functions):
        self.name, self.tag, self.key_shape = name, tag, tuple(key_shape)
        for field in ("seed", "split", "fold_in", "random_bits", "words64"):
            setattr(self, field, functions[field])
        self.dtype = KeyDType(self)

    def __repr__(self):
        return f"PRNGImpl(name={self.name!r}, tag={self.tag!r}, key_shape={self.key_shape})"


_IMPLS = {}


def register_impl(impl):
    """Make `impl` selectable by name (impl=..., jax_default_prng_impl)."""
    _IMPLS[impl.name] = impl
    return impl


def _named_impl(name):
    if name not in _IMPLS:
        names = ", ".join(f'"{n}"' for n in _IMPLS)
        raise ValueError(f'unrecognized PRNG implementation "{name}". Did you mean one of: '
                         f'{names}?')
    return _IMPLS[name]


def resolve_impl(impl=None):
    """The PRNGImpl `impl` names (a name, a PRNGImpl or a key dtype), the default one
    (jax_default_prng_impl) for None."""
    if impl is None:
        return _named_impl(_config.read("jax_default_prng_impl"))
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, KeyDType):
        return impl.impl
    if isinstance(impl, str):
        return _named_impl(impl)
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


# ---------------------------------------------------------------- typed keys

class KeyDType:
    """The dtype of typed key arrays of one implementation (JAX's `key<fry>`, `key<rbg>`...)."""

    def __init__(self, impl):
        self.impl = impl
        self.name = f"key<{impl.tag}>"
        self.itemsize = 4 * math.prod(impl.key_shape)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, KeyDType):
            return other.impl is self.impl
        return isinstance(other, str) and other == self.name

    def __hash__(self):
        return hash(self.name)


class PRNGKeyArray(LeadingAxis):
    """An array of typed keys of one implementation, backed by uint32 key data of shape
    (*shape, *impl.key_shape)."""

    __slots__ = ("_base_array", "_impl", "_read")
    _kind = "key array"

    def __init__(self, base_array, impl=None, read=False):
        # No validation: pytree unflattening passes tracers (and sometimes placeholders).
        self._base_array = base_array
        self._impl = _IMPLS["threefry2x32"] if impl is None else impl
        # Keys jax.random has already read (or raw ones): its functions using them inside
        # another one's computation are no use of the caller's key to jax_debug_key_reuse.
        self._read = read

    dtype = property(lambda self: self._impl.dtype)
    shape = property(lambda self: tuple(self._base_array.shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        # A trailing full slice keeps the key-data axis whatever an Ellipsis expands to.
        return PRNGKeyArray(self._base_array[idx + (slice(None),)], self._impl)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        return PRNGKeyArray(jnp.reshape(self._base_array, (*shape, *self._impl.key_shape)),
                            self._impl)

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


def _refusing_operator(fname, reflected=False):
    """An arithmetic operator of key arrays: jnp.`fname`, which refuses key dtypes with JAX's
    TypeError (JAX's key arrays also define these operators, to say so)."""
    def op(self, *other):
        fn = getattr(jnp, fname)
        return fn(*other, self) if reflected else fn(self, *other)
    return op


for _dunder, _fname in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                        ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                        ("mod", "mod"), ("pow", "power"), ("matmul", "matmul")):
    setattr(PRNGKeyArray, f"__{_dunder}__", _refusing_operator(_fname))
    setattr(PRNGKeyArray, f"__r{_dunder}__", _refusing_operator(_fname, reflected=True))
for _dunder, _fname in (("neg", "negative"), ("pos", "positive"), ("abs", "absolute")):
    setattr(PRNGKeyArray, f"__{_dunder}__", _refusing_operator(_fname))


register_pytree_node(PRNGKeyArray, lambda k: ((k._base_array,), k._impl),
                     lambda impl, children: PRNGKeyArray(children[0], impl))


def key_dtype(impl=None):
    """The dtype of typed keys of `impl` (the default implementation's for None)."""
    return resolve_impl(impl).dtype


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
    return lax.index_in_dim(data, 0, 0, keepdims=False), lax.index_in_dim(data, 1, 0, keepdims=False)


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


# ---------------------------------------------------------------- threefry2x32

def _threefry_split(data, shape):
    """Keys of `shape` from one key's data: the two hash words of each counter, stacked."""
    b0, b1 = _hash_counters(data, shape)
    nd = len(shape)
    return lax.concatenate([lax.expand_dims(b0, (nd,)), lax.expand_dims(b1, (nd,))], nd)


def _threefry_fold_in(data, msg):
    """As in JAX, the hash of the single counter (0, msg): the 64-bit seed of `msg`."""
    k0, k1 = _key_words(data)
    b0, b1 = _threefry2x32(k0, k1, lax.full((1,), 0, _U32), lax.broadcast(msg, (1,)))
    return lax.concatenate([b0, b1], 0)


def _uint_dtype(nbits):
    return np.dtype(f"uint{nbits}")


def join_words64(hi, lo):
    """uint64 values hi << 32 | lo of uint32 halves."""
    u64 = _uint_dtype(64)
    wide = lax.shift_left(lax.convert_element_type(hi, u64), lax.full(hi.shape, 32, u64))
    return lax.bitwise_or(wide, lax.convert_element_type(lo, u64))


def _threefry_random_bits(data, bit_width, shape):
    """Uniform random unsigned integers of `bit_width` bits: JAX's partitionable scheme (the xor
    of the two hash words, truncated to 8 or 16 bits; or both words side by side for 64)."""
    b0, b1 = _hash_counters(data, shape)
    if bit_width == 64:
        return join_words64(b0, b1)
    out = lax.bitwise_xor(b0, b1)
    return out if bit_width == 32 else lax.convert_element_type(out, _uint_dtype(bit_width))


# jax_threefry_partitionable=False: JAX's original scheme hashes one flat iota of counters,
# its first half as x0 and second half as x1, and draws a stream of words rather than one
# hash per element.

def _hash_flat(data, count):
    """threefry_2x32 of the uint32 counters 0..count-1 (padded with a zero to an even count):
    the first half hashed as x0 against the second half as x1, the outputs concatenated."""
    half = -(-count // 2)
    counters = lax.iota(_U32, 2 * half) if count == 2 * half else lax.concatenate(
        [lax.iota(_U32, count), lax.full((1,), 0, _U32)], 0)
    k0, k1 = _key_words(data)
    x0, x1 = _threefry2x32(k0, k1, lax.slice_in_dim(counters, 0, half),
                           lax.slice_in_dim(counters, half, 2 * half))
    return lax.slice_in_dim(lax.concatenate([x0, x1], 0), 0, count)


def _original_split(data, shape):
    return lax.reshape(_hash_flat(data, 2 * math.prod(shape)), (*shape, 2))


def _original_words64(data, shape):
    size = math.prod(shape)
    words = _hash_flat(data, 2 * size)
    return (lax.reshape(lax.slice_in_dim(words, 0, size), shape),
            lax.reshape(lax.slice_in_dim(words, size, 2 * size), shape))


def _original_random_bits(data, bit_width, shape):
    """As JAX's: 64-bit values join the two halves of the words; 8/16-bit ones are each word's
    pieces, lowest first, the stream cut to size."""
    if bit_width == 64:
        return join_words64(*_original_words64(data, shape))
    size, pieces = math.prod(shape), 32 // bit_width
    count = -(-size * bit_width // 32)
    if count >= 2 ** 32 - 1:
        raise NotImplementedError(f"random arrays of 2**32 or more words (shape {shape})")
    words = lax.broadcast_in_dim(_hash_flat(data, count), (count, pieces), (0,))
    shifts = lax.mul(lax.broadcasted_iota(_U32, (count, pieces), 1),
                     lax.full((count, pieces), bit_width, _U32))
    flat = lax.reshape(lax.shift_right_logical(words, shifts), (count * pieces,))
    return lax.reshape(lax.convert_element_type(lax.slice_in_dim(flat, 0, size),
                                                _uint_dtype(bit_width)), shape)


def _scheme(partitionable, original):
    """The threefry2x32 function jax_threefry_partitionable selects."""
    def chosen(*args):
        fn = partitionable if _config.read("jax_threefry_partitionable") else original
        return fn(*args)
    return chosen


THREEFRY = register_impl(PRNGImpl(
    "threefry2x32", "fry", (2,), seed=lambda words: words,
    split=_scheme(_threefry_split, _original_split), fold_in=_threefry_fold_in,
    random_bits=_scheme(_threefry_random_bits, _original_random_bits),
    words64=_scheme(_hash_counters, _original_words64)))


# ---------------------------------------------------------------- key checks

def _check_key_data(data, impl):
    """JAX's checks of raw key data (TypeError for a wrong rank, trailing shape or dtype)."""
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                        f"with {impl.key_shape} (a {impl.name} key); got "
                        f"shape={tuple(data.shape)}")
    if data.dtype != _U32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


_LEGACY = ("Legacy uint32 key array passed as key to jax.random function. Please create keys "
           "using jax.random.key(). If use of a raw key array was intended, set "
           'jax_legacy_prng_key="allow".')


def _check_legacy():
    """jax_legacy_prng_key: raw keys passed to jax.random are allowed, warned or refused."""
    mode = _config.read("jax_legacy_prng_key")
    if mode == "warn":
        warnings.warn(_LEGACY, UserWarning, stacklevel=4)
    elif mode == "error":
        raise ValueError(_LEGACY)


def _raw_keys(key):
    """Typed keys of the default implementation over raw key data."""
    if isinstance(key, (bool, int, float, complex)):  # as JAX: no shape, no key
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {key!r}")
    if not _is_arraylike(key):
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    data, impl = jnp.asarray(key), resolve_impl()
    _check_key_data(data, impl)
    return PRNGKeyArray(data, impl, read=True)


def _check_key(name, key, allow_batched=False):
    """(typed keys, whether `key` was typed): raw key data is read as keys of the default
    implementation."""
    typed = isinstance(key, PRNGKeyArray)
    if not typed:
        key = _raw_keys(key)
        if name != "key_data":
            _check_legacy()
    if not allow_batched and key.ndim:
        shape = key.shape if typed else tuple(key._base_array.shape)
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use jax.vmap for batching.")
    if typed and not key._read and name != "key_impl" and _key_reuse.enabled():
        key = _read_once(key, _CONSUMERS.get(name, "jit"))
    return key, typed


# Under jax_debug_key_reuse, what each function reading a typed key does to it, named as JAX
# names the operation consuming it: split and bits bind random_split and random_bits, and so
# does multinomial first (JAX does not jit it); the other samplers are jitted functions; fold_in
# and key_data read the key without consuming it. Raw keys are not checked, as in JAX.
_CONSUMERS = {"split": "random_split", "bits": "random_bits", "multinomial": "random_split",
              "fold_in": None, "key_data": None}


# The typed keys the outermost jax.random function running has read (id -> (key, read key)):
# a sampler built from others (lognormal from normal, ...) passes them its caller's key, which
# JAX's checker sees used once, by the outer function's jit.
_SCOPE = threading.local()


def reading_keys(fn):
    """A public jax.random function, within which each typed key is read (and consumed) once."""
    @functools.wraps(fn)
    def scoped(*args, **kwargs):
        if getattr(_SCOPE, "keys", None) is not None or not _key_reuse.enabled():
            return fn(*args, **kwargs)
        _SCOPE.keys = {}
        try:
            return fn(*args, **kwargs)
        finally:
            _SCOPE.keys = None
    return scoped


def _read_once(key, consumed_by):
    seen = getattr(_SCOPE, "keys", None)
    if seen is None:
        return _unwrapped(key, consumed_by)
    if id(key) not in seen:  # the key is kept with its id, which stays its own meanwhile
        seen[id(key)] = key, _unwrapped(key, consumed_by)
    return seen[id(key)][1]


def _unwrapped(keys, consumed_by=None):
    """keys over their data marked as read (random_unwrap): no longer a key to the check."""
    return PRNGKeyArray(_rng.random_unwrap(keys._base_array, consumed_by), keys._impl,
                        read=True)


def _wrapped(keys):
    """keys marked as fresh typed keys (random_wrap) under jax_debug_key_reuse."""
    if not _key_reuse.enabled():
        return keys
    return PRNGKeyArray(_rng.random_wrap(keys._base_array, keys._impl.tag), keys._impl)


def _return_keys(typed, keys):
    return _wrapped(keys) if typed else keys._base_array


# ---------------------------------------------------------------- seeds and key data

def _seed_words_python(seed):
    """Key data of a Python int seed, computed exactly as JAX does it: the seed becomes an
    int64 (OverflowError outside its range), which without x64 is then truncated to int32."""
    seed = int(np.int64(seed))
    hi = (seed >> 32) & 0xFFFFFFFF if _config.read("jax_enable_x64") else 0
    return jnp.asarray(np.array([hi, seed & 0xFFFFFFFF], _U32))


def seed_words(seed):
    """The uint32[2] (high, low) words of an integer array seed (high = 0 below 64 bits)."""
    if not _dt.is_int(seed.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got a seed of dtype {seed.dtype}")
    if seed.dtype.itemsize == 8:
        hi = _u32(lax.shift_right_logical(seed, _full_like(seed, 32)))
    else:
        hi = lax.full((), 0, _U32)
    return lax.concatenate([lax.broadcast(hi, (1,)), lax.broadcast(_u32(seed), (1,))], 0)


def _seed_keys(ctor_name, seed, impl):
    impl = resolve_impl(impl)
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int):  # bool included: JAX turns it into np.int64 too
        return PRNGKeyArray(impl.seed(_seed_words_python(seed)), impl)
    seed = jnp.asarray(seed)
    if seed.ndim:
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{tuple(seed.shape)} != (). Use jax.vmap for batching")
    return PRNGKeyArray(impl.seed(seed_words(seed)), impl)


def PRNGKey(seed, *, impl=None):
    """A legacy raw key: the uint32 key data of the integer `seed` (uint32[2] for threefry2x32,
    uint32[4] for rbg); a typed key under jax_enable_custom_prng, as in JAX."""
    keys = _seed_keys("PRNGKey", seed, impl)
    return _return_keys(_config.read("jax_enable_custom_prng"), keys)


def key(seed, *, impl=None, dtype=None):
    """A typed key (a scalar `PRNGKeyArray`) from the integer `seed`; same bits as PRNGKey."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    return _wrapped(_seed_keys("key", seed, impl if dtype is None else dtype))


def key_data(keys):
    """The uint32 data, of shape (*keys.shape, *key_shape), underlying typed (or raw) keys."""
    keys, _ = _check_key("key_data", keys, allow_batched=True)
    return keys._base_array


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys of `impl` over uint32 key data of shape (..., *key_shape) (the inverse of
    key_data)."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                         "jax.random.wrap_key_data")
    impl = resolve_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, PRNGKeyArray) or not _is_arraylike(key_bits_array):
        raise TypeError("wrap_key_data expects a uint32 array of key data, got "
                        f"{type(key_bits_array).__name__}")
    data = jnp.asarray(key_bits_array)
    _check_key_data(data, impl)
    return _wrapped(PRNGKeyArray(data, impl))


def key_impl(keys):
    """The name of the PRNG implementation of `keys` (raw keys: the default one's)."""
    keys, _ = _check_key("key_impl", keys, allow_batched=True)
    return keys._impl.name


def clone(key):
    """A copy of `key` that jax_debug_key_reuse sees as a fresh key (otherwise `key` itself)."""
    if not isinstance(key, PRNGKeyArray) or not _key_reuse.enabled():
        return key
    return _wrapped(_unwrapped(key))


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


def _split_data(keys, shape):
    """Typed keys of `shape` split from one typed key."""
    return PRNGKeyArray(keys._impl.split(keys._base_array, shape), keys._impl)


def _split2(keys):
    keys = _split_data(keys, (2,))
    return keys[0], keys[1]


def split(key, num=2):
    """`num` new keys (or an array of keys of shape `num` when it is a tuple) from `key`."""
    keys, typed = _check_key("split", key)
    shape = _canonical_shape(num if isinstance(num, Sequence) else (num,), "num")
    return _return_keys(typed, _split_data(keys, shape))


def _fold_in_message(data):
    # As in JAX, a Python scalar becomes uint32 directly (OverflowError outside its range).
    data = jnp.asarray(data, _U32) if _dt.is_python_scalar(data) else jnp.asarray(data)
    if data.ndim:
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{tuple(data.shape)} != (). Use jax.vmap for batching.")
    return _u32(data)


def fold_in(key, data):
    """A new key derived from `key` and the 32-bit integer `data`."""
    keys, typed = _check_key("fold_in", key)
    folded = keys._impl.fold_in(keys._base_array, _fold_in_message(data))
    return _return_keys(typed, PRNGKeyArray(folded, keys._impl))


# ---------------------------------------------------------------- bits

def _random_bits(keys, bit_width, shape):
    """Uniform random unsigned integers of `bit_width` bits from one typed key."""
    return keys._impl.random_bits(keys._base_array, bit_width, shape)


def _words64(keys, shape):
    """The (high, low) uint32 halves of 64 random bits per element from one typed key."""
    return keys._impl.words64(keys._base_array, shape)


def _canonical_dtype(name, dtype, default):
    """The dtype JAX would use: `default` when None, 64-bit types narrowed without x64 (with
    JAX's warning, which names no function in jax.random)."""
    if dtype is None:
        return _dt.canonicalize_dtype(default)
    return _dt.explicit_dtype(dtype, None)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint64 by default under x64, else uint32)."""
    keys, _ = _check_key("bits", key)
    dtype = _canonical_dtype("bits", dtype, np.uint64)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(keys, dtype.itemsize * 8, _canonical_shape(shape))
