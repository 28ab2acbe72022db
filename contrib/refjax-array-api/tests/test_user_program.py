"""A user's test file, written against `import refjax as jax` and run on several backends by
refjax's pytest plugin:

    pytest --refjax-backends=numpy_ref,array_api tests/test_user_program.py
"""
import numpy as np
from hypothesis import given, settings

import refjax as jax
import refjax.numpy as jnp
import refjax.testing as rt


def predict(w, x):
    return jnp.tanh(x @ w)


def loss(w, x, y):
    return jnp.mean((predict(w, x) - y) ** 2)


def test_the_gradient_matches_the_oracle(oracle, refjax_backend):
    rng = np.random.default_rng(0)
    w, x, y = (rng.normal(size=s).astype(np.float32) for s in ((3,), (5, 3), (5,)))
    grad = jax.jit(jax.grad(loss))
    oracle.assert_conforms(grad(w, x, y), oracle.reference_fn(grad)(w, x, y), rtol=1e-5, atol=1e-6)
    assert jax.current_backend_name() == (refjax_backend or "numpy_ref")  # None: not parametrized


@settings(max_examples=5, deadline=None)
@given(rt.arrays("float32", (4,), edges=False))
def test_my_softplus_against_the_oracle(x):
    def softplus(v):
        return jnp.logaddexp(v, 0.0)
    rt.assert_conforms(jax.jit(softplus)(x), rt.reference_fn(softplus)(x), max_ulps=4)
