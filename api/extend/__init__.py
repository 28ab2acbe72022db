"""refjax.extend (jax.extend): the interfaces for building on refjax: its core types and its
primitives (`refjax.extend.core`, `refjax.extend.core.primitives`)."""
from . import core

__all__ = ["core"]
