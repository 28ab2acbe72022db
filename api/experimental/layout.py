"""refjax.experimental.layout: JAX's Layout and Format (what Array.format gives)."""
from ..layout import Format, Layout  # noqa: F401
