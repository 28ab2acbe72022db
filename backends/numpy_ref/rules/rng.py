"""NumPy rules of rng_bit_generator (XLA's ThreeFry and Philox bit generators, bit for bit)
and rng_uniform (NumPy's nondeterministic generator, as XLA's RngUniform is nondeterministic);
random_wrap and random_unwrap (identities)."""
import numpy as np

from ....core.primitives import rng
from ._common import rule

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32 = np.uint32


def threefry2x32(key, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) of the counter words x0, x1 under the
    two-word key: the hash of JAX's threefry2x32 and XLA's ThreeFry generator."""
    k0, k1 = _U32(key[0]), _U32(key[1])
    ks = (k0, k1, k0 ^ k1 ^ _U32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = ((x1 << _U32(r)) | (x1 >> _U32(32 - r))) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + _U32(i + 1)
    return x0, x1


def _split_dim(shape):
    """The dimension XLA's generator splits in halves: the first even one, else the first
    largest one (-1 for a scalar)."""
    if not shape:
        return -1
    even = [i for i, n in enumerate(shape) if n % 2 == 0]
    return even[0] if even else int(np.argmax(shape))


def _words(value):
    value = np.asarray(value, np.uint64)
    return (value & np.uint64(0xFFFFFFFF)).astype(_U32), (value >> np.uint64(32)).astype(_U32)


def _threefry_bits(key, shape, dtype):
    """XLA's ThreeFryBitGenerator. The uint32[4] key is two uint64 words (little-endian): the
    hash key and the counter. 64-bit outputs take one counter each, as x0 | x1 << 32; narrower
    ones take one hash word each: the shape is split in halves along _split_dim (padded to an
    even size), counters run over the half shape, x0 fills the first half and x1 the second,
    and 8/16-bit outputs keep the words' low bits. Returns (bits, counters used)."""
    key64 = key.view(np.uint64)
    if np.dtype(dtype).itemsize == 8:
        n = int(np.prod(shape))
        x0, x1 = threefry2x32(_words(key64[0]), *_words(key64[1] + np.arange(n, dtype=np.uint64)))
        return (x0.astype(np.uint64) | (x1.astype(np.uint64) << np.uint64(32))).reshape(shape), n
    d = _split_dim(shape)
    half = list(shape[:d + 1]) if shape else [1]
    if shape:
        half[d] = -(-shape[d] // 2)
        half = half + [1] + list(shape[d + 1:])
    n = int(np.prod(half))
    x0, x1 = threefry2x32(_words(key64[0]), *_words(key64[1] + np.arange(n, dtype=np.uint64)))
    pair = np.concatenate([x0.reshape(half), x1.reshape(half)], axis=d + 1 if shape else 0)
    if not shape:
        return pair[0].astype(dtype), n
    merged = pair.reshape(shape[:d] + (2 * half[d],) + tuple(shape[d + 1:]))
    bits = np.take(merged, np.arange(shape[d]), axis=d)
    return bits.astype(dtype), n


_PHILOX_MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_KEY_STEPS = (_U32(0x9E3779B9), _U32(0xBB67AE85))
_LOW32 = np.uint64(32)


def _mul_hi_lo(x, multiplier):
    product = x.astype(np.uint64) * multiplier
    return (product >> _LOW32).astype(_U32), product.astype(_U32)


def philox4x32(x, key):
    """Philox-4x32 with 10 rounds (Salmon et al. 2011) of the four counter words x under the
    two-word key: the hash of XLA's Philox generator."""
    k0, k1 = _U32(key[0]), _U32(key[1])
    for _ in range(10):
        hi0, lo0 = _mul_hi_lo(x[0], _PHILOX_MULTIPLIERS[0])
        hi1, lo1 = _mul_hi_lo(x[2], _PHILOX_MULTIPLIERS[1])
        x = (hi1 ^ x[1] ^ k0, lo1, hi0 ^ x[3] ^ k1, lo0)
        k0, k1 = k0 + _PHILOX_KEY_STEPS[0], k1 + _PHILOX_KEY_STEPS[1]
    return x


def _philox_words(key, count):
    """`count` 32-bit words of XLA's PhiloxBitGenerator. The uint32[4] key is two uint64 words
    (little-endian): the hash key k and the counter c. Block i hashes the 128-bit counter
    (k << 64) + c + i (the carry out of c reaches k's copy) under k, and its four words come
    out in order. Returns (words, blocks used)."""
    key64 = key.view(np.uint64)
    blocks = -(-count // 4)
    low = key64[1] + np.arange(blocks, dtype=np.uint64)
    high = key64[0] + (low < key64[1]).astype(np.uint64)
    out = philox4x32(_words(low) + _words(high), key[:2])
    return np.stack(out, axis=1).reshape(-1)[:count], blocks


def _philox_bits(key, shape, dtype):
    """XLA's Philox bits: 64-bit outputs are pairs of consecutive words (little-endian),
    8/16-bit ones the low bits of a word each (JAX draws uint32 for them and narrows)."""
    n = int(np.prod(shape, dtype=np.int64))
    wide = np.dtype(dtype).itemsize == 8
    words, used = _philox_words(key, 2 * n if wide else n)
    bits = words.view(np.uint64) if wide else words.astype(dtype)
    return bits.reshape(shape), used


_GENERATORS = {rng.RandomAlgorithm.RNG_THREE_FRY: _threefry_bits,
               rng.RandomAlgorithm.RNG_PHILOX: _philox_bits,
               rng.RandomAlgorithm.RNG_DEFAULT: _philox_bits}  # XLA's choice on CPU


@rule(rng.rng_bit_generator_p)
def _rng_bit_generator(key, *, algorithm, dtype, out_sharding, shape):
    """XLA's CPU streams bit for bit, RNG_DEFAULT being Philox there. The new key advances
    the counter word by the blocks used (mod 2**64), as XLA's."""
    key = np.ascontiguousarray(key, _U32)  # (a broadcast zero key has stride 0: no view)
    with np.errstate(over="ignore"):
        bits, used = _GENERATORS[algorithm](key, tuple(shape), np.dtype(dtype))
        new_key = key.copy().view(np.uint64)
        new_key[1] = new_key[1] + np.uint64(used)
    return [new_key.view(_U32), bits]


@rule(rng.rng_uniform_p)
def _rng_uniform(a, b, *, shape):
    generator = np.random.default_rng()
    if a.dtype.kind in "iu":
        return generator.integers(a, b, size=shape, dtype=a.dtype, endpoint=False)
    wide = generator.uniform(np.float64(a), np.float64(b), size=shape)
    out = wide.astype(a.dtype)
    return np.where(out >= b, np.nextafter(b, a).astype(a.dtype), out)  # rounding up to b


@rule(rng.random_wrap_p, rng.random_unwrap_p)
def _key_mark(data, **params):
    # Identities on key data; a copy, so that no two values share a buffer the interpreter
    # could hand to an in-place rule.
    return np.array(data, copy=True)
