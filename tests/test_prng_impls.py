"""PRNG bit generators and implementations against real JAX on CPU, bit for bit:
rng_bit_generator's Philox (RNG_PHILOX and RNG_DEFAULT, which XLA on CPU runs as Philox)."""
import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from refjax import lax
from refjax.spec.checks import budget, enable_x64

_ALGORITHMS = ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX")
# Counter words near 2**64 exercise the carry into the hash key's copy and the wrap-around.
_WORD = st.one_of(st.integers(0, 2 ** 32 - 1), st.sampled_from((0, 2 ** 32 - 1, 2 ** 32 - 2)))


def _assert_same(ours, theirs):
    for o, t in zip(ours, theirs):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


@budget(1.0)
@given(key=st.lists(_WORD, min_size=4, max_size=4),
       shape=st.lists(st.integers(0, 5), max_size=3).map(tuple),
       dtype=st.sampled_from((np.uint8, np.uint16, np.uint32, np.uint64)),
       algorithm=st.sampled_from(_ALGORITHMS))
def test_rng_bit_generator_is_xla_cpu_bit_for_bit(key, shape, dtype, algorithm):
    """Bits and new key equal XLA's on CPU for every algorithm, shape and unsigned dtype."""
    key = np.array(key, np.uint32)
    with enable_x64():
        ours = lax.rng_bit_generator(key, shape, dtype, getattr(lax.RandomAlgorithm, algorithm))
        theirs = jax.lax.rng_bit_generator(key, shape, dtype,
                                           getattr(jax.lax.RandomAlgorithm, algorithm))
        _assert_same(ours, theirs)


@pytest.mark.parametrize("dtype,blocks", [(np.uint8, 3), (np.uint32, 3), (np.uint64, 5)])
def test_philox_counter_advances_by_128_bit_blocks(dtype, blocks):
    """The new key's counter word grows by the 128-bit blocks drawn (hand count: 9 words of
    32 bits or fewer make 3 blocks; 9 uint64 make 18 words, 5 blocks), wrapping mod 2**64."""
    key = np.array([7, 8, 2 ** 32 - 2, 2 ** 32 - 1], np.uint32)
    with enable_x64():
        new_key, _ = lax.rng_bit_generator(key, (9,), dtype, lax.RandomAlgorithm.RNG_PHILOX)
    np.testing.assert_array_equal(np.asarray(new_key), [7, 8, blocks - 2, 0])


def test_philox_zero_key_matches_the_published_test_vector():
    """Salmon et al.'s Philox4x32-10 known-answer test: counter 0 under key 0 hashes to
    6627e8d5 e169c58d bc57ac4c 9b00dbd8 (Random123's kat_vectors)."""
    _, words = lax.rng_bit_generator(np.zeros(4, np.uint32), (4,), np.uint32,
                                     lax.RandomAlgorithm.RNG_PHILOX)
    assert [f"{w:08x}" for w in np.asarray(words)] == ["6627e8d5", "e169c58d", "bc57ac4c",
                                                        "9b00dbd8"]
