"""Programs on the fft, special-function, bit, top_k, rng and sampler primitives of issue 14,
against real JAX 0.10.2 on both backends; lax.<name>_p exports; their error messages."""
import functools

import numpy as np
import pytest
from jax_recordings import on_jax

import jax
import refjax
from refjax.spec.checks import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")
lax = refjax.lax
RNG = np.random.default_rng(14)


def _close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- fft

def _fft_conv(lx, signal, kernel):
    """Circular convolution along the last axis by rfft, multiply, irfft."""
    n = signal.shape[-1]
    product = lx.mul(lx.fft(signal, "rfft", (n,)), lx.fft(kernel, "rfft", (n,)))
    return lx.fft(product, "irfft", (n,))


def test_fft_convolution_and_its_gradient_match_jax():
    signal = RNG.normal(size=(3, 16)).astype(np.float32)
    kernel = RNG.normal(size=(3, 16)).astype(np.float32)
    direct = np.stack([[np.sum(s * np.roll(k[::-1], t + 1)) for t in range(16)]
                       for s, k in zip(signal.astype(np.float64), kernel.astype(np.float64))])
    ours = _fft_conv(lax, signal, kernel)
    theirs = _fft_conv(jax.lax, signal, kernel)
    _close(ours, theirs, 1e-5, 1e-5)
    _close(ours, direct, 1e-5, 1e-5)  # against the convolution's definition

    def loss(lx):
        return lambda s, k: (_fft_conv(lx, s, k) ** 2).sum()
    grads = refjax.grad(loss(lax), argnums=(0, 1))(signal, kernel)
    expected = jax.grad(loss(jax.lax), argnums=(0, 1))(signal, kernel)
    for g, e in zip(grads, expected):
        _close(g, e, 1e-4, 1e-4)
    jitted = refjax.jit(refjax.grad(loss(lax), argnums=(0, 1)))(signal, kernel)
    for g, e in zip(jitted, expected):
        _close(g, e, 1e-4, 1e-4)


@pytest.mark.parametrize("fft_type,lengths", [("fft", (4, 6)), ("ifft", (5,)),
                                              ("irfft", (3, 7)), ("rfft", (2, 3, 4))])
def test_fft_types_and_their_vjps_match_jax_in_float64(fft_type, lengths):
    with enable_x64():
        shape = (2,) + lengths
        if fft_type == "irfft":
            shape = shape[:-1] + (lengths[-1] // 2 + 1,)
        x = RNG.normal(size=shape) + (0 if fft_type == "rfft" else 1j * RNG.normal(size=shape))
        out, pull = refjax.vjp(lambda v: lax.fft(v, fft_type, lengths), x)
        jout, jpull = jax.vjp(lambda v: jax.lax.fft(v, fft_type, lengths), x)
        _close(out, jout, 1e-12, 1e-12)
        ct = RNG.normal(size=out.shape) + (1j * RNG.normal(size=out.shape)
                                          if np.iscomplexobj(jout) else 0)
        _close(pull(ct)[0], jpull(ct)[0], 1e-12, 1e-12)


def test_fft_stages_as_jax_stages_it():
    x = np.ones((3, 8), np.float32)
    text = str(refjax.make_jaxpr(lambda v: lax.fft(v, "rfft", (8,)))(x))
    assert "jit[" in text and "name=fft" in text
    assert "fft[fft_lengths=(8,) fft_type=2]" in text


# ---------------------------------------------------------------- top_k

def test_top_k_values_indices_and_gradient_match_jax():
    x = RNG.permutation(40).reshape(5, 8).astype(np.float32) / 7
    for axis in (-1, 0):
        values, idx = lax.top_k(x, 3, axis=axis)
        jv, ji = jax.lax.top_k(x, 3, axis=axis)
        np.testing.assert_array_equal(np.asarray(values), np.asarray(jv))
        np.testing.assert_array_equal(np.asarray(idx), np.asarray(ji))

        def loss(lx):
            return lambda v: (lx.top_k(v, 3, axis=axis)[0] ** 3).sum()
        _close(refjax.grad(loss(lax))(x), jax.grad(loss(jax.lax))(x), 1e-6)
        _close(refjax.jit(refjax.grad(loss(lax)))(x), jax.grad(loss(jax.lax))(x), 1e-6)


def test_top_k_orders_nan_and_signed_zeros_as_xla():
    x = np.array([1.0, np.nan, 3.0, -np.nan, np.inf, 0.0, -0.0, -np.inf], np.float32)
    values, idx = lax.top_k(x, 8)
    jv, ji = jax.lax.top_k(x, 8)
    np.testing.assert_array_equal(np.asarray(idx), np.asarray(ji))
    np.testing.assert_array_equal(np.signbit(np.asarray(values)), np.signbit(np.asarray(jv)))


def test_approx_top_k_is_exact_on_both_backends():
    x = RNG.normal(size=(4, 50)).astype(np.float32)
    for fn, order in ((lax.approx_max_k, -1), (lax.approx_min_k, 1)):
        values, idx = fn(x, 5)
        expected = np.argsort(order * x, axis=-1, kind="stable")[:, :5]
        np.testing.assert_array_equal(np.asarray(idx), expected)
        np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, expected, -1))


# ---------------------------------------------------------------- gamma and beta sampling

_ALPHAS = np.array([0.2, 0.7, 1.0, 2.5, 9.0], np.float32)


def _shape_args(name):
    return (_ALPHAS, _ALPHAS[::-1].copy()) if name == "beta" else (_ALPHAS,)


def _loss(rnd, key, name):
    return lambda *ab: (getattr(rnd, name)(key, *ab) ** 2).sum()


@functools.cache
def _jax_sampler(name):
    """JAX's samples and gradients (computed once for both backends: JAX compiles slowly;
    recorded: tests/jax_recordings.py)."""
    return on_jax(_sampled, name)


def _sampled(jax, name):
    key, args = jax.random.PRNGKey(7), _shape_args(name)
    grads = jax.grad(_loss(jax.random, key, name), tuple(range(len(args))))(*args)
    return np.asarray(getattr(jax.random, name)(key, *args)), [np.asarray(g) for g in grads]


@pytest.mark.parametrize("name", ["gamma", "beta"])  # beta draws through loggamma
def test_gamma_and_beta_samples_and_gradients_match_jax(name):
    key, args = refjax.random.PRNGKey(7), _shape_args(name)
    samples, grads = _jax_sampler(name)
    _close(refjax.jit(getattr(refjax.random, name))(key, *args), samples, 4e-6, 1e-7)
    ours = refjax.jit(refjax.grad(_loss(refjax.random, key, name), tuple(range(len(args)))))(*args)
    for o, t in zip(ours, grads):
        _close(o, t, 2e-4, 1e-6)  # XLA's random_gamma_grad: a few hundred float32 ulps


def test_loggamma_is_the_log_of_gamma_on_the_same_key():
    """JAX's documented identity: exp(loggamma(key, a)) == gamma(key, a) to dtype precision."""
    key = refjax.random.PRNGKey(5)
    _close(np.exp(np.asarray(refjax.random.loggamma(key, _ALPHAS), np.float64)),
           refjax.random.gamma(key, _ALPHAS), 1e-5)


@pytest.mark.backends("numpy_ref")  # the xla backend's values are JAX's (test above)
def test_gamma_is_distributed_as_gamma():
    """Independent of JAX: the sample mean and variance of Gamma(a) are both a."""
    x = np.asarray(refjax.jit(refjax.random.gamma, static_argnums=2)(
        refjax.random.PRNGKey(1), 3.0, (4000,)))
    assert abs(x.mean() - 3.0) < 0.15 and abs(x.var() - 3.0) < 0.5


# ---------------------------------------------------------------- rng_bit_generator

@pytest.mark.parametrize("shape", [(), (5,), (3, 3), (1, 5), (2, 3), (2, 2, 2), (0, 3)])
def test_rng_bit_generator_threefry_is_bit_exact(shape):
    key = np.array([1, 2, 3, 4], np.uint32)
    with enable_x64():
        for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
            ours = lax.rng_bit_generator(key, shape, dtype, lax.RandomAlgorithm.RNG_THREE_FRY)
            theirs = jax.lax.rng_bit_generator(key, shape, dtype,
                                               jax.lax.RandomAlgorithm.RNG_THREE_FRY)
            for o, t in zip(ours, theirs):
                assert np.asarray(o).dtype == np.asarray(t).dtype
                np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


def test_rng_bit_generator_default_gives_fresh_uniform_bits():
    key = np.array([0, 0, 0, 9], np.uint32)
    new_key, bits = lax.rng_bit_generator(key, (4000,), np.uint8)
    assert not np.array_equal(np.asarray(new_key), key)
    counts = np.bincount(np.asarray(bits), minlength=256)
    assert counts.max() < 40 and counts.min() > 2  # ~15.6 per value


# ---------------------------------------------------------------- errors

@pytest.mark.backends()
@pytest.mark.parametrize("call,jax_call,error,words", [
    (lambda: lax.fft(np.ones(4, np.complex64), "rfft", (4,)),
     lambda: jax.lax.fft(np.ones(4, np.complex64), "rfft", (4,)), ValueError, ("rfft",)),
    (lambda: lax.top_k(np.ones(4, np.complex64), 2),
     lambda: jax.lax.top_k(np.ones(4, np.complex64), 2), ValueError, ("top_k", "complex")),
    (lambda: lax.igamma(np.ones(2, np.float32), np.ones(2, np.int32)),
     lambda: jax.lax.igamma(np.ones(2, np.float32), np.ones(2, np.int32)), TypeError,
     ("igamma", "float32", "int32")),
    (lambda: lax.bitcast_convert_type(np.ones(2, bool), np.uint8),
     lambda: jax.lax.bitcast_convert_type(np.ones(2, bool), np.uint8), TypeError,
     ("bitcast_convert_type", "bool", "uint8")),
    (lambda: lax.population_count(np.ones(2, np.float32)),
     lambda: jax.lax.population_count(np.ones(2, np.float32)), TypeError,
     ("population_count", "float32")),
    (lambda: lax.complex(np.ones(2, np.float16), np.ones(2, np.float16)),
     lambda: jax.lax.complex(np.ones(2, np.float16), np.ones(2, np.float16)), TypeError,
     ("complex", "float16")),
])
def test_errors_are_jaxs_and_name_the_operation(call, jax_call, error, words):
    with pytest.raises(error) as info:
        call()
    assert all(w in str(info.value) for w in words), info.value
    with pytest.raises(error):
        jax_call()


@pytest.mark.backends()
def test_rng_bit_generator_bad_key_is_a_type_error_where_jax_asserts():
    """JAX raises a bare AssertionError ([2], IntegerType(ui32)); refjax names the operation."""
    with pytest.raises(AssertionError):
        jax.lax.rng_bit_generator(np.array([1, 2], np.uint32), (5,))
    with pytest.raises(TypeError, match="rng_bit_generator.*uint32\\[4\\]"):
        lax.rng_bit_generator(np.array([1, 2], np.uint32), (5,))


@pytest.mark.backends()
def test_rng_uniform_rejects_int8_where_xla_aborts():
    """XLA:CPU aborts the whole process on int8 bounds (RngExpander check failure), so JAX is
    not called here; refjax raises a TypeError naming the operation and dtype."""
    with pytest.raises(TypeError, match="rng_uniform.*int8"):
        lax.rng_uniform(np.int8(0), np.int8(5), (3,))


# ---------------------------------------------------------------- lax.<name>_p

# JAX 0.10.2's lax primitives refjax does not define, each with the reason.
MISSING = {
    "after_all_p": "XLA tokens order side effects; refjax has no token type (its interpreter "
                   "runs effects in program order)",
    "create_token_p": "XLA tokens (see after_all_p)",
    "dce_sink_p": "JAX's marker keeping values alive through its dead-code elimination",
    "eq_to_p": "shape polymorphism's symbolic-dimension comparisons; refjax has none",
    "le_to_p": "shape polymorphism (see eq_to_p)",
    "lt_to_p": "shape polymorphism (see eq_to_p)",
    "stage_p": "JAX's pipeline-stage marker of its internal staging",
}


@pytest.mark.backends()
def test_every_jax_lax_primitive_is_exported_or_listed_with_a_reason():
    jax_names = {n for n in dir(jax.lax) if n.endswith("_p")}
    ours = {n for n in dir(lax) if n.endswith("_p")}
    assert sorted(jax_names - ours - set(MISSING)) == [], "JAX primitives refjax lacks"
    assert sorted(set(MISSING) & ours) == [], "listed as missing but exported: update MISSING"
    for name in jax_names & ours:
        assert getattr(lax, name).name == getattr(jax.lax, name).name, name


@pytest.mark.backends()
def test_stop_gradient_stages_as_jax():
    ours = refjax.make_jaxpr(lax.stop_gradient)(np.float32(1))
    theirs = jax.make_jaxpr(jax.lax.stop_gradient)(np.float32(1))
    assert [e.primitive.name for e in ours.jaxpr.eqns] == \
        [e.primitive.name for e in theirs.jaxpr.eqns] == ["stop_gradient"]
