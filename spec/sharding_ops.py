"""Spec entries of sharding_constraint and device_put (a traced jax.device_put): the identity
that lays its operand out as `sharding`."""
import numpy as np
from hypothesis import strategies as st

from .base import ALL, COMPLEX, Arg, PrimitiveSpec, Signature, all_args, floats, shapes, weak_flag


@st.composite
def shardings(draw, shape):
    """A sharding for `shape` over the current backend's devices: one device, replicated over
    a mesh, or split along a dimension the mesh axis divides (devices the backend has: a
    backend under test may have fewer than 4)."""
    import refjax
    devices = refjax.devices()
    kind = draw(st.sampled_from(("single", "replicated", "split")))
    if kind == "single":
        index = draw(st.sampled_from([i for i in (1, 0, 3) if i < len(devices)]))
        return refjax.sharding.SingleDeviceSharding(devices[index])
    size = draw(st.sampled_from([n for n in (1, 2, 4) if n <= len(devices)]))
    mesh = refjax.sharding.Mesh(np.array(devices[:size]), ("x",))
    split = [i for i, d in enumerate(shape) if d % size == 0]
    spec = [None] * len(shape)
    if kind == "split" and split:
        spec[draw(st.sampled_from(split))] = "x"
    return refjax.sharding.NamedSharding(mesh, refjax.sharding.PartitionSpec(*spec))


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        shape = draw(shapes())
        x = Arg(shape, dtype, draw(weak_flag(dtype)), floats(-3.0, 3.0, dtype) if diff else None)
        return Signature((x,), {"sharding": draw(shardings(shape))})
    return sig()


def _device_put_signature(dtype, diff):
    """sharding_constraint's samples, the target also given as JAX prints it (`devices`);
    some targets a bare Device (no layout: sharding=None)."""
    @st.composite
    def sig(draw):
        base = draw(_signature(dtype, diff))
        target = base.params["sharding"]
        if draw(st.booleans()) and hasattr(target, "_device"):
            target = target._device
        sharding = None if target is not base.params["sharding"] else target
        return Signature(base.args, {"sharding": sharding, "devices": (target,)})
    return sig()


SPECS = [PrimitiveSpec(
    name="sharding_constraint", dtypes=ALL + COMPLEX, family="sharding_ops",
    signature=_signature, reference=lambda jax, x, *, sharding: x, exact=True,
    diff_args=all_args, linear_args=all_args,
    notes="the values are unchanged (the reference is the identity); the layout is the "
          "sharding's"),
    PrimitiveSpec(
        name="device_put", dtypes=ALL + COMPLEX, family="sharding_ops",
        signature=_device_put_signature, reference=lambda jax, x, **_: x, exact=True,
        diff_args=all_args, linear_args=all_args,
        notes="jax.device_put of a traced value: the values are unchanged; the layout is the "
              "sharding's (a bare Device's: the operand's)")]
