"""NumPy rules of pure_callback and io_callback: call Python with the operands as Arrays and
return its results, checked against the declared types."""
from ....core.primitives import callbacks
from ._common import rule
from .debugging import _as_arrays


@rule(callbacks.pure_callback_p, callbacks.io_callback_p)
def _callback(*values, **params):
    return callbacks.run(params, _as_arrays(values))
