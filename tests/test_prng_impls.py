"""PRNG bit generators and implementations against real JAX on CPU, bit for bit:
rng_bit_generator's Philox (RNG_PHILOX and RNG_DEFAULT, which XLA on CPU runs as Philox), the
other implementations (rbg, unsafe_rbg, philox4x32, philox2x32, threefry4x32), and the PRNG
switches (jax_default_prng_impl,
jax_legacy_prng_key, jax_enable_custom_prng, jax_threefry_partitionable)."""
import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import refjax
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


# ---------------------------------------------------------------- rbg and unsafe_rbg keys

_IMPLS = ("rbg", "unsafe_rbg", "philox4x32", "philox2x32", "threefry4x32", "threefry2x32")


def _same(ours, theirs, exact=True):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:  # transcendental samplers: XLA's log/exp may differ by an ulp (float32), which
        # -log(-log(u)) turns into a few ulps of absolute error near 0; XLA's float64 log1p on
        # CPU is up to ~120 ulps off on (-0.5, -0.3) (measured against NumPy's)
        ulps = 256 if ours.dtype == np.float64 else 8
        eps = np.finfo(ours.dtype).eps
        np.testing.assert_allclose(ours, theirs, rtol=ulps * eps, atol=ulps * eps)


@pytest.mark.parametrize("impl", _IMPLS)
def test_keys_of_an_implementation_are_jax_keys(impl):
    """Seeding, key data, dtype, itemsize, printing and key_impl of typed and raw keys."""
    ours, theirs = refjax.random.key(7, impl=impl), jax.random.key(7, impl=impl)
    assert str(ours.dtype) == str(theirs.dtype) and ours.dtype.itemsize == theirs.dtype.itemsize
    assert repr(ours) == repr(theirs)
    assert refjax.random.key_impl(ours) == str(jax.random.key_impl(theirs)) == impl
    _same(refjax.random.key_data(ours), jax.random.key_data(theirs))
    _same(refjax.random.PRNGKey(2 ** 40 + 3, impl=impl), jax.random.PRNGKey(2 ** 40 + 3, impl=impl))
    assert ours.dtype == refjax.random.key_dtype(impl) != refjax.random.key_dtype("threefry2x32") \
        or impl == "threefry2x32"


@budget(0.25)
@given(seed=st.integers(0, 2 ** 31 - 1), impl=st.sampled_from(_IMPLS),
       shape=st.lists(st.integers(0, 3), max_size=2).map(tuple), data=st.integers(0, 2 ** 32 - 1))
def test_split_fold_in_and_bits_are_jax_bit_for_bit(seed, impl, shape, data):
    ours, theirs = refjax.random.key(seed, impl=impl), jax.random.key(seed, impl=impl)
    _same(refjax.random.key_data(refjax.random.split(ours, shape)),
          jax.random.key_data(jax.random.split(theirs, shape)))
    _same(refjax.random.key_data(refjax.random.fold_in(ours, data)),
          jax.random.key_data(jax.random.fold_in(theirs, data)))
    with enable_x64():
        for dtype in ("uint8", "uint16", "uint32", "uint64"):
            _same(refjax.random.bits(ours, shape, dtype), jax.random.bits(theirs, shape, dtype))


_SAMPLERS = {
    "uniform": lambda r, k: r.uniform(k, (5,)),
    "uniform_f16": lambda r, k: r.uniform(k, (3,), "float16"),
    "uniform_f64": lambda r, k: r.uniform(k, (3,), "float64"),
    "randint": lambda r, k: r.randint(k, (6,), -5, 100),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (6,)),
    "permutation": lambda r, k: r.permutation(k, 9),
    "choice": lambda r, k: r.choice(k, 7, (3,), replace=False),
    "categorical": lambda r, k: r.categorical(k, np.log(np.arange(1.0, 5.0)), shape=(4,)),
}
_CLOSE_SAMPLERS = {
    "normal": lambda r, k: r.normal(k, (4,)),
    "normal_f64": lambda r, k: r.normal(k, (4,), "float64"),
    "exponential": lambda r, k: r.exponential(k, (3,)),
    "gumbel": lambda r, k: r.gumbel(k, (4,)),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1.0, 2.0, (3,)),
}


@pytest.mark.parametrize("impl", ("rbg", "unsafe_rbg", "philox4x32", "philox2x32", "threefry4x32"))
@pytest.mark.parametrize("name", sorted(_SAMPLERS) + sorted(_CLOSE_SAMPLERS))
def test_samplers_on_other_keys_are_jax_samples(impl, name):
    """The samplers draw through the implementation's bits (rng_bit_generator for rbg)."""
    sample = _SAMPLERS.get(name) or _CLOSE_SAMPLERS[name]
    with enable_x64():
        _same(sample(refjax.random, refjax.random.key(11, impl=impl)),
              sample(jax.random, jax.random.key(11, impl=impl)), exact=name in _SAMPLERS)


# Not threefry4x32: JAX 0.10.2 takes minutes (measured: over 45 s, not finished) to compile
# this program for it on CPU; refjax runs it in milliseconds.
@pytest.mark.parametrize("impl", ("rbg", "unsafe_rbg", "philox4x32", "philox2x32"))
def test_samplers_under_jit_are_jax_samples(impl):
    def draw(random, k):
        a, b = random.split(k)
        return random.uniform(a, (3,)), random.randint(random.fold_in(b, 4), (2,), 0, 9)
    ours = refjax.jit(lambda k: draw(refjax.random, k))(refjax.random.key(3, impl=impl))
    theirs = jax.jit(lambda k: draw(jax.random, k))(jax.random.key(3, impl=impl))
    for o, t in zip(ours, theirs):
        _same(o, t)


def test_vmapped_rbg_draws_follow_each_key_where_jax_uses_the_first():
    """JAX batches rng_bit_generator by drawing once from the first key (its batching rule
    ignores the others), so vmap over rbg keys differs from a loop in JAX; refjax's vmap is
    the loop: each key its own stream."""
    keys = refjax.random.split(refjax.random.key(0, impl="rbg"), 3)
    batched = refjax.vmap(lambda k: refjax.random.uniform(k, (2,)))(keys)
    looped = [refjax.random.uniform(keys[i], (2,)) for i in range(3)]
    np.testing.assert_array_equal(np.asarray(batched), np.stack([np.asarray(x) for x in looped]))
    jkeys = jax.random.split(jax.random.key(0, impl="rbg"), 3)
    jax_batched = jax.vmap(lambda k: jax.random.uniform(k, (2,)))(jkeys)
    np.testing.assert_array_equal(np.asarray(looped[0]), np.asarray(jax.random.uniform(jkeys[0], (2,))))
    assert not np.array_equal(np.asarray(jax_batched[1]), np.asarray(jax.random.uniform(jkeys[1], (2,))))


def test_wrap_key_data_checks_the_implementations_key_shape():
    data = np.arange(8, dtype=np.uint32).reshape(2, 4)
    ours = refjax.random.wrap_key_data(data, impl="unsafe_rbg")
    assert repr(ours) == repr(jax.random.wrap_key_data(data, impl="unsafe_rbg"))
    for impl, bad in (("rbg", data[:, :2]), ("threefry2x32", data)):
        with pytest.raises(TypeError):
            jax.random.wrap_key_data(bad, impl=impl)
        with pytest.raises(TypeError, match=r"wrap_key_data.*end with \(\d,\).*shape=\(2, \d\)"):
            refjax.random.wrap_key_data(bad, impl=impl)


def test_unknown_implementations_are_refused():
    for lib in (refjax, jax):
        with pytest.raises(ValueError, match='unrecognized PRNG implementation "foo"'):
            lib.random.key(0, impl="foo")
        with pytest.raises(TypeError, match="unrecognized type"):
            lib.random.key(0, impl=3)


def test_every_jax_implementation_is_refjax_one():
    """jax_default_prng_impl's choices are the implementations both libraries have."""
    for name in ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32",
                 "philox4x32"):
        assert str(refjax.random.key(0, impl=name).dtype) == str(jax.random.key(0, impl=name).dtype)


def test_poisson_refuses_rbg_keys_as_jax():
    for lib in (refjax, jax):
        with pytest.raises(NotImplementedError, match="only implemented for the threefry2x32"):
            lib.random.poisson(lib.random.key(0, impl="rbg"), 3.0, (2,))


# ---------------------------------------------------------------- the switches

def test_default_prng_impl_reads_raw_keys_and_seeds_keys():
    for lib in (refjax, jax):
        with lib.default_prng_impl("rbg"):
            raw = lib.random.PRNGKey(1)
            assert raw.shape == (4,) and str(lib.random.key(1).dtype) == "key<rbg>"
            assert lib.random.key_impl(raw) == "rbg"
            out = lib.random.split(raw)
        if lib is refjax:
            ours = out
    _same(ours, out)
    assert refjax.default_prng_impl.value == "threefry2x32"
    with pytest.raises(TypeError, match=r"split.*end with \(2,\)"):
        refjax.random.split(np.zeros(4, np.uint32))


def test_jax_default_prng_impl_config_option():
    refjax.config.update("jax_default_prng_impl", "unsafe_rbg")
    try:
        assert str(refjax.random.key(0).dtype) == "key<urbg>"
    finally:
        refjax.config.update("jax_default_prng_impl", "threefry2x32")
    with pytest.raises(ValueError, match="new enum value must be in"):
        refjax.config.update("jax_default_prng_impl", "foo")


@pytest.mark.parametrize("mode,error", [("warn", None), ("error", ValueError)])
def test_legacy_prng_key_warns_or_refuses_raw_keys(mode, error):
    raw = np.zeros(2, np.uint32)
    with refjax.legacy_prng_key(mode):
        refjax.random.PRNGKey(0)  # making raw keys is fine; passing them is not
        refjax.random.split(refjax.random.key(0))
        if error is None:
            with pytest.warns(UserWarning, match="Legacy uint32 key array"):
                refjax.random.uniform(raw)
        else:
            with pytest.raises(ValueError, match="Legacy uint32 key array"):
                refjax.random.uniform(raw)
    assert refjax.legacy_prng_key.value == jax.legacy_prng_key.value == "allow"


def test_enable_custom_prng_makes_prngkey_typed():
    with refjax.enable_custom_prng(True), jax.enable_custom_prng(True):
        ours, theirs = refjax.random.PRNGKey(5), jax.random.PRNGKey(5)
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("impl", ("threefry2x32", "rbg"))
def test_threefry_partitionable_false_is_jax_original_scheme(impl):
    with refjax.threefry_partitionable(False), jax.threefry_partitionable(False), enable_x64():
        ours, theirs = refjax.random.key(9, impl=impl), jax.random.key(9, impl=impl)
        _same(refjax.random.key_data(refjax.random.split(ours, (3, 2))),
              jax.random.key_data(jax.random.split(theirs, (3, 2))))
        for dtype in ("uint8", "uint16", "uint32", "uint64"):
            _same(refjax.random.bits(ours, (5,), dtype), jax.random.bits(theirs, (5,), dtype))
        _same(refjax.random.uniform(ours, (3,), "float64"),
              jax.random.uniform(theirs, (3,), "float64"))
        _same(refjax.jit(lambda k: refjax.random.uniform(k, (7,)))(ours),
              jax.jit(lambda k: jax.random.uniform(k, (7,)))(theirs))


# ---------------------------------------------------------------- gumbel mode='highest'

def test_gumbel_highest_fixed_point_conversion_truncates_64_bit_fractions():
    """The float32 of hi:lo / 2**64, its 24 leading bits kept (computed with Python ints)."""
    from refjax.api.random.samplers import _fixed_point_float32
    rng = np.random.default_rng(0)
    hi = np.concatenate([rng.integers(0, 2 ** 32, 60), [0, 0, 1, 2 ** 31, 2 ** 32 - 1]])
    lo = np.concatenate([rng.integers(0, 2 ** 32, 60), [1, 2 ** 31, 0, 5, 2 ** 32 - 1]])
    hi[:20] >>= rng.integers(0, 32, 20)  # small fractions: leading bits deep in hi or lo

    def expected(h, low):
        v = int(h) << 32 | int(low)
        drop = max(v.bit_length() - 24, 0)
        return np.float32(np.ldexp(float(v >> drop), drop - 64))
    ours = _fixed_point_float32(refjax.numpy.asarray(hi.astype(np.uint32)),
                                refjax.numpy.asarray(lo.astype(np.uint32)))
    np.testing.assert_array_equal(np.asarray(ours), [expected(h, low) for h, low in zip(hi, lo)])


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("impl", ("threefry2x32", "rbg"))
def test_gumbel_highest_is_jax_sample(impl, dtype):
    """float32 draws 64 bits per value; other dtypes fall back to mode 'high', as in JAX."""
    with enable_x64():
        ours = refjax.random.gumbel(refjax.random.key(4, impl=impl), (200,), dtype, "highest")
        theirs = jax.random.gumbel(jax.random.key(4, impl=impl), (200,), dtype, "highest")
        _same(ours, theirs, exact=False)
    for lib in (refjax, jax):
        with pytest.raises(ValueError, match="valid mode for gumbel"):
            lib.random.gumbel(lib.random.key(0), (2,), mode="higher")
