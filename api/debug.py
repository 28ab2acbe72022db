"""refjax.debug: print and callback (runtime values, wherever they are staged),
visualize_array_sharding / visualize_sharding, inspect_array_sharding and breakpoint."""
from ..core.array import Array
from ..core.primitives import debugging
from ..core.trace import Tracer
from .debugger import breakpoint  # noqa: F401 - jax.debug.breakpoint


def _blocks(shape, placements):
    """{(row block, col block): [device ids]} of a 1-d or 2-d layout given as (device id,
    index) pairs, plus the grid's rows and columns."""
    ndim = len(shape)
    shape = tuple(shape) if ndim == 2 else (1,) + tuple(shape)
    cells = {}
    for device_id, index in placements:
        index = tuple(index) if ndim == 2 else (slice(None),) + tuple(index)
        key = tuple(s.indices(d)[:2] for s, d in zip(index, shape))
        cells.setdefault(key, []).append(device_id)
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    return cells, rows, cols


def _label(ids):
    ids = sorted(set(ids))
    return "CPU " + ",".join(map(str, ids))


def sharding_table(array):
    """The text table visualize_array_sharding prints: one cell per block, naming its devices."""
    if not isinstance(array, Array):
        raise TypeError("visualize_array_sharding expects a concrete Array")
    return _table(array.shape, [(s.device.id, s.index) for s in array.addressable_shards])


def _table(shape, placements):
    if len(shape) not in (0, 1, 2):
        raise ValueError(f"visualize_sharding only works for shapes with 1 or 2 dimensions, "
                         f"got shape {tuple(shape)}")
    cells, rows, cols = _blocks(shape, placements)
    labels = [[_label(cells[(r, c)]) for c in cols] for r in rows]
    width = max(len(s) for row in labels for s in row) + 2
    horiz = "─" * width
    lines = ["┌" + "┬".join([horiz] * len(cols)) + "┐"]
    for i, row in enumerate(labels):
        lines.append("│" + "│".join(s.center(width) for s in row) + "│")
        sep = ("├", "┼", "┤") if i < len(labels) - 1 else ("└", "┴", "┘")
        lines.append(sep[0] + sep[1].join([horiz] * len(cols)) + sep[2])
    return "\n".join(lines)


def visualize_array_sharding(array, **kwargs):
    """Print which device holds which block of a 1-d or 2-d array."""
    print(sharding_table(array))


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Print which device holds which block of an array of `shape` laid out by `sharding`
    (as visualize_array_sharding, without the array; refjax draws a plain text table)."""
    placements = [(d.id, index) for d, index in sharding.devices_indices_map(tuple(shape))
                  .items()]
    print(_table(tuple(shape), placements))


def inspect_array_sharding(value, *, callback):
    """Call `callback(sharding)` with the sharding of each array in the pytree `value`.
    refjax decides layouts of traced values after tracing, so it needs concrete arrays
    (NotImplementedError naming the function otherwise; JAX calls back at compile time)."""
    from ..core.pytree import tree_leaves
    for leaf in tree_leaves(value):
        if isinstance(leaf, Tracer):
            raise NotImplementedError(
                "jax.debug.inspect_array_sharding: refjax inspects the sharding of concrete "
                "arrays only (call it outside jit, on the jitted function's result)")
        callback(leaf.sharding)


print = debugging.debug_print  # noqa: A001 - mirrors jax.debug.print
callback = debugging.debug_callback
log = debugging.debug_log
