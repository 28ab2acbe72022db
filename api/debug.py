"""refjax.debug: print and callback (runtime values, wherever they are staged) and
visualize_array_sharding."""
from ..core.array import Array
from ..core.primitives import debugging


def _blocks(array):
    """{(row block, col block): [device ids]} of a 1-d or 2-d array's shards, plus the grid."""
    shape = array.shape if array.ndim == 2 else (1,) + tuple(array.shape)
    cells = {}
    for shard in array.addressable_shards:
        index = shard.index if array.ndim == 2 else (slice(None),) + tuple(shard.index)
        key = tuple(s.indices(d)[:2] for s, d in zip(index, shape))
        cells.setdefault(key, []).append(shard.device.id)
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
    if array.ndim not in (0, 1, 2):
        raise ValueError(f"visualize_array_sharding only works for arrays of rank 1 or 2, got "
                         f"shape {array.shape}")
    cells, rows, cols = _blocks(array)
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


print = debugging.debug_print  # noqa: A001 - mirrors jax.debug.print
callback = debugging.debug_callback
