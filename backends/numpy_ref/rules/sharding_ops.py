"""NumPy rules of sharding_constraint and device_put: the identity on values (the backend
applies layouts)."""
from ....core.primitives import sharding_ops
from ._common import rule


@rule(sharding_ops.sharding_constraint_p)
def _sharding_constraint(x, *, sharding, auto=False, **_):  # **_: what JAX prints
    return x


@rule(sharding_ops.device_put_p)
def _device_put(x, *, sharding, devices):
    return x
