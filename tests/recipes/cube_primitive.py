"""ARCHITECTURE.md's "add a primitive" recipe, followed step by step for a toy `cube`
(x -> x**3, with the dtypes of lax.integer_pow), from outside refjax. Loaded as a pytest
plugin (`-p cube_primitive`) before the property tests are collected, it registers the
primitive, its backend rules and its spec entry, so that the generic property suite runs on
it like on any built-in primitive."""
import os

import jax
import numpy as np

from refjax.api import lax
from refjax.backends.base import register_rule
from refjax.backends.numpy_ref.backend import NumpyRefBackend
from refjax.backends.xla.backend import XlaBackend
from refjax.core import sharding_propagation
from refjax.core.avals import ShapedArray
from refjax.core.primitive import make_primitive
from refjax.core.transforms.ad import defjvp
from refjax.core.transforms.batching import defvectorized
from refjax.spec import primitives as spec_primitives
from refjax.spec.base import COMPLEX, FLOAT, INT, PrimitiveSpec, all_args
from refjax.spec.elementwise import nary

# 1. the primitive
cube_p = make_primitive("cube")


# 2. abstract evaluation: dtype check (TypeError naming the primitive) and the result aval
@cube_p.def_abstract_eval
def _cube_abstract_eval(x):
    if x.dtype.kind not in "iufc" and x.dtype.name != "bfloat16":
        raise TypeError(f"cube does not accept dtype {x.dtype.name}. Accepted dtypes are "
                        "subtypes of integer, floating, complexfloating.")
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)


# 3. derivative: d(x**3) = 3 x**2 dx (CUBE_BROKEN=jvp gives a wrong one, for the test that
# checks the property suite notices)
if os.environ.get("CUBE_BROKEN") == "jvp":
    defjvp(cube_p, lambda t, x: lax.mul(t, lax.mul(3.0, x)))
else:
    defjvp(cube_p, lambda t, x: lax.mul(t, lax.mul(3.0, lax.mul(x, x))))
# 4. batching: elementwise
defvectorized(cube_p)
# 5. sharding: elementwise (outputs laid out as the operand)
cube_p.def_sharding(sharding_propagation.elementwise)


# 6. the lax-style function binding it
def cube(x):
    """x ** 3 elementwise (binds the toy `cube` primitive)."""
    return cube_p.bind(x)


# 7. the NumPy rule (the oracle) and 8. the XLA rule
@register_rule(NumpyRefBackend, cube_p)
def _cube_numpy(x):
    return x * x * x


@register_rule(XlaBackend, cube_p)
def _cube_xla(x):
    return jax.lax.mul(x, jax.lax.mul(x, x))


# 9. the spec entry the property suite runs
CUBE_SPEC = PrimitiveSpec(
    name="cube", dtypes=INT + FLOAT + COMPLEX, family="recipes", signature=nary(1),
    reference=lambda jax, x: jax.lax.integer_pow(x, 3), diff_args=all_args)
spec_primitives.SPECS["cube"] = CUBE_SPEC

assert np.allclose(np.asarray(cube(np.float32(2.0))), 8.0)
