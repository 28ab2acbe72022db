"""refjax.random's public namespace, recorded when random.py became the package api/random/:
every name it had must still be there."""
import refjax.random as rr

# sorted(n for n in dir(refjax.random) if not n.startswith("_")) before the split.
NAMES = [
    "Array", "KeyDType", "LeadingAxis", "PRNGKey", "PRNGKeyArray", "Sequence", "Tracer",
    "bernoulli", "bits", "categorical", "choice", "clone", "exponential", "fold_in", "gumbel",
    "jnp", "key", "key_data", "key_dtype", "key_impl", "laplace", "lax", "logistic", "math",
    "normal", "np", "operator", "permutation", "rademacher", "randint", "register_pytree_node",
    "split", "truncated_normal", "uniform", "warnings", "wrap_key_data",
]


def test_every_recorded_name_is_in_refjax_random():
    missing = [n for n in NAMES if not hasattr(rr, n)]
    assert not missing, f"refjax.random lost: {missing}"
