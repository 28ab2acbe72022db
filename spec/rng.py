"""Spec entries of rng_bit_generator, rng_uniform and the typed-key marks random_wrap and
random_unwrap (core/primitives/rng.py)."""
import numpy as np
from hypothesis import strategies as st

from .base import UNCHECKED, Arg, Invalid, Signature, kind, np_dtype, shapes
from .sorting import OwnDtypeErrors


def _bits_signature(dtype, diff):
    @st.composite
    def sig(draw):
        bits = draw(st.sampled_from(("uint8", "uint16", "uint32")))
        return Signature((Arg((4,), "uint32", False, st.integers(0, 2 ** 32 - 1)),),
                         {"algorithm": draw(st.sampled_from((0, 1, 2))), "dtype": np_dtype(bits), "out_sharding": None,
                          "shape": draw(shapes())})
    return sig()


def _bits_apply(key, *, algorithm, dtype, out_sharding, shape):
    from refjax import lax
    return list(lax.rng_bit_generator(key, shape, dtype, algorithm))


def _bits_reference(jax, key, *, algorithm, dtype, out_sharding, shape):
    return list(jax.lax.rng_bit_generator(key, shape, dtype, jax.lax.RandomAlgorithm(algorithm)))


_KEY = np.zeros((4,), np.uint32)
_BITS = {"algorithm": 1, "dtype": np.dtype(np.uint32), "out_sharding": None, "shape": (2,)}


def _uniform_signature(dtype, diff):
    @st.composite
    def sig(draw):
        if kind(dtype) == "f":
            lo, hi = st.floats(-3.0, 0.0, width=16), st.floats(1.0, 4.0, width=16)
        else:
            lo, hi = st.integers(0, 3), st.integers(5, 9)
        return Signature((Arg((), dtype, False, lo), Arg((), dtype, False, hi)),
                         {"shape": draw(shapes())})
    return sig()


def _in_range(lax, a, b, shape):
    """The values are nondeterministic (XLA's RngUniform): compare where they fall, in
    [a, b), not what they are."""
    x = lax.rng_uniform(a, b, shape)
    return lax.bitwise_and(lax.ge(x, lax.broadcast(a, shape)), lax.lt(x, lax.broadcast(b, shape)))


def _uniform_apply(a, b, *, shape):
    from refjax import lax
    return _in_range(lax, a, b, shape)


def _key_data_signature(params):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            data = Arg(draw(shapes()) + (2,), "uint32", False, st.integers(0, 2 ** 32 - 1))
            return Signature((data,), params)
        return sig()
    return signature


def _key_mark(name, params):
    """The entry of a typed-key mark: an identity on uint32 key data (JAX's random_wrap and
    random_unwrap change the dtype instead; the reference is the identity)."""
    def apply(data, **params):
        from refjax.core.primitives import rng
        return getattr(rng, name)(data, **params)
    return OwnDtypeErrors(
        name=name, dtypes=("uint32",), family="rng", signature=_key_data_signature(params),
        apply=apply, reference=lambda jax, data, **params: data, exact=True, nondiff="zero",
        invalid=(Invalid("int32 key data", (np.zeros((2,), np.int32),), params, TypeError,
                         UNCHECKED),),
        notes="bound by jax.random only under jax_debug_key_reuse, where the key-reuse check "
              "reads it (core/key_reuse.py); an identity on the key data")


SPECS = [
    _key_mark("random_wrap", {"impl": "fry"}),
    _key_mark("random_unwrap", {"consumed_by": None}),
    OwnDtypeErrors(
        name="rng_bit_generator", dtypes=("uint32",), family="rng", signature=_bits_signature,
        apply=_bits_apply, reference=_bits_reference, exact=True, nondiff="zero",
        invalid=(Invalid("an int32 key", (_KEY.astype(np.int32),), _BITS, TypeError,
                         AssertionError),
                 Invalid("a uint32[2] key", (_KEY[:2],), _BITS, TypeError, AssertionError),
                 Invalid("int32 bits", (_KEY,), dict(_BITS, dtype=np.dtype(np.int32)))),
        notes="RNG_THREE_FRY and RNG_PHILOX: XLA's CPU streams bit for bit, RNG_DEFAULT being "
              "Philox there (the samples draw all three; tests/test_prng_impls.py checks uint64 "
              "too). JAX raises a bare AssertionError for a bad key; refjax a TypeError naming "
              "the operation"),
    OwnDtypeErrors(
        name="rng_uniform", dtypes=("float16", "float32", "int32", "uint32"), family="rng",
        signature=_uniform_signature, apply=_uniform_apply, exact=True, nondiff="zero",
        reference=lambda jax, a, b, *, shape: _in_range(jax.lax, a, b, shape),
        invalid=(Invalid("int8 bounds", (np.int8(0), np.int8(5)), {"shape": (2,)}, TypeError,
                         UNCHECKED),
                 Invalid("bounds of two dtypes", (np.float32(0), np.int32(5)), {"shape": (2,)},
                         TypeError, UNCHECKED)),
        notes="nondeterministic, as XLA's RngUniform: the spec compares the in-range indicator "
              "of the values, not the values; XLA aborts the process for int8 bounds (not "
              "compared with JAX), refjax raises TypeError"),
]
