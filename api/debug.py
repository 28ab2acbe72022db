"""refjax.debug: print and callback (runtime values, wherever they are staged),
visualize_array_sharding / visualize_sharding, inspect_array_sharding and breakpoint."""
from ..core.array import Array
from ..core.primitives import debugging
from ..core.trace import Tracer
from . import visualize
from .debugger import breakpoint  # noqa: F401 - jax.debug.breakpoint


def visualize_array_sharding(array, **kwargs):
    """Print which device holds which block of a 1-d or 2-d array (a `rich` table, as JAX's;
    the options are visualize_sharding's): at once for an array, when the jitted program is
    compiled for a traced value (inspect_array_sharding's callback)."""
    if not isinstance(array, (Array, Tracer)):  # JAX: AttributeError, no attribute 'sharding'
        raise TypeError("jax.debug.visualize_array_sharding expects a jax.Array, got "
                        f"{type(array).__module__}.{type(array).__qualname__}")
    shape = array.shape
    inspect_array_sharding(array, callback=lambda sharding: visualize_sharding(
        shape, sharding, **kwargs))


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Print which device holds which block of an array of `shape` laid out by `sharding`:
    a `rich` table, each block sized by its share of the array (`scale` times 10 lines high
    at most, widths within [min_width, max_width]), coloured from `color_map` (matplotlib's
    tab20b by default) when the terminal has colours and `use_color`."""
    placements = [(d.id, index) for d, index in sharding.devices_indices_map(tuple(shape))
                  .items()]
    kind = next(iter(sharding.device_set)).platform.upper()
    visualize.draw(tuple(shape), placements, kind, use_color=use_color, scale=scale,
                   min_width=min_width, max_width=max_width, color_map=color_map)


inspect_array_sharding = debugging.inspect_array_sharding
print = debugging.debug_print  # noqa: A001 - mirrors jax.debug.print
callback = debugging.debug_callback
log = debugging.debug_log
