"""refjax.extend.core.primitives (jax.extend.core.primitives): every refjax primitive under
JAX's name for it (`jit_p`, `sin_p`, `scatter_add_p`, ...), for backends registering rules and
for interpreters of jaxprs."""
from ....core.primitive import all_primitives

# JAX's names where they are not the primitive's name with `_p` (and `-` as `_`).
_JAX_NAMES = {"add_any": "add_jaxvals_p", "custom_linear_solve": "linear_solve_p",
              "remat2": "remat_p"}


def _by_public_name():
    """public name -> primitive, read from the registry on each call, so that primitives
    registered after this module was imported are listed too."""
    return {_JAX_NAMES.get(n, n.replace("-", "_") + "_p"): p for n, p in all_primitives().items()}


def __getattr__(name):
    found = _by_public_name().get(name)
    if found is None:
        raise AttributeError(f"module 'refjax.extend.core.primitives' has no attribute {name!r}")
    return found


def __dir__():
    return sorted(_by_public_name())
