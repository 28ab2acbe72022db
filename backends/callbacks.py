"""What a backend does for the host callbacks (debug_print, debug_callback, pure_callback,
io_callback): call the user's Python function on the operands and check its results."""
import numpy as np

from ..core.avals import ShapedArray
from ..core.primitives import callbacks, debugging
from .base import make_array

HOST_CALLBACKS = ("debug_callback", "debug_print", "io_callback", "pure_callback")


def run_callback(backend, prim, values, params):
    """Run host-callback primitive `prim` (one of HOST_CALLBACKS) with its `params` on the
    operands `values` (array-likes on the host, e.g. NumPy views of the backend's buffers):
    the Python function receives them as refjax Arrays on `backend`. Returns the results as
    NumPy arrays, checked against the declared result types as JAX checks them
    (JaxRuntimeError); debug_print and debug_callback return none.

    >>> outs = run_callback(my_backend, prim, [my_backend.to_numpy(b, None) for b in bufs],
    ...                     params)  # doctest: +SKIP
    """
    if prim.name not in HOST_CALLBACKS:
        raise ValueError(f"run_callback: '{prim.name}' is not a host callback (one of "
                         f"{', '.join(HOST_CALLBACKS)})")
    arrays = [_as_array(backend, np.asarray(v)) for v in values]
    if prim.name in ("debug_callback", "debug_print"):
        return debugging.run(prim, arrays, params)
    return callbacks.run(params, arrays)


def _as_array(backend, value):
    return make_array(value, ShapedArray(value.shape, value.dtype), backend)
