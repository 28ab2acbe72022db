"""jax.experimental.mesh_utils: device arrays for meshes (on CPU devices, their id order)."""
import numpy as np

from ..devices import devices as _all_devices

# Per device kind, a function laying devices out for a mesh shape: JAX's entries are for TPU
# generations; CPU devices (refjax's virtual ones) keep their id order.
device_kind_handler_dict = {}


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
    """The devices (all of them by default) as an array of shape `mesh_shape`, in order."""
    devs = list(_all_devices() if devices is None else devices)
    if int(np.prod(mesh_shape)) != len(devs):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape "
                         f"{tuple(mesh_shape)}")
    out = np.empty(len(devs), dtype=object)
    out[:] = devs
    return out.reshape(tuple(mesh_shape))

