"""XLA's random-number primitives: rng_bit_generator (counter-based, keyed by uint32[4]) and
rng_uniform (stateful, nondeterministic), with their rules and lax functions; random_wrap and
random_unwrap, the marks of typed keys under jax_debug_key_reuse."""
import enum
import operator

import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..sharding import NamedSharding
from ..sharding_types import out_type, param_spec
from ..avals import ShapedArray
from ..key_reuse import Signature, Sink, Source
from ..primitive import make_primitive
from ..transforms.ad import defnondiff
from ..transforms.batching import bdim_at_front, defvectorized
from . import structural as st


class RandomAlgorithm(enum.IntEnum):
    """lax.RandomAlgorithm: the bit generator rng_bit_generator runs (printed by name)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


rng_bit_generator_p = make_primitive("rng_bit_generator", multiple_results=True)
_BIT_DTYPES = tuple(np.dtype(d) for d in ("uint8", "uint16", "uint32", "uint64"))


@rng_bit_generator_p.def_abstract_eval
def _rng_bit_generator_abstract_eval(key, *, algorithm, dtype, out_sharding, shape):
    """JAX fails here with a bare AssertionError; refjax names the operation."""
    if np.dtype(key.dtype) != np.uint32 or key.shape != (4,):
        raise TypeError(f"rng_bit_generator: the key must be a uint32[4] array, got "
                        f"{key.str_short()}")
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name}; it "
                        "generates uint8, uint16, uint32 or uint64 bits")
    return [ShapedArray((4,), key.dtype), ShapedArray(tuple(shape), np.dtype(dtype))]


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(new key, random bits of `shape` and unsigned `dtype`) from a uint32[4] key
    (lax.rng_bit_generator)."""
    shape = tuple(map(operator.index, shape))
    dtype = dtypes.canonicalize_dtype(dtype)
    typed_as = out_type(out_sharding, "rng_bit_generator")  # a spec of the context mesh
    return tuple(rng_bit_generator_p.bind(
        key, algorithm=RandomAlgorithm(algorithm), dtype=np.dtype(dtype),
        out_sharding=out_sharding if typed_as is None else typed_as, shape=shape))


def unrolled_batch(prim):
    """Batching by one bind per batch member, stacked: for primitives whose members no single
    wider bind reproduces (a key's stream, a fresh uniform draw, a ragged exchange)."""
    prim.def_batch(unrolled_batch_rule(prim))


def unrolled_batch_rule(prim):
    """The batching rule of unrolled_batch."""
    def batch(axis_data, vals, dims, **params):
        vals = [v if d is None else bdim_at_front(v, d, axis_data.size)
                for v, d in zip(vals, dims)]
        members = [prim.bind(*[v if d is None else st.index_in_dim(v, i, 0)
                               for v, d in zip(vals, dims)], **params)
                   for i in range(axis_data.size)]
        outs = [_stack([m[k] if prim.multiple_results else m for m in members])
                for k in range(len(members[0]) if prim.multiple_results else 1)]
        n = len(outs)
        return (outs, [0] * n) if prim.multiple_results else (outs[0], 0)
    return batch


def _stack(values):
    return st.concatenate([st.expand_dims(v, (0,)) for v in values], 0)


def _rng_bit_generator_sharding(in_specs, in_avals, out_avals, *, out_sharding, **_):
    """The new key typed as the key, the bits as out_sharding names (else replicated), as
    JAX's rule."""
    bits = param_spec(out_sharding, len(out_avals[1].shape)) \
        if isinstance(out_sharding, NamedSharding) else sp.replicated(out_avals[1])
    return [in_specs[0], bits]


rng_bit_generator_p.def_sharding(_rng_bit_generator_sharding)
defnondiff(rng_bit_generator_p)
unrolled_batch(rng_bit_generator_p)


# ---------------------------------------------------------------- rng_uniform

rng_uniform_p = make_primitive("rng_uniform")
_UNIFORM_DTYPES = tuple(np.dtype(d) for d in ("float32", "float64", "int32", "uint32", "int64",
                                              "uint64")) + (dtypes.float16, dtypes.bfloat16)


@rng_uniform_p.def_abstract_eval
def _rng_uniform_abstract_eval(a, b, *, shape):
    """XLA aborts the process on the integer types it lacks (int8...); refjax rejects them."""
    if a.dtype != b.dtype:
        raise TypeError(f"rng_uniform: a and b must have one dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    if a.shape or b.shape:
        raise TypeError(f"rng_uniform: a and b must be scalars, got shapes {a.shape} and "
                        f"{b.shape}")
    if np.dtype(a.dtype) not in _UNIFORM_DTYPES:
        raise TypeError(f"rng_uniform does not accept dtype {np.dtype(a.dtype).name}; it takes "
                        "float16, bfloat16, float32, float64, (u)int32 or (u)int64 bounds")
    return ShapedArray(tuple(shape), a.dtype, weak_type=a.weak_type and b.weak_type)


def rng_uniform(a, b, shape):
    """Values uniform in [a, b) of `shape` (lax.rng_uniform): stateful and nondeterministic,
    as XLA's RngUniform (use jax.random for reproducible streams)."""
    from .elementwise import lift_scalars, weak_scalar
    a, b = lift_scalars("rng_uniform", (a, b))
    a, b = (weak_scalar(v, dtypes.python_scalar_dtype(v)) if dtypes.is_python_scalar(v) else v
            for v in (a, b))
    return rng_uniform_p.bind(a, b, shape=tuple(map(operator.index, shape)))


rng_uniform_p.def_sharding(sp.replicated_outputs)
defnondiff(rng_uniform_p, "rng_uniform draws random values: it has no derivative")
unrolled_batch(rng_uniform_p)


# ---------------------------------------------------------------- typed keys under key reuse

# Under jax_debug_key_reuse, api/random marks where typed keys are made and read, since the
# key data they hold is a plain uint32 array to the rest of the jaxpr: both are identities.
random_wrap_p = make_primitive("random_wrap")
random_unwrap_p = make_primitive("random_unwrap")


def _key_data_aval(data, **params):
    if np.dtype(data.dtype) != np.uint32:
        raise TypeError(f"random_wrap/random_unwrap: key data must be uint32, got "
                        f"{data.str_short()}")
    return data


def random_wrap(data, impl):
    """Typed keys of the implementation tagged `impl` over uint32 key data: a fresh key."""
    return random_wrap_p.bind(data, impl=impl)


def random_unwrap(data, consumed_by=None):
    """The uint32 data of typed keys; `consumed_by` names the JAX operation consuming them
    ('jit' for a sampler, 'random_split'), None when reading does not consume (key_data)."""
    return random_unwrap_p.bind(data, consumed_by=consumed_by)


for _marker in (random_wrap_p, random_unwrap_p):
    _marker.def_abstract_eval(_key_data_aval)
    defnondiff(_marker)
    defvectorized(_marker)
    _marker.def_sharding(sp.elementwise)
random_wrap_p.def_key_reuse(lambda avals, keys, **params: Signature(Source(0)))


@random_unwrap_p.def_key_reuse
def _unwrap_key_reuse(avals, keys, *, consumed_by):
    """The operand is a key (consumed when `consumed_by` names an operation), the result not."""
    sinks = (Sink(0),) if consumed_by else ()
    return Signature(*sinks, keys_out=(), name=consumed_by)
