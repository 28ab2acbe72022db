"""refjax.custom_derivatives: custom_jvp, custom_vjp, custom_gradient, closure_convert and the
symbolic zeros their rules see (jax.custom_derivatives)."""
from ..core.transforms.closure import (  # noqa: F401
    SymbolicZero, closure_convert, custom_gradient, zero_from_primal)
from ..core.transforms.custom import custom_jvp, custom_jvp_call_p  # noqa: F401
from ..core.transforms.custom_vjp import (  # noqa: F401
    CustomVJPPrimal, custom_vjp, custom_vjp_call_p, custom_vjp_primal_tree_values)
from ..core.transforms.linear_call import linear_call, linear_call_p  # noqa: F401
