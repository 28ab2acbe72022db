"""refjax.random: jax.random's threefry2x32 PRNG and its samplers, written with refjax.lax only.

Every value is computed by refjax primitives (no NumPy maths on data), so the samplers run
eagerly on any backend and under jit, vmap, grad and make_jaxpr, and agree bit for bit with
JAX's default configuration: the threefry2x32 implementation with
`jax_threefry_partitionable=True` (JAX's default since 0.5).

Keys come in two kinds, as in JAX:
- legacy raw keys (`PRNGKey`): uint32 arrays whose last dimension is 2;
- typed keys (`key`, `wrap_key_data`): a `PRNGKeyArray`, a thin wrapper around the same
  uint32[..., 2] data whose shape drops the trailing 2 and whose dtype prints as key<fry>.
  It is a pytree node with that data as its only leaf, so transformations see a uint32 array
  (in JAX a key array is itself a leaf of a special dtype). Consequences: `in_axes`/`out_axes`
  must be non-negative for key arguments (a negative axis would count the hidden trailing 2),
  and `tree_leaves(key)` returns the key data.
Every function accepts both kinds and returns keys of the kind it was given.
"""
import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from ..core import dtypes as _dt
from ..core.config import config as _config
from ..core.array import Array
from ..core.pytree import register_pytree_node
from ..core.sequence import LeadingAxis
from ..core.trace import Tracer
from . import lax
from . import numpy as jnp

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone",
    "PRNGKeyArray", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli",
    "categorical", "choice", "permutation", "truncated_normal", "gumbel", "exponential",
    "logistic", "laplace", "rademacher",
]

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
    elif _is_arraylike(key):
        data, typed = jnp.asarray(key), False
        _check_key_data(data)
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


# ---------------------------------------------------------------- uniform floats

def _mantissa_halves(data, shape, dtype):
    """The nmant random mantissa bits JAX uses for a uniform float of `dtype`, as two uint32
    halves (hi, lo) and the bit count of lo. JAX draws as many random bits as the float has
    (but at least 8, for bfloat16) and keeps the top nmant; for float64 those are the top 52
    of the 64 bits formed by the two hash words."""
    info = _dt.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    if nbits == 64:
        # The 52 mantissa bits are those of (b0 << 32 | b1) >> 12: b0 << 20 | b1 >> 12.
        b0, b1 = _hash_counters(data, shape)
        hi = lax.shift_right_logical(b0, lax.full(shape, 6, _U32))
        lo = lax.bitwise_or(lax.shift_left(lax.bitwise_and(b0, lax.full(shape, 63, _U32)),
                                           lax.full(shape, 20, _U32)),
                            lax.shift_right_logical(b1, lax.full(shape, 12, _U32)))
        return hi, lo, 26
    rng_bits = nbits if nmant >= 8 else 8
    rbits = _u32(_random_bits(data, rng_bits, shape))
    m = lax.shift_right_logical(rbits, lax.full(shape, rng_bits - nmant, _U32))
    h = nmant // 2
    return (lax.shift_right_logical(m, lax.full(shape, h, _U32)),
            lax.bitwise_and(m, lax.full(shape, 2 ** h - 1, _U32)), h)


def _unit_float_halves(data, shape, dtype):
    """Uniform floats in [0, 1) as an exact sum hi + lo of two floats with half the bits each.

    JAX bitcasts the mantissa bits m under the exponent of 1.0 and subtracts 1, giving
    m * 2**-nmant. refjax has no bitcast_convert_type, so it computes that value directly: an
    integer of at most nmant bits converts exactly and scaling by a power of two is exact. The
    halves are what _fma needs to multiply exactly."""
    nmant = _dt.finfo(dtype).nmant
    hi, lo, h = _mantissa_halves(data, shape, dtype)

    def scaled(x, e):
        return lax.mul(lax.convert_element_type(x, dtype), lax.full(shape, 2.0 ** e, dtype))
    return scaled(hi, h - nmant), scaled(lo, -nmant)


# ---------------------------------------------------------------- an emulated fused multiply-add
#
# JAX computes uniform's `floats * (maxval - minval) + minval` under jit, and XLA on CPU
# contracts float32 and float64 multiply-adds into FMAs (one rounding; float16 and bfloat16 are
# computed per operation). refjax's primitives round every operation, so to give JAX's bits it
# emulates the FMA exactly: Dekker's exact product, then Boldo and Melquiond's FMA emulation with
# rounding to odd ("Emulation of FMA and correctly rounded sums", IEEE TC 2008). Every product
# below is exact, so a compiler that contracts them (refjax's xla backend under jit) changes
# nothing. Assumes no overflow (|maxval - minval| below ~1e34 in float32) and no underflow.

def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum)."""
    s = lax.add(a, b)
    bb = lax.sub(s, a)
    return s, lax.add(lax.sub(a, lax.sub(s, bb)), lax.sub(b, bb))


def _veltkamp_split(x):
    """(hi, lo) with x = hi + lo exactly, each with at most half of x's significand bits."""
    p = _dt.finfo(x.dtype).nmant + 1
    c = lax.mul(_full_like(x, 2.0 ** ((p + 1) // 2) + 1), x)
    hi = lax.sub(c, lax.sub(c, x))
    return hi, lax.sub(x, hi)


def _round_to_odd_sum(a, b):
    """a + b rounded to odd: the nearest float when exact, else of the two floats around
    a + b the one with an odd last bit (found as the one a tie does not round to)."""
    s, e = _two_sum(a, b)
    inf = _full_like(s, np.inf)
    n = lax.nextafter(s, lax.select(lax.gt(e, _full_like(e, 0)), inf, lax.neg(inf)))
    tie = lax.add(s, lax.mul(_full_like(s, 0.5), lax.sub(n, s)))  # ties go to the even one
    inexact = lax.ne(e, _full_like(e, 0))
    return lax.select(lax.bitwise_and(inexact, lax.eq(tie, s)), n, s)


def _fma(f_hi, f_lo, y, c):
    """(f_hi + f_lo) * y + c rounded once, f_hi and f_lo having half the bits of a float."""
    f = lax.add(f_hi, f_lo)
    y_hi, y_lo = _veltkamp_split(y)
    uh = lax.mul(f, y)  # Dekker: uh + ul == f * y exactly
    ul = lax.sub(lax.mul(f_hi, y_hi), uh)
    for a, b in ((f_hi, y_lo), (f_lo, y_hi), (f_lo, y_lo)):
        ul = lax.add(ul, lax.mul(a, b))
    th, tl = _two_sum(c, uh)
    # th carries the whole derivative (dc + f dy); the correction's is zero (and nextafter has
    # no derivative rule), so it is computed from stopped values.
    return lax.add(th, _round_to_odd_sum(lax.stop_gradient(tl), lax.stop_gradient(ul)))


def _exact_scale(minval, maxval, dtype):
    """Whether maxval - minval is a static power of two (or 0), so the product is exact and a
    plain multiply-add already rounds once: uniform's default range, normal's, and most
    samplers' skip the FMA emulation."""
    if isinstance(minval, (Array, Tracer)) or isinstance(maxval, (Array, Tracer)):
        return False
    span = np.asarray(np.asarray(maxval, dtype) - np.asarray(minval, dtype), np.float64)
    return span.ndim == 0 and (span == 0 or np.frexp(span)[0] == 0.5)


def _shape_error(name, shape, param_shapes):
    return (f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
            "the result of broadcasting the shapes must equal the shape argument, but got "
            f"parameter shapes {param_shapes} for shape argument {shape}.")


def _check_shape(name, shape, *param_shapes, exc=ValueError):
    """JAX's _check_shape: broadcasting the parameter shapes with `shape` must give `shape`."""
    try:
        result = tuple(np.broadcast_shapes(shape, *param_shapes))
    except ValueError:
        result = None
    if result != tuple(shape):
        raise exc(_shape_error(name, tuple(shape), [tuple(s) for s in param_shapes]))


def _param(x, dtype, shape):
    """A sampler parameter converted to `dtype` and broadcast to `shape` (already checked)."""
    x = lax.convert_element_type(jnp.asarray(x), dtype)
    return jnp.broadcast_to(x, shape) if tuple(x.shape) != tuple(shape) else x


def _uniform(data, shape, dtype, minval, maxval):
    _check_shape("uniform", shape, np.shape(minval), np.shape(maxval), exc=TypeError)
    fused = np.dtype(dtype).itemsize >= 4 and not _exact_scale(minval, maxval, dtype)
    minval, maxval = _param(minval, dtype, shape), _param(maxval, dtype, shape)
    f_hi, f_lo = _unit_float_halves(data, shape, dtype)
    span = lax.sub(maxval, minval)
    if fused:
        scaled = _fma(f_hi, f_lo, span, minval)
    else:
        scaled = lax.add(lax.mul(lax.add(f_hi, f_lo), span), minval)
    # Rounding can push minval + f * (maxval - minval) below minval; JAX clamps it.
    return lax.max(minval, scaled)


def _float_dtype(name, dtype, kinds="f", what="a float"):
    dtype = _canonical_dtype(name, dtype, np.float64, stacklevel=4)
    if _dt.kind(dtype) not in kinds:
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval) of `shape` and float `dtype` (float64 under x64)."""
    data, _ = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    return _uniform(data, _canonical_shape(shape), dtype, minval, maxval)


# ---------------------------------------------------------------- normal family

def _sqrt2(dtype):
    return np.array(np.sqrt(2), dtype)


def _normal_real(data, shape, dtype):
    # (nextafter(-1, 0), 1) keeps erf_inv finite; -1 + epsneg is that neighbour, exactly.
    lo = -1.0 + float(_dt.finfo(dtype).epsneg)
    u = _uniform(data, shape, dtype, lo, 1.0)
    return lax.mul(lax.full(shape, _sqrt2(dtype), dtype), lax.erf_inv(u))


def _normal(data, shape, dtype):
    if _dt.kind(dtype) != "c":
        return _normal_real(data, shape, dtype)
    real_dtype = np.array(0, dtype).real.dtype
    k_re, k_im = _split2(data)
    re = _normal_real(k_re, shape, real_dtype).astype(dtype)
    im = _normal_real(k_im, shape, real_dtype).astype(dtype)
    return (re + 1j * im) / _sqrt2(dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal samples: sqrt(2) * erf_inv(u), u uniform on (-1, 1).

    Bit-exact with JAX on the xla backend; the numpy_ref backend's erf_inv is more accurate
    than XLA's float32 polynomial, so values there agree with JAX to a few ulps."""
    data, _ = _check_key("normal", key)
    dtype = _float_dtype("normal", dtype, "fc", "a float or complex")
    return _normal(data, _canonical_shape(shape), dtype)


def _broadcast_param_shape(shape, *params):
    if shape is None:
        return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))
    return _canonical_shape(shape)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples conditioned on the open interval (lower, upper), by inverting the CDF."""
    data, _ = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _broadcast_param_shape(shape, lower, upper)
    _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = jnp.asarray(_sqrt2(dtype))
    lower = lax.convert_element_type(jnp.asarray(lower), dtype)
    upper = lax.convert_element_type(jnp.asarray(upper), dtype)
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(_uniform(data, shape, dtype, a, b))
    # Rounding (or u landing exactly on a) could leave the open interval: clamp into it.
    inf = np.array(np.inf, dtype)
    lo = lax.nextafter(lax.stop_gradient(lower), jnp.broadcast_to(inf, lower.shape))
    hi = lax.nextafter(lax.stop_gradient(upper), jnp.broadcast_to(-inf, upper.shape))
    return jnp.clip(out, lo, hi)


# ---------------------------------------------------------------- integers

def _clip_convert(x, dtype):
    """x (an integer array) converted to `dtype`, clipped to the range both types can hold
    rather than wrapped (JAX's _convert_and_clip_integer)."""
    src, dst = _dt.iinfo(x.dtype), _dt.iinfo(dtype)
    lo = _full_like(x, max(int(src.min), int(dst.min)))
    hi = _full_like(x, min(int(src.max), int(dst.max)))
    return lax.convert_element_type(lax.min(lax.max(x, lo), hi), dtype)


def _as_int_array(x):
    x = jnp.asarray(x)
    return x if _dt.is_int(x.dtype) else x.astype(int)


def _randint(data, shape, minval, maxval, dtype):
    """JAX's randint: 2 * nbits random bits per value reduced modulo the span."""
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = _as_int_array(minval), _as_int_array(maxval)
    info = _dt.iinfo(dtype)
    top = _clip_convert(jnp.asarray(np.array(info.max, dtype)), maxval.dtype)
    # maxval beyond dtype's range (e.g. 256 for uint8) means "up to and including the max".
    out_of_range = lax.gt(maxval, top)
    minval, maxval = _clip_convert(minval, dtype), _clip_convert(maxval, dtype)
    minval, maxval, out_of_range = (jnp.broadcast_to(v, shape)
                                    for v in (minval, maxval, out_of_range))
    nbits, udtype = info.bits, _uint_dtype(info.bits)
    k1, k2 = _split2(data)
    higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    span = lax.convert_element_type(lax.sub(maxval, minval), udtype)
    empty = lax.le(maxval, minval)
    span = lax.select(empty, _full_like(span, 1), span)  # minval is returned when empty
    span = lax.select(lax.bitwise_and(out_of_range, lax.bitwise_not(empty)),
                      lax.add(span, _full_like(span, 1)), span)
    # (hi * 2**nbits + lo) % span without overflow, via multiplier = 2**nbits % span. A span
    # that wrapped to 0 (the full range) leaves values as they are: lax.rem(x, 0) == x.
    multiplier = lax.rem(_full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval) (int64 by default under x64, else int32).

    As in JAX, the result is (2*nbits random bits) mod (maxval - minval), slightly biased when
    the span is not a power of two; 8- and 16-bit dtypes are drawn as int32."""
    data, _ = _check_key("randint", key)
    dtype = _canonical_dtype("randint", dtype, np.int64)
    shape = _canonical_shape(shape)
    if not _dt.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = _dt.iinfo(dtype)
    if info.bits < 32:
        i32 = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(i32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(i32), int(info.min), int(info.max) + 1)
        return _randint(data, shape, minval, maxval, i32).astype(dtype)
    return _randint(data, shape, minval, maxval, dtype)


# ---------------------------------------------------------------- discrete samplers

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p (mode='high' resolves p below 2**-nmant)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = _check_key("bernoulli", key)
    p = jnp.asarray(p)
    if not _dt.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    shape = tuple(p.shape) if shape is None else _canonical_shape(shape)
    _check_shape("bernoulli", shape, np.shape(p))
    if mode == "low":
        return _uniform(data, shape, p.dtype, 0., 1.) < p
    u = _uniform(data, (2, *shape), p.dtype, 0., 1.)
    u1, u2 = lax.index_in_dim(u, 0, 0), lax.index_in_dim(u, 1, 0)
    u2 = u2 * (2.0 ** -_dt.finfo(p.dtype).nmant)  # resolution of one uniform sample
    return u2 < p - u1


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability, of integer (or any) `dtype`."""
    dtype = _canonical_dtype("rademacher", dtype, np.int64)
    b = bernoulli(key, 0.5, _canonical_shape(shape)).astype(dtype)
    return (2 * b - 1).astype(dtype)


def _top_k_indices(x, k):
    """Indices of the k largest entries along the last axis, ties to the lower index (as
    lax.top_k, which refjax lacks): a stable ascending sort of -x."""
    iota = lax.broadcasted_iota(np.dtype(np.int32), x.shape, x.ndim - 1)
    _, idx = lax.sort_key_val(lax.neg(x), iota, x.ndim - 1, is_stable=True)
    return lax.slice_in_dim(idx, 0, k, axis=x.ndim - 1)


# ---------------------------------------------------------------- continuous samplers

def _unary_sampler(name, transform, minval=0., maxval=1.):
    """A sampler `f(key, shape=(), dtype=None)` returning transform(uniform(minval, maxval))."""
    def sampler(key, shape=(), dtype=None):
        data, _ = _check_key(name, key)
        dtype = _float_dtype(name, dtype)
        lo = minval(dtype) if callable(minval) else minval
        return transform(_uniform(data, _canonical_shape(shape), dtype, lo, maxval))
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _tiny(dtype):
    return float(_dt.finfo(dtype).tiny)


exponential = _unary_sampler("exponential", lambda u: lax.neg(lax.log1p(lax.neg(u))))
exponential.__doc__ = "Exponential(1) samples: -log(1 - u) (log1p keeps u = 0 finite)."

logistic = _unary_sampler("logistic", lambda x: lax.sub(lax.log(x), lax.log1p(lax.neg(x))),
                          minval=_tiny)
logistic.__doc__ = "Standard logistic samples: log(x) - log(1 - x), x uniform on [tiny, 1)."

laplace = _unary_sampler(
    "laplace", lambda u: lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u)))),
    minval=lambda dtype: -1.0 + float(_dt.finfo(dtype).epsneg))
laplace.__doc__ = "Laplace(0, 1) samples: sign(u) * log(1 - |u|), u uniform on (-1, 1)."


def _gumbel(data, shape, dtype, mode):
    info = _dt.finfo(dtype)
    if mode == "low":
        u = _uniform(data, shape, dtype, float(info.tiny), 1.)
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    # 'high': a second uniform refines the first below 1/2, where -log(-log1p(-x)) needs it.
    u = _uniform(data, (2, *shape), dtype, 0., 1.)
    high, low = lax.index_in_dim(u, 0, 0), lax.index_in_dim(u, 1, 0)
    x = jnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples -log(-log(u)); mode 'low' (default) or 'high' (two draws per
    value, for a wider tail). JAX's float32-only mode 'highest' is not implemented."""
    data, _ = _check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode == "highest":
        raise NotImplementedError("refjax.random.gumbel: mode='highest' is not implemented "
                                  "(it needs lax.clz); use mode='high'")
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(data, _canonical_shape(shape), dtype, mode)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities softmax(logits, axis), by the Gumbel-max trick (or
    Gumbel top-k without replacement); shape defaults to logits' shape without `axis`."""
    data, _ = _check_key("categorical", key)
    logits = jnp.asarray(logits)
    axis = _canonical_axis(axis, logits.ndim)
    batch_shape = tuple(np.delete(logits.shape, axis).tolist())
    shape = batch_shape if shape is None else _canonical_shape(shape)
    _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(prefix):])
        logits_shape.insert(axis, logits.shape[axis])
        g = gumbel(data, (*prefix, *logits_shape), logits.dtype, mode)
        noisy = g + lax.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(noisy, axis=len(prefix) + axis)
    noisy = logits + gumbel(data, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    idx = _top_k_indices(jnp.moveaxis(noisy, axis, -1), k)
    # (*batch, k) -> (k, *batch) -> shape: the k draws lead, as in JAX.
    idx = lax.transpose(idx, (idx.ndim - 1, *range(idx.ndim - 1)))
    return lax.reshape(idx, shape)


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _shuffle(data, x, axis):
    """x shuffled along `axis` by sorting on fresh random 32-bit keys; JAX repeats the sort
    ceil(3 log n / log(2**32 - 1)) times so that key collisions are negligible."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(2.0 ** 32 - 1)))
    for _ in range(rounds):
        data, sub = _split2(data)
        _, x = lax.sort_key_val(_random_bits(sub, 32, tuple(x.shape)), x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (integer x) or of x along `axis`; with
    independent=True each slice along `axis` is shuffled on its own."""
    data, _ = _check_key("permutation", key)
    if not _is_arraylike(x):
        raise TypeError(f"permutation requires an array-like x, got {type(x).__name__}")
    if not np.ndim(x):
        x = jnp.asarray(x)
        if not _dt.is_int(x.dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = int(x)  # the size must be static: a traced x fails here, as in JAX
        return _shuffle(data, jnp.arange(n), 0)
    x = jnp.asarray(x)
    axis = _canonical_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def _choice_indices(data, n_inputs, shape, replace, p, mode):
    if p is None:
        if replace:
            return randint(data, shape, 0, n_inputs)
        return lax.slice_in_dim(_shuffle(data, jnp.arange(n_inputs), 0), 0, math.prod(shape))
    p = jnp.asarray(p)
    if not _dt.is_inexact(p.dtype):
        p = p.astype(_dt.default_float())
    if tuple(p.shape) != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {tuple(p.shape)} and a.shape[axis] is {n_inputs}.")
    if replace:
        p_cuml = jnp.cumsum(p)
        r = p_cuml[-1] * (1 - _uniform(data, shape, p_cuml.dtype, 0., 1.))
        return jnp.searchsorted(p_cuml, r).astype(int)
    g = gumbel(data, (n_inputs,), p.dtype, mode) + jnp.log(p)
    return _top_k_indices(g, math.prod(shape)).astype(int)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of `shape` from a (or arange(a) for an int), with or without
    replacement, uniformly or with probabilities p, taken along `axis`."""
    data, _ = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _canonical_shape(shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(arr)  # static, as in JAX
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None and not replace and arr.ndim:
        # JAX permutes the whole array (not just indices) and keeps the first n_draws.
        perm = permutation(data, arr, axis)
        result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
        return result.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])
    ind = _choice_indices(data, n_inputs, shape, replace, p, mode)
    if arr.ndim == 0:
        return ind.reshape(shape)
    result = jnp.take(arr, ind, axis)
    return result.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])
