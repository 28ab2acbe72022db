"""refjax.random: jax.random's PRNGs (threefry2x32, threefry4x32, rbg, unsafe_rbg, philox4x32,
philox2x32) and samplers, written with refjax.lax only.

Every value is computed by refjax primitives (no NumPy maths on data), so the samplers run
eagerly on any backend and under jit, vmap, grad and make_jaxpr, and agree bit for bit with
JAX on CPU: threefry2x32 with `jax_threefry_partitionable=True` (JAX's default since 0.5), and
rbg/unsafe_rbg (`impl=`, or `jax_default_prng_impl`), whose bits come from
rng_bit_generator's default algorithm (XLA's Philox on CPU), threefry4x32, philox4x32 and philox2x32.

Keys come in two kinds, as in JAX:
- legacy raw keys (`PRNGKey`): uint32 arrays whose last dimension is the implementation's key
  size (2 for threefry2x32, 4 for rbg), read as keys of the default implementation;
- typed keys (`key`, `wrap_key_data`): a `PRNGKeyArray`, a thin wrapper around the same
  uint32[..., n] data whose shape drops the trailing n and whose dtype prints as key<fry>
  (key<rbg>, key<urbg>). It is a pytree node with that data as its only leaf and the
  implementation as its aux data, so transformations see a uint32 array (in JAX a key array is
  itself a leaf of a special dtype). Consequences: `in_axes`/`out_axes` must be non-negative for
  key arguments (a negative axis would count the hidden trailing axis), and `tree_leaves(key)`
  returns the key data.
Every function accepts both kinds and returns keys of the kind it was given.
"""
from .prng import (  # noqa: F401
    KeyDType, PRNGKey, PRNGKeyArray, bits, clone, fold_in, key, key_data, key_dtype, key_impl,
    split, wrap_key_data)
from . import rbg, philox, threefry4x32  # noqa: F401  (registers the other PRNGs)
from .gamma import beta, gamma, loggamma  # noqa: F401
from .distributions import (  # noqa: F401
    ball, cauchy, chisquare, dirichlet, double_sided_maxwell, f, generalized_normal, geometric,
    lognormal, maxwell, pareto, rayleigh, t, triangular, wald, weibull_min)
from .discrete import binomial, multinomial, poisson  # noqa: F401
from .samplers import (  # noqa: F401
    bernoulli, categorical, choice, exponential, gumbel, laplace, logistic, normal, permutation,
    rademacher, randint, truncated_normal, uniform)
from .linalg_samplers import multivariate_normal, orthogonal  # noqa: F401

# Names the single-module refjax.random had at module level (its own imports); kept so the
# namespace is unchanged.
import math  # noqa: F401
import operator  # noqa: F401
import warnings  # noqa: F401
from collections.abc import Sequence  # noqa: F401

import numpy as np  # noqa: F401

from ...core.array import Array  # noqa: F401
from ...core.pytree import register_pytree_node  # noqa: F401
from ...core.sequence import LeadingAxis  # noqa: F401
from ...core.trace import Tracer  # noqa: F401
from .. import lax  # noqa: F401
from .. import numpy as jnp  # noqa: F401

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone",
    "PRNGKeyArray", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli",
    "categorical", "choice", "permutation", "truncated_normal", "gumbel", "exponential",
    "logistic", "laplace", "rademacher", "gamma", "loggamma", "beta", "ball", "cauchy",
    "chisquare", "dirichlet", "double_sided_maxwell", "f", "generalized_normal", "geometric",
    "lognormal", "maxwell", "pareto", "rayleigh", "t", "triangular", "wald", "weibull_min",
    "poisson", "binomial", "multinomial", "multivariate_normal", "orthogonal",
]


import types  # noqa: E402

from .prng import reading_keys as _reading_keys  # noqa: E402
from ..out_sharding import samples_placed as _samples_placed  # noqa: E402

# JAX 0.10's samplers take out_sharding=; each one lays out its finished samples.
_SHARDED_SAMPLERS = (
    "ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare", "dirichlet",
    "exponential", "f", "gamma", "generalized_normal", "geometric", "gumbel", "laplace",
    "loggamma", "logistic", "lognormal", "maxwell", "multivariate_normal", "normal",
    "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint", "rayleigh", "t",
    "triangular", "truncated_normal", "uniform", "wald")
for _name in _SHARDED_SAMPLERS:
    globals()[_name] = _samples_placed(_name)(globals()[_name])
del _name

for _name in __all__:  # under jax_debug_key_reuse, each call reads its key once
    if isinstance(globals()[_name], types.FunctionType):
        globals()[_name] = _reading_keys(globals()[_name])
del _name, types

# The submodules are the implementation, not part of jax.random: out of the namespace.
# (gamma is the sampler: `from .gamma import gamma` rebound the name over the submodule.)
del prng, rbg, philox, threefry4x32, samplers, distributions, discrete, linalg_samplers  # noqa: F821

from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "random")  # errors raised below a public function name it
