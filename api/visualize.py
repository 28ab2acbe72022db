"""visualize_sharding's drawing: a `rich` table with one cell per block of a 1-d or 2-d array,
each sized by its share of the array and naming the devices holding it, as JAX draws it."""
import importlib.util
import itertools

import numpy as np

# A terminal cell is about 2.5 times as high as it is wide: block widths are scaled by it.
_HEIGHT_TO_WIDTH = 2.5


def _block_starts(placements, shape):
    """{device id: (start, stop) per dimension} of the (device id, index) pairs."""
    return {dev: tuple(s.indices(d)[:2] for s, d in zip(map(_as_slice, index), shape))
            for dev, index in placements}


def _as_slice(index):
    return slice(index, index + 1) if isinstance(index, int) else index


def _blocks(shape, placements):
    """{(row, col): (device ids, height fraction or None for 1-d, width fraction)}."""
    bounds = _block_starts(placements, shape)
    starts = [sorted({b[k][0] for b in bounds.values()}) for k in range(len(shape))]
    blocks = {}
    for dev, b in bounds.items():
        pos = tuple(starts[k].index(lo) for k, (lo, _) in enumerate(b))
        fracs = [(hi - lo) / d for (lo, hi), d in zip(b, shape)]
        key, height = (pos, fracs[0]) if len(shape) == 2 else ((0, *pos), None)
        blocks.setdefault(key, (set(), height, fracs[-1]))[0].add(dev)
    return blocks


def _colors(color_map, count):
    """The cells' colours: the map sampled at `count` even points, visited by a stride of
    about half the count so that neighbouring cells differ."""
    values = np.linspace(0, 1, count)
    stride, idx = count // 2 + (count % 2 == 0), 0
    for _ in range(count):
        yield _hex(color_map(values[idx])[:3])
        idx = (idx + stride) % count


def _hex(color):
    if isinstance(color, str):
        return color
    return "#" + "".join(f"{int(c * 255):02X}" for c in color)


def _text_color(background):
    r, g, b = (int(background[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def _default_color_map():
    """matplotlib's tab20b, or None without matplotlib (then cells are drawn without colour)."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        return None
    return matplotlib.colormaps["tab20b"]


def _padding(entry, width, height, colored):
    """(top, right, bottom, left) spaces around a cell's label, centring it in the block."""
    left, extra = divmod(width - len(entry) - 2, 2)
    top, extra_v = divmod(height - 2, 2)
    pads = (top, left + extra, top + extra_v, left)
    return tuple(max(p + colored, 0) for p in pads)


def _cell(entry, size, color, options):
    """One block: its label centred in the padding its share of the array asks for."""
    import rich.align
    import rich.padding
    import rich.style
    (height_frac, width_frac), (base_h, base_w) = size, options["base"]
    height = 1 if height_frac is None else int(height_frac * base_h)
    width = int(width_frac * base_w * _HEIGHT_TO_WIDTH)
    width = min(max(width, options["min_width"]), options["max_width"])
    style = rich.style.Style(bgcolor=color, color=color and _text_color(color))
    return rich.padding.Padding(rich.align.Align(entry, "center", vertical="middle"),
                                _padding(entry, width, height, color is not None), style=style)


def _table(colored):
    import rich.box
    import rich.table
    return rich.table.Table(show_header=False, show_lines=not colored, padding=0,
                            highlight=not colored, pad_edge=False,
                            box=None if colored else rich.box.SQUARE)


def _use_color(console, use_color, color_map):
    """The colour map cells are painted from, or None: colours need a terminal with colours."""
    if not use_color or console.color_system is None:
        return None
    return color_map or _default_color_map()


def _base_size(shape, scale):
    """(height, width) of the whole array in terminal cells before the width scaling."""
    height = int(10 * scale)
    return height, int(height * (shape[1] if len(shape) == 2 else 1) / shape[0])


def draw(shape, placements, kind, *, use_color, scale, min_width, max_width, color_map):
    """Print the table of blocks of an array of `shape` whose (device id, index) pairs are
    `placements`; `kind` is the devices' platform, as labels show it ('CPU')."""
    if importlib.util.find_spec("rich") is None:
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    import rich.console
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    color_map = _use_color(console, use_color, color_map)
    blocks = _blocks(shape, placements)
    rows, cols = (max(key[k] for key in blocks) + 1 for k in (0, 1))
    colors = _colors(color_map, rows * cols) if color_map else itertools.repeat(None)
    options = {"base": _base_size(shape, scale), "min_width": min_width, "max_width": max_width}
    table = _table(color_map is not None)
    for r in range(rows):
        table.add_row(*(_cell(f"{kind} " + ",".join(map(str, sorted(blocks[r, c][0]))),
                              blocks[r, c][1:], next(colors), options) for c in range(cols)))
    console.print(table, end="\n\n")
