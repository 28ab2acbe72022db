"""The threefry4x32 PRNG implementation (JAX's): four-word keys hashed with Threefry-4x32-20
(Salmon et al. 2011), written with refjax.lax."""
import numpy as np

from .. import lax
from .prng import (_U32, PRNGImpl, _counters, _full_like, _rotate_left, _uint_dtype,
                   join_words64, register_impl)

_ROTATIONS = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))
_PARITY = 0x1BD11BDA


def _xor(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = lax.bitwise_xor(out, x)
    return out


def _mix(a, b, r):
    a = lax.add(a, b)
    return a, lax.bitwise_xor(a, _rotate_left(b, r))


def _inject(x, ks, i):
    """Key injection after every fourth round: the rotating schedule plus the group count."""
    x = [lax.add(w, ks[(k + 1 + i) % 5]) for k, w in enumerate(x)]
    x[3] = lax.add(x[3], _full_like(x[3], i + 1))
    return x


def _threefry4x32(key, x):
    """Threefry-4x32 with 20 rounds of the four uint32 counter arrays x under the key's four
    words (uint32 scalars)."""
    ks = [lax.broadcast(k, x[0].shape) for k in key]
    ks.append(_xor(*ks, _full_like(ks[0], _PARITY)))
    x = [lax.add(w, k) for w, k in zip(x, ks)]
    for r in range(20):
        rot0, rot1 = _ROTATIONS[r % 8]
        if r % 2 == 0:  # mixes (x0, x1) and (x2, x3)
            (x[0], x[1]), (x[2], x[3]) = _mix(x[0], x[1], rot0), _mix(x[2], x[3], rot1)
        else:  # mixes (x0, x3) and (x2, x1)
            (x[0], x[3]), (x[2], x[1]) = _mix(x[0], x[3], rot0), _mix(x[2], x[1], rot1)
        if r % 4 == 3:
            x = _inject(x, ks, r // 4)
    return x


def _words(data):
    return [lax.index_in_dim(data, i, 0, keepdims=False) for i in range(4)]


def _stack(words, axis):
    return lax.concatenate([lax.expand_dims(w, (axis,)) for w in words], axis)


def _seed(words):
    """The seed's (high, low) words as the first two key words, hashing a zero counter."""
    key = [lax.index_in_dim(words, 0, 0, keepdims=False), lax.index_in_dim(words, 1, 0, keepdims=False), np.uint32(0),
           np.uint32(0)]
    zero = lax.full((), 0, _U32)
    return _stack(_threefry4x32([lax.convert_element_type(k, _U32) for k in key], [zero] * 4), 0)


def _hash_counters(data, shape, counters_first):
    zeros = (lax.full(shape, 0, _U32),) * 2
    counters = _counters(shape)
    return _threefry4x32(_words(data), list(counters + zeros if counters_first
                                            else zeros + counters))


def _split(data, shape):
    return _stack(_hash_counters(data, shape, False), len(shape))


def _fold_in(data, msg):
    zero = lax.full((), 0, _U32)
    return _stack(_threefry4x32(_words(data), [zero, zero, zero, msg]), 0)


def _words64(data, shape):
    out = _hash_counters(data, shape, True)
    return _xor(out[0], out[2]), _xor(out[1], out[3])


def _random_bits(data, bit_width, shape):
    """64 bits: out0 ^ out2 above out1 ^ out3; narrower: the xor of all four, truncated."""
    if bit_width == 64:
        return join_words64(*_words64(data, shape))
    mixed = _xor(*_hash_counters(data, shape, True))
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, _uint_dtype(bit_width))


THREEFRY4X32 = register_impl(PRNGImpl(
    "threefry4x32", "fry4", (4,), seed=_seed, split=_split, fold_in=_fold_in,
    random_bits=_random_bits, words64=_words64))
