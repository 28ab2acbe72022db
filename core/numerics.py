"""jax_debug_nans / jax_debug_infs: after each eager primitive, a NaN (inf) among its floating
outputs raises FloatingPointError naming it; a jitted call producing one is re-run equation by
equation ("de-optimized", as JAX does) so that the error names the primitive at fault."""
import numpy as np

from . import dtypes
from .config import config


def _invalid(value):
    """'nan' / 'inf' when `value` holds one that the configuration asks to catch, else None."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not dtypes.is_inexact(dtype):
        return None
    data = np.asarray(value)
    if config.read("jax_debug_nans") and np.isnan(data).any():
        return "nan"
    if config.read("jax_debug_infs") and np.isinf(data).any():
        return "inf"
    return None


def check(prim, args, params, outs):
    """Raise FloatingPointError when an output of the primitive just run is invalid."""
    for out in (outs if prim.multiple_results else (outs,)):
        kind = _invalid(out)
        if kind is None:
            continue
        # JAX runs each eager primitive as a jitted program, and says so for each of them
        print("Invalid nan value encountered in the output of a jax.jit function. Calling the "
              "de-optimized version.")
        if prim.call_param is not None:
            _deoptimized(prim, args, params, kind)
        raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")


def _deoptimized(prim, args, params, kind):
    """Run a call primitive's jaxpr op by op: the failing operation raises its own error.
    When none does (the compiled program produced the value by its optimizations, or it is
    a literal), JAX's explanation."""
    from .jaxpr import eval_jaxpr
    closed = params[prim.call_param]
    eval_jaxpr(closed.jaxpr, closed.consts, *args)
    name = f"jit({params['name']})" if "name" in params else prim.name
    raise FloatingPointError(
        f"{(name, kind)}. Because jax_config.debug_nans.value and/or config.jax_debug_infs is "
        "set, the de-optimized function (i.e., the function as if the `jit` decorator were "
        "removed) was called in an attempt to get a more precise error message. However, the "
        "de-optimized function did not produce invalid values during its execution. This "
        "behavior can result from `jit` optimizations causing the invalid value to be "
        "produced. It may also arise from having nan/inf literals as inputs or outputs, like "
        "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the "
        "invalid value by removing the `jit` decorator, at the cost of losing optimizations. "
        "\n\nIf you see this error, consider opening a bug report at "
        "https://github.com/jax-ml/jax.")
