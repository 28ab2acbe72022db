"""refjax.extend.core (jax.extend.core): primitives, jaxprs and their interpreter's entry point."""
from ....core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, jaxpr_as_fun
from ....core.primitive import Primitive
from . import primitives

__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var", "jaxpr_as_fun",
           "primitives"]
