"""jax.scipy.integrate: the trapezoidal rule."""
from .. import numpy as _jnp


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along axis by the trapezoidal rule, at points x (or spacing dx)."""
    return _jnp.trapezoid(y, x=x, dx=dx, axis=axis)
