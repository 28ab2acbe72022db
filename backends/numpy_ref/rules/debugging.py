"""NumPy rules of debug_callback and debug_print (call Python with the operands as Arrays) and
inspect_sharding (nothing left to do when the program runs)."""
from ....core.avals import ShapedArray
from ....core.primitives import debugging
from ...base import get_backend, make_array
from ._common import rule


def _as_arrays(values):
    backend = get_backend("numpy_ref")
    return [make_array(v, ShapedArray(v.shape, v.dtype), backend) for v in values]


@rule(debugging.debug_callback_p)
def _debug_callback(*values, **params):
    return debugging.run(debugging.debug_callback_p, _as_arrays(values), params)


@rule(debugging.debug_print_p)
def _debug_print(*values, **params):
    return debugging.run(debugging.debug_print_p, _as_arrays(values), params)


@rule(debugging.inspect_sharding_p)
def _inspect_sharding(value, **_):
    return []  # its callback ran when the program was compiled (debugging.inspect_compiled)
