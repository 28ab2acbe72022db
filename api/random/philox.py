"""The philox4x32 and philox2x32 PRNG implementations (JAX's, from Random123): keys of two
words hashed with Philox-4x32-10, of one word with Philox-2x32-10, written with refjax.lax
(mul and mulhi)."""
import numpy as np

from .. import lax
from .prng import (_U32, PRNGImpl, _counters, _full_like, _key_words, _uint_dtype, join_words64,
                   register_impl)

_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_KEY_STEPS = (0x9E3779B9, 0xBB67AE85)


def _mulhilo(multiplier, x):
    m = _full_like(x, multiplier)
    return lax.mul(m, x), lax.mulhi(m, x)


def _philox4x32(k0, k1, x):
    """Philox-4x32 with 10 rounds of the four uint32 counter arrays x under the key words
    (k0, k1) (uint32 scalars): the key is bumped by the Weyl constants between rounds."""
    k0, k1 = lax.broadcast(k0, x[0].shape), lax.broadcast(k1, x[0].shape)
    for round_ in range(10):
        if round_:
            k0 = lax.add(k0, _full_like(k0, _KEY_STEPS[0]))
            k1 = lax.add(k1, _full_like(k1, _KEY_STEPS[1]))
        lo0, hi0 = _mulhilo(_MULTIPLIERS[0], x[0])
        lo1, hi1 = _mulhilo(_MULTIPLIERS[1], x[2])
        x = (lax.bitwise_xor(lax.bitwise_xor(hi1, x[1]), k0), lo1,
             lax.bitwise_xor(lax.bitwise_xor(hi0, x[3]), k1), lo0)
    return x


def _pair(words):
    return lax.concatenate([lax.expand_dims(w, (w.ndim,)) for w in words], words[0].ndim)


def _seed(words):
    """The seed's (high, low) words as the first two counter words under the zero key."""
    hi, lo = (lax.reshape(w, (1,)) for w in _key_words(words))
    zero = lax.full((1,), 0, _U32)
    out = _philox4x32(np.uint32(0), np.uint32(0), (hi, lo, zero, zero))
    return lax.concatenate(out[:2], 0)


def _hash_counters(data, shape, counters_first):
    """The four hash words of each element's (high, low) flat index, placed in the first two
    counter words (bits) or the last two (split)."""
    zeros = (lax.full(shape, 0, _U32),) * 2
    counters = _counters(shape)
    x = counters + zeros if counters_first else zeros + counters
    return _philox4x32(*_key_words(data), x)


def _split(data, shape):
    return _pair(_hash_counters(data, shape, False)[:2])


def _fold_in(data, msg):
    zero = lax.full((1,), 0, _U32)
    out = _philox4x32(*_key_words(data), (zero, zero, zero, lax.reshape(msg, (1,))))
    return lax.concatenate(out[:2], 0)


def _random_bits(data, bit_width, shape):
    """64 bits: the first two words side by side; narrower: the xor of all four, truncated."""
    out = _hash_counters(data, shape, True)
    if bit_width == 64:
        return join_words64(out[0], out[1])
    mixed = lax.bitwise_xor(lax.bitwise_xor(out[0], out[1]), lax.bitwise_xor(out[2], out[3]))
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, _uint_dtype(bit_width))


def _words64(data, shape):
    return _hash_counters(data, shape, True)[:2]


PHILOX4X32 = register_impl(PRNGImpl(
    "philox4x32", "phx4", (2,), seed=_seed, split=_split, fold_in=_fold_in,
    random_bits=_random_bits, words64=_words64))


# ---------------------------------------------------------------- philox2x32

_MULTIPLIER_2X32 = 0xD256D193


def _philox2x32(k0, x0, x1):
    """Philox-2x32 with 10 rounds of the counter arrays (x0, x1) under the one-word key k0."""
    k0 = lax.broadcast(k0, x0.shape)
    for round_ in range(10):
        if round_:
            k0 = lax.add(k0, _full_like(k0, _KEY_STEPS[0]))
        lo, hi = _mulhilo(_MULTIPLIER_2X32, x0)
        x0, x1 = lax.bitwise_xor(lax.bitwise_xor(hi, x1), k0), lo
    return x0, x1


def _key_word(data):
    return lax.index_in_dim(data, 0, 0, keepdims=False)


def _seed_2x32(words):
    hi, lo = (lax.reshape(w, (1,)) for w in _key_words(words))
    return _philox2x32(np.uint32(0), hi, lo)[0]


def _split_2x32(data, shape):
    out0, _ = _philox2x32(_key_word(data), *_counters(shape))
    return lax.expand_dims(out0, (len(shape),))


def _fold_in_2x32(data, msg):
    return _philox2x32(_key_word(data), lax.full((1,), 0, _U32), lax.reshape(msg, (1,)))[0]


def _random_bits_2x32(data, bit_width, shape):
    out0, out1 = _philox2x32(_key_word(data), *_counters(shape))
    if bit_width == 64:
        return join_words64(out0, out1)
    mixed = lax.bitwise_xor(out0, out1)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, _uint_dtype(bit_width))


PHILOX2X32 = register_impl(PRNGImpl(
    "philox2x32", "phx2", (1,), seed=_seed_2x32, split=_split_2x32, fold_in=_fold_in_2x32,
    random_bits=_random_bits_2x32,
    words64=lambda data, shape: _philox2x32(_key_word(data), *_counters(shape))))
