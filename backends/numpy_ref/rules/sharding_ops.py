"""NumPy rule of sharding_constraint: the identity on values (the backend applies layouts)."""
from ....core.primitives import sharding_ops
from ._common import rule


@rule(sharding_ops.sharding_constraint_p)
def _sharding_constraint(x, *, sharding):
    return x
