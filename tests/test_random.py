"""refjax.random against jax.random (threefry2x32, partitionable): the same keys, bits, integers and
floats, eagerly, under jit and vmap, on both backends.

Bits, keys, integers, uniform floats and every sampler built from them without transcendental
functions match JAX bit for bit. Samplers through log, erf or erf_inv (normal, gumbel, ...) match
to a few ulps: numpy_ref evaluates those functions more accurately than XLA's polynomials (and
XLA's own results shift by an ulp with the surrounding fusion)."""
import contextlib
import functools

import numpy as np
import pytest
from jax_recordings import as_numpy, fingerprint, recorded
from hypothesis import given, settings, strategies as st

import jax
import jax.numpy as jjnp
import jax.random as jr

import refjax
import refjax.numpy as rnp
import refjax.random as rr
from refjax.core.config import enable_x64

seeds = st.integers(-2 ** 63, 2 ** 63 - 1)
small_seeds = st.integers(0, 2 ** 32 - 1)
bounds = st.floats(-1e4, 1e4, width=32)

# JAX compiles every sampler afresh for each shape, dtype and x64 mode, which would dominate this
# file's run time; so the reference draws are a few jitted bundles, and those returning only
# integers, bits and booleans are compiled at XLA's lowest backend optimisation level (3x faster).
# Float draws keep the default level: at level 0 XLA stops fusing multiply-adds into FMAs, which
# changes uniform's last bit (test_bundles_equal_plain_jax checks the bundles).
FAST_COMPILE = {"xla_backend_optimization_level": 0}


@contextlib.contextmanager
def x64(on):
    """64-bit types on (or off) in refjax and JAX together."""
    with enable_x64(on), jax.enable_x64(on):
        yield


def same(actual, expected):
    """Bit-for-bit equality of values, shapes and dtypes."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (
        f"{actual.shape}{actual.dtype} != {expected.shape}{expected.dtype}")
    np.testing.assert_array_equal(actual, expected)


def close(actual, expected, ulps):
    """Agreement to `ulps` units in the last place of max(|expected|, 1)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    wide = np.float64 if actual.dtype.itemsize < 8 else np.longdouble
    a, e = actual.astype(wide), expected.astype(wide)
    tol = ulps * np.spacing(np.maximum(np.abs(expected), 1).astype(actual.dtype)).astype(wide)
    assert np.all(np.abs(a - e) <= tol), f"max error {np.max(np.abs(a - e))}, tolerance {tol.max()}"


# Samplers through transcendental functions, and their tolerance in ulps. XLA's float32 erf_inv
# is up to ~90 ulps off in the tails (numpy_ref's is within 2), and its float64 log and log1p up
# to ~250; its results also move by an ulp or two with fusion and optimisation level.
ULPS = {"normal": 128, "truncated_normal": 128, "complex_normal": 128, "gumbel": 8,
        "gumbel_high": 8, "exponential": 8, "logistic": 8, "laplace": 8}
ULPS_64 = 512


def draws(random, xnp, key, lo, hi, p, data, ilo, ihi):
    """One draw of (nearly) every function, written once for jax.random and refjax.random."""
    x = xnp.arange(12.0).reshape(3, 4)
    logits = xnp.arange(12.0).reshape(3, 4) / 5
    w = xnp.array([1, 0, 3, 2, 2], "float32") / 8  # dyadic: the cumsum is exact
    return dict(
        split=random.split(key, 3), split_shape=random.split(key, (2, 3)),
        split_none=random.split(key, 0), fold_in=random.fold_in(key, data),
        bits=random.bits(key, (2, 3)), bits_scalar=random.bits(key),
        bits_empty=random.bits(key, (2, 0)), bits8=random.bits(key, (5,), "uint8"),
        bits16=random.bits(key, (5,), "uint16"),
        uniform=random.uniform(key, (2, 3)),
        uniform_scalar=random.uniform(key, (), "float32", lo, hi),
        uniform_range=random.uniform(key, (2, 3), minval=lo, maxval=hi),
        uniform_bcast=random.uniform(key, (2, 3), minval=xnp.array([lo, 0.0, -1.0]),
                                     maxval=hi + 1),
        uniform16=random.uniform(key, (5,), "float16", lo / 100, hi / 100),
        uniform_bf16=random.uniform(key, (5,), "bfloat16", lo / 100, hi / 100),
        randint=random.randint(key, (2, 3), ilo, ihi),
        randint8=random.randint(key, (5,), ilo, ihi, "int8"),
        randint_u8=random.randint(key, (5,), ilo, ihi, "uint8"),
        randint_u16=random.randint(key, (5,), 0, 65536, "uint16"),
        randint_full=random.randint(key, (5,), -2 ** 31, 2 ** 31 - 1),
        randint_bcast=random.randint(key, (2, 3), xnp.array([ilo, -5, 0]), ihi),
        bernoulli=random.bernoulli(key, p, (2, 3)),
        bernoulli_high=random.bernoulli(key, p, (2, 3), "high"),
        rademacher=random.rademacher(key, (2, 3)),
        permutation=random.permutation(key, 9), permutation_one=random.permutation(key, 1),
        permutation_axis=random.permutation(key, x, 1),
        permutation_independent=random.permutation(key, x, 1, True),
        categorical=random.categorical(key, logits),
        categorical0=random.categorical(key, logits, 0),
        categorical_shape=random.categorical(key, logits, 0, (2, 4)),
        categorical_noreplace=random.categorical(key, logits, -1, (2, 3), replace=False),
        choice=random.choice(key, 5, (3,)), choice_noreplace=random.choice(key, 5, (3,), False),
        choice_p=random.choice(key, 5, (4,), True, w),
        choice_p_noreplace=random.choice(key, 5, (3,), False, w),
        choice_axis=random.choice(key, x, (2,), False, axis=1),
        normal=random.normal(key, (2, 3)), gumbel=random.gumbel(key, (2, 3)),
        gumbel_high=random.gumbel(key, (2, 3), mode="high"),
        exponential=random.exponential(key, (2, 3)), logistic=random.logistic(key, (2, 3)),
        laplace=random.laplace(key, (2, 3)),
        truncated_normal=random.truncated_normal(key, lo / 1e4 - 1, hi / 1e4 + 1.5, (2, 3)),
        complex_normal=random.normal(key, (3,), "complex64"))


def draws_64(random, xnp, key, lo, hi, p, data, ilo, ihi):
    """The draws whose dtype or bits change with x64."""
    return dict(
        bits=random.bits(key, (2, 3)), uniform=random.uniform(key, (2, 3)),
        uniform_range=random.uniform(key, (2, 3), minval=lo, maxval=hi),
        uniform32_range=random.uniform(key, (2, 3), "float32", lo, hi),
        randint=random.randint(key, (2, 3), ilo, ihi),
        randint_u32_full=random.randint(key, (5,), 0, 2 ** 32, "uint32"),
        bernoulli=random.bernoulli(key, p, (2, 3)), choice=random.choice(key, 5, (3,)),
        normal=random.normal(key, (2, 3)), exponential=random.exponential(key, (2, 3)),
        laplace=random.laplace(key, (2, 3)), fold_in=random.fold_in(key, data))


@functools.lru_cache(maxsize=None)
def _jax_bundle(which, exact_floats, on):
    fun = functools.partial({"draws": draws, "draws_64": draws_64}[which], jr, jjnp)
    pick = lambda *args: {k: v for k, v in fun(*args).items()
                          if (k.startswith("uniform") and "float" in str(v.dtype)) == exact_floats}
    return jax.jit(pick, compiler_options=None if exact_floats else FAST_COMPILE)


def jax_draws(which, key, *args):
    """JAX's values of the bundle `which` ("draws" or "draws_64") in the current x64 mode: the
    uniform floats compiled as JAX compiles them, the rest (exact integers, or floats through
    transcendental functions that are compared to ulps anyway) compiled fast."""
    on = jax.config.jax_enable_x64

    def draw():
        return as_numpy({**_jax_bundle(which, False, on)(key, *args),
                         **_jax_bundle(which, True, on)(key, *args)})
    # recorded (tests/jax_recordings.py): compiling the bundles is most of these tests' time
    return recorded(which, draw, fingerprint(which, on, np.asarray(key), *args))


def check_draws(actual, expected, on=False):
    assert actual.keys() == expected.keys()
    for name in expected:
        a, e = np.asarray(actual[name]), np.asarray(expected[name])
        if name in ULPS and e.dtype.kind == "c":
            close(a.real, e.real, ULPS[name]), close(a.imag, e.imag, ULPS[name])
        elif name in ULPS:
            close(a, e, ULPS_64 if e.dtype == np.float64 else ULPS[name])
        else:
            same(a, e)


# ---------------------------------------------------------------- keys and seeds

@given(seeds, st.booleans())
def test_prngkey_and_key_match_jax(seed, on):
    with x64(on):
        same(rr.PRNGKey(seed), jr.PRNGKey(seed))
        same(rr.key_data(rr.key(seed)), jr.key_data(jr.key(seed)))


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64"])
def test_array_seeds_match_jax(dtype):
    info = np.iinfo(dtype)
    with x64(True):
        for v in (0, 1, info.max, info.min, info.max // 3):
            seed = np.array(v, dtype)
            same(rr.PRNGKey(seed), jr.PRNGKey(seed))


# ---------------------------------------------------------------- every sampler against JAX

params = dict(seed=small_seeds, lo=bounds, hi=bounds, p=st.floats(0, 1, width=32),
              data=small_seeds, ilo=st.integers(-300, 300), ihi=st.integers(-300, 300))


def _args(seed, lo, hi, p, data, ilo, ihi):
    return (np.float32(lo), np.float32(hi), np.float32(p), np.uint32(data), ilo, ihi)


@settings(max_examples=6)
@given(**params)
def test_draws_match_jax(seed, lo, hi, p, data, ilo, ihi):
    """Bits, keys, integers and floats equal JAX's bit for bit; transcendental samplers to ulps."""
    args = _args(seed, lo, hi, p, data, ilo, ihi)
    expected = jax_draws("draws", jr.PRNGKey(seed), *args)
    check_draws(draws(rr, rnp, rr.PRNGKey(seed), *args), expected)


@settings(max_examples=3)
@given(**params)
def test_draws_match_jax_with_x64(seed, lo, hi, p, data, ilo, ihi):
    args = _args(seed, lo, hi, p, data, ilo, ihi)
    with x64(True):
        expected = jax_draws("draws_64", jr.PRNGKey(seed), *args)
        check_draws(draws_64(rr, rnp, rr.PRNGKey(seed), *args), expected)


def test_bundles_equal_plain_jax():
    """The fast-compiled, jitted reference gives what plain eager JAX calls give."""
    key, args = jr.PRNGKey(5), (np.float32(-3.3), np.float32(7.1), np.float32(0.3),
                                np.uint32(9), -7, 300)
    bundle = jax_draws("draws", key, *args)
    same(bundle["uniform_range"], jr.uniform(key, (2, 3), minval=args[0], maxval=args[1]))
    same(bundle["randint"], jr.randint(key, (2, 3), -7, 300))


# ---------------------------------------------------------------- typed keys

def test_typed_keys_behave_like_jax():
    """Typed keys carry the same data as raw keys (checked against JAX above)."""
    k, raw = rr.key(5), rr.PRNGKey(5)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == str(jr.key(5).dtype) == "key<fry>"
    ks = rr.split(k, 3)
    assert isinstance(ks, rr.PRNGKeyArray) and ks.shape == (3,) and len(ks) == 3
    same(rr.key_data(ks), rr.split(raw, 3))
    same(rr.key_data(ks[1:]), rr.split(raw, 3)[1:])
    a, b, c = ks
    same(rr.uniform(b, (4,)), rr.uniform(rr.split(raw, 3)[1], (4,)))
    same(rr.key_data(rr.fold_in(c, 9)), rr.fold_in(rr.split(raw, 3)[2], 9))
    assert bool(rr.wrap_key_data(rr.key_data(a)) == a) and not bool(a == b)
    assert rr.key_impl(k) == rr.key_impl(raw) == "threefry2x32"
    assert "key<fry>" in repr(k) and rr.key_data(raw) is raw
    same(rr.key_data(rr.split(k, (2, 2)).reshape(4)), rr.split(raw, (2, 2)).reshape(4, 2))
    same(rr.key_data(rr.split(k, (2, 2))[..., 1]), rr.split(raw, (2, 2))[:, 1])


def test_typed_keys_pass_through_transformations():
    k = rr.key(1)
    keys_out = refjax.jit(rr.split)(k)
    assert isinstance(keys_out, rr.PRNGKeyArray) and keys_out.shape == (2,)
    same(rr.key_data(keys_out), rr.key_data(rr.split(k)))
    draws_v = refjax.vmap(lambda key: rr.normal(key, (2,)))(rr.split(k, 3))
    same(draws_v, np.stack([rr.normal(key, (2,)) for key in rr.split(k, 3)]))


# ---------------------------------------------------------------- transformations

SAMPLERS = {
    "bits": lambda k: rr.bits(k, (3,)),
    "uniform": lambda k: rr.uniform(k, (3,), minval=-2.0, maxval=5.5),
    "normal": lambda k: rr.normal(k, (3,)),
    "randint": lambda k: rr.randint(k, (3,), -4, 9),
    "bernoulli": lambda k: rr.bernoulli(k, 0.3, (3,)),
    "categorical": lambda k: rr.categorical(k, rnp.arange(4.0)),
    "permutation": lambda k: rr.permutation(k, 6),
    "choice": lambda k: rr.choice(k, 6, (2,), replace=False),
    "split": lambda k: rr.split(k, 3),
    "fold_in": lambda k: rr.fold_in(k, 17),
    "truncated_normal": lambda k: rr.truncated_normal(k, -1.0, 2.0, (3,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_equals_eager(name):
    k = rr.PRNGKey(23)
    same(refjax.jit(SAMPLERS[name])(k), SAMPLERS[name](k))


@pytest.mark.parametrize("name", ["uniform", "randint", "permutation", "split"])
def test_vmap_over_keys_equals_loop(name):
    keys_r = rr.split(rr.PRNGKey(4), 3)
    same(refjax.vmap(SAMPLERS[name])(keys_r), np.stack([SAMPLERS[name](k) for k in keys_r]))


def test_vmap_of_uniform_over_split_keys_matches_jax():
    jfun = jax.jit(jax.vmap(lambda k: jr.uniform(k, (3,), minval=-2.0, maxval=5.5)))
    expected = jfun(jr.split(jr.PRNGKey(4), 3))
    same(refjax.vmap(SAMPLERS["uniform"])(rr.split(rr.PRNGKey(4), 3)), expected)
    same(refjax.jit(refjax.vmap(SAMPLERS["uniform"]))(rr.split(rr.PRNGKey(4), 3)), expected)


def test_vmap_over_fold_in_data_and_seeds():
    data = np.arange(4, dtype=np.uint32)
    same(refjax.vmap(rr.fold_in, in_axes=(None, 0))(rr.PRNGKey(2), data),
         np.stack([rr.fold_in(rr.PRNGKey(2), d) for d in data]))
    same(refjax.vmap(rr.PRNGKey)(np.arange(-2, 2)),
         np.stack([rr.PRNGKey(s) for s in np.arange(-2, 2)]))


def test_make_jaxpr_stages_a_sampler():
    closed = refjax.make_jaxpr(lambda k: rr.uniform(k, (2, 3)))(rr.PRNGKey(0))
    text = str(closed)
    assert "u32[2]" in text and "f32[2,3]" in text and "shift_right_logical" in text


def test_grad_of_reparameterised_samples():
    k = rr.PRNGKey(8)
    eps = np.asarray(rr.normal(k, (4,)))
    loss = lambda loc, scale: rnp.sum(loc + scale * rr.normal(k, (4,)))
    d_loc, d_scale = refjax.grad(loss, argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose(float(d_loc), 4.0)
    np.testing.assert_allclose(float(d_scale), eps.sum(), rtol=1e-6)
    d_lo, d_hi = refjax.grad(lambda lo, hi: rnp.sum(rr.uniform(k, (4,), minval=lo, maxval=hi)),
                             argnums=(0, 1))(-1.0, 3.0)
    u = np.asarray(rr.uniform(k, (4,)))
    np.testing.assert_allclose([float(d_lo), float(d_hi)], [np.sum(1 - u), np.sum(u)], rtol=1e-6)


XLA_ARGS = (np.float32(-3.3), np.float32(7.1), np.float32(0.3), np.uint32(9), -7, 300)


@pytest.mark.backends("numpy_ref", "xla")
def test_both_backends_match_jax():
    expected = jax_draws("draws", jr.PRNGKey(99), *XLA_ARGS)
    rk = rr.PRNGKey(99)
    lo, hi = XLA_ARGS[:2]
    # Eagerly (one XLA compilation per operation on xla), then whole functions under jit.
    same(rr.split(rk, 3), expected["split"])
    same(rr.uniform(rk, (2, 3), minval=lo, maxval=hi), expected["uniform_range"])
    same(refjax.jit(lambda k: rr.randint(k, (2, 3), -7, 300))(rk), expected["randint"])
    same(refjax.jit(lambda k: rr.permutation(k, 9))(rk), expected["permutation"])
    close(refjax.jit(lambda k: rr.normal(k, (2, 3)))(rk), expected["normal"], ULPS["normal"])


@pytest.mark.backends()
def test_normal_is_bit_exact_on_the_xla_backend():
    """XLA's erf_inv is JAX's, so there refjax's normal draws are JAX's exactly."""
    with refjax.backend("xla"):
        same(rr.normal(rr.PRNGKey(12), (2, 3)), jr.normal(jr.PRNGKey(12), (2, 3)))


# ---------------------------------------------------------------- errors

ERRORS = [
    (lambda: rr.uniform(rnp.zeros(3, "uint32")), TypeError, "end with \\(2,\\)"),
    (lambda: rr.uniform(rnp.zeros(2, "int32")), TypeError, "uint32"),
    (lambda: rr.uniform(rnp.zeros((), "uint32")), TypeError, "ndim"),
    (lambda: rr.uniform([0, 0]), TypeError, "unexpected PRNG key type"),
    (lambda: rr.uniform(rnp.zeros((2, 2), "uint32")), ValueError, "single key"),
    (lambda: rr.normal(rr.split(rr.key(0))), ValueError, "single key"),
    (lambda: rr.split(rnp.zeros((3, 2), "uint32")), ValueError, "single key"),
    (lambda: rr.uniform(rr.PRNGKey(0), (3,), "int32"), ValueError, "float dtype"),
    (lambda: rr.bits(rr.PRNGKey(0), (3,), "int32"), ValueError, "unsigned"),
    (lambda: rr.randint(rr.PRNGKey(0), (3,), 0, 5, "float32"), TypeError, "integer dtypes"),
    (lambda: rr.randint(rr.PRNGKey(0), (3,), rnp.zeros(4, "int32"), 5), ValueError, "broadcast"),
    (lambda: rr.uniform(rr.PRNGKey(0), (3,), minval=rnp.zeros(4)), TypeError, "broadcast"),
    (lambda: rr.bernoulli(rr.PRNGKey(0), rnp.full((3,), 0.5), (2, 4)), ValueError, "broadcast"),
    (lambda: rr.bernoulli(rr.PRNGKey(0), 1), TypeError, "floating"),
    (lambda: rr.uniform(rr.PRNGKey(0), (-1,)), TypeError, "Shapes"),
    (lambda: rr.fold_in(rr.PRNGKey(0), rnp.arange(2)), TypeError, "scalar"),
    (lambda: rr.fold_in(rr.PRNGKey(0), -1), OverflowError, "uint32"),
    (lambda: rr.PRNGKey(1.5), TypeError, "integer"),
    (lambda: rr.PRNGKey(rnp.arange(2)), TypeError, "scalar seed"),
    (lambda: rr.key(rr.key(0)), TypeError, "PRNG key"),
    (lambda: rr.wrap_key_data(rnp.zeros(3, "uint32")), TypeError, "end with"),
    (lambda: rr.key(0, impl="nope"), ValueError, "unrecognized PRNG"),  # rbg exists now
    (lambda: rr.choice(rr.PRNGKey(0), 3, (4,), replace=False), ValueError, "larger sample"),
    (lambda: rr.choice(rr.PRNGKey(0), 3, 4), TypeError, "sequence"),
    (lambda: rr.permutation(rr.PRNGKey(0), 3.0), TypeError, "integer"),
    (lambda: rr.gumbel(rr.PRNGKey(0), mode="x"), ValueError, "mode"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_jax(i):
    fun, exc, match = ERRORS[i]
    with pytest.raises(exc, match=match):
        fun()


def _key_types(j):
    """jax.typeof of typed keys (the random page of JAX's docs prints it): eagerly, under
    jit and vmap, another implementation, and sharded on an Explicit mesh."""
    shown = []
    k = j.random.key(0)
    ks = j.random.split(k, 4)
    t = j.typeof(ks)
    shown += [str(j.typeof(k)), repr(t), t.shape, str(t.dtype), t.ndim,
              j.typeof(k) == j.typeof(j.random.key(1)), j.typeof(k) == t]
    j.jit(lambda a: shown.append(str(j.typeof(a))))(ks)
    j.vmap(lambda a: shown.append(str(j.typeof(a))))(ks)
    shown.append(str(j.typeof(j.random.key(0, impl="rbg"))))
    mesh = j.make_mesh((2,), ("x",), axis_types=(j.sharding.AxisType.Explicit,))
    with j.set_mesh(mesh):
        sk = j.device_put(ks, j.P("x"))
        shown.append(str(j.typeof(sk)))
        j.jit(lambda a: shown.append(str(j.typeof(a))))(sk)
    return shown


def test_typeof_of_typed_keys_as_jax():
    assert _key_types(refjax) == _key_types(jax)
