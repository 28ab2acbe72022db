"""refjax.experimental.xla_metadata: set_xla_metadata, XLA frontend attributes on values (an
xla_metadata_value equation) or on the operations staged within a context."""
import functools

from ...core.primitives.arrays import xla_metadata_value
from ...core.pytree import tree_map

__all__ = ["set_xla_metadata"]


def set_xla_metadata(x=None, **kwargs):
    """Tag the values of pytree `x` with the attributes `kwargs` (for the XLA op making each);
    without `x`, a context manager and decorator tagging what is staged within it."""
    if x is None:
        return _Context(kwargs)
    kvs = tuple(sorted(kwargs.items()))
    return tree_map(lambda v: xla_metadata_value(v, kvs), x)


class _Context:
    """JAX's context tags the XLA ops lowered within it; refjax's jaxprs carry no XLA
    attributes (JAX's show none either), so the code within runs as it is."""

    def __init__(self, updates):
        self.updates = updates

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None

    def __call__(self, f):
        @functools.wraps(f)
        def tagged(*args, **kwargs):
            with self:
                return f(*args, **kwargs)
        return tagged
