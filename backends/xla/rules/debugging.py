"""XLA rules of debug_callback and debug_print: a jax.debug.callback that calls Python with
the operands as (xla backend) Arrays when the compiled program runs; inspect_sharding: nothing
left to do then."""
import jax
import numpy as np

from ....core.avals import ShapedArray
from ....core.primitives import debugging
from ...base import get_backend, make_array
from ._common import rule


def _host_arrays(values):
    """The host values of a JAX callback as xla-backend Arrays."""
    backend = get_backend("xla")
    return [make_array(np.asarray(v), ShapedArray(v.shape, v.dtype), backend) for v in values]


def _host_call(prim, params):
    def call(*values):
        debugging.run(prim, _host_arrays(values), params)
    return call


def _ordered(params):
    return params.get("ordered", False) or params.get("effect") == "OrderedDebug"


@rule(debugging.debug_callback_p)
def _debug_callback(*values, **params):
    jax.debug.callback(_host_call(debugging.debug_callback_p, params), *values,
                       ordered=_ordered(params))
    return []


@rule(debugging.debug_print_p)
def _debug_print(*values, **params):
    jax.debug.callback(_host_call(debugging.debug_print_p, params), *values,
                       ordered=_ordered(params))
    return []


@rule(debugging.inspect_sharding_p)
def _inspect_sharding(value, **_):
    return []  # its callback ran when the program was compiled (debugging.inspect_compiled)
