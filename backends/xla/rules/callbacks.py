"""XLA rules of pure_callback and io_callback: jax.pure_callback / jax.experimental.io_callback
calling Python with the operands as (xla backend) Arrays when the compiled program runs."""
import jax
from jax.experimental import io_callback as _jax_io_callback

from ....core.primitives import callbacks
from .debugging import _host_arrays
from ._common import rule


def _host_call(params):
    def call(*values):
        return callbacks.run(params, _host_arrays(values))
    return call


def _result_types(params):
    return [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in params["result_avals"]]


@rule(callbacks.pure_callback_p)
def _pure_callback(*values, **params):
    return jax.pure_callback(_host_call(params), _result_types(params), *values,
                             vmap_method="sequential")


@rule(callbacks.io_callback_p)
def _io_callback(*values, **params):
    return _jax_io_callback(_host_call(params), _result_types(params), *values,
                            ordered=params["ordered"])
