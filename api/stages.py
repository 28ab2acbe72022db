"""refjax.stages: jax.stages' classes (Traced, Lowered, Compiled, ArgInfo, Wrapped)."""
from ..core.transforms.stages import (  # noqa: F401
    ArgInfo, Compiled, CompilerOptions, Lowered, Traced, Wrapped)
