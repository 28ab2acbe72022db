"""The rbg and unsafe_rbg PRNG implementations: keys of four uint32 words whose random bits
come from XLA's RngBitGenerator (rng_bit_generator's default algorithm)."""
import math

import numpy as np

from .. import lax
from .prng import THREEFRY, PRNGImpl, register_impl, seed_words

_U32 = np.dtype(np.uint32)


def _halves(data):
    return lax.slice_in_dim(data, 0, 2, axis=0), lax.slice_in_dim(data, 2, 4, axis=0)


def _rbg_seed(words):
    """The threefry2x32 key of the seed, twice."""
    return lax.concatenate([words, words], 0)


def _rbg_split(data, shape):
    """Each half of the key split as a threefry2x32 key, the halves side by side."""
    return lax.concatenate([THREEFRY.split(half, shape) for half in _halves(data)], len(shape))


def _rbg_fold_in(data, msg):
    """Each half of the key folded as a threefry2x32 key."""
    return lax.concatenate([THREEFRY.fold_in(half, msg) for half in _halves(data)], 0)


def _rbg_random_bits(data, bit_width, shape):
    _, bits = lax.rng_bit_generator(data, shape, np.dtype(f"uint{bit_width}"))
    return bits


def _rbg_words64(data, shape):
    bits = _rbg_random_bits(data, 64, shape)
    hi = lax.shift_right_logical(bits, lax.full(shape, 32, bits.dtype))
    return lax.convert_element_type(hi, _U32), lax.convert_element_type(bits, _U32)


def _unsafe_rbg_split(data, shape):
    """Every tenth row of a (10 * n, 4) draw: ten draws as a 'hash function', as JAX's."""
    _, rows = lax.rng_bit_generator(data, (10 * math.prod(shape), 4), _U32)
    return lax.reshape(lax.slice_in_dim(rows, 0, rows.shape[0], 10), (*shape, 4))


def _unsafe_rbg_fold_in(data, msg):
    """The key xor the last row of a (10, 4) draw from the rbg key of the message."""
    _, rows = lax.rng_bit_generator(_rbg_seed(seed_words(msg)), (10, 4), _U32)
    return lax.bitwise_xor(data, lax.index_in_dim(rows, 9, 0, keepdims=False))


RBG = register_impl(PRNGImpl(
    "rbg", "rbg", (4,), seed=_rbg_seed, split=_rbg_split, fold_in=_rbg_fold_in,
    random_bits=_rbg_random_bits, words64=_rbg_words64))
UNSAFE_RBG = register_impl(PRNGImpl(
    "unsafe_rbg", "urbg", (4,), seed=_rbg_seed, split=_unsafe_rbg_split,
    fold_in=_unsafe_rbg_fold_in, random_bits=_rbg_random_bits, words64=_rbg_words64))
