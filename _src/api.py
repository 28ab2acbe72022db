"""refjax._src.api: the transformations as JAX's private `jax._src.api` holds them; only here
because JAX's "JAX primitives" page imports them from it (`from jax._src import api`)."""
from ..core.transforms.autodiff import grad, hessian, jacfwd, jacrev, linearize, value_and_grad, vjp
from ..core.transforms.jit import eval_shape, jit, make_jaxpr
from ..core.transforms.jvp import jvp
from ..core.transforms.vmap import vmap

__all__ = ["eval_shape", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "linearize",
           "make_jaxpr", "value_and_grad", "vjp", "vmap"]
