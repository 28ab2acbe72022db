"""Core of refjax: pytrees, abstract values, tracing and primitives."""

# `from jax import core; core.ShapedArray(shape, dtype)`: how abstract evaluation rules of
# primitives defined outside refjax (JAX's "JAX primitives" page) build their results.
from .avals import ShapedArray  # noqa: F401
