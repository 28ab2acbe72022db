"""Wadler/Lindig pretty-printing documents (text, concat, brk, group, nest, color) and their
formatter.

A document describes text with optional line breaks. `format(width)` lays it out: a `group`
prints flat (its breaks as their text) when the group alone fits in what is left of the
current line, else each of its own breaks starts a new line indented by the enclosing `nest`s.
This is the layout JAX prints jaxprs with (Wadler, "A prettier printer", 1998; Lindig,
"Strictly Pretty", 2000), including JAX's choice of measuring only the group, not the rest of
the line after it. With `use_color`, `color` documents become ANSI escapes as JAX writes them:
before each text (or flat break) whose colors differ from the current ones, only the
attributes that change, and a return to the defaults at the end.
"""
import enum
import sys


class Doc:
    """A pretty-printing document; `a + b` concatenates, `str(doc)` formats at width 80."""

    __slots__ = ()

    def __add__(self, other):
        return concat([self, other])

    def __str__(self):
        return self.format()

    def format(self, width=80, *, use_color=False):
        """The document laid out in lines of at most `width` columns where groups allow
        (colored with ANSI escapes when `use_color`)."""
        return _Formatter(width, use_color).run(self)


class _Nil(Doc):
    __slots__ = ()

    def __repr__(self):
        return "nil"


class _Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"text({self.text!r})"


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children):
        self.children = tuple(children)

    def __repr__(self):
        return f"concat({', '.join(map(repr, self.children))})"


class _Break(Doc):
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"brk({self.text!r})"


class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child

    def __repr__(self):
        return f"group({self.child!r})"


class _Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n, self.child = n, child

    def __repr__(self):
        return f"nest({self.n}, {self.child!r})"


class Color(enum.Enum):
    """ANSI colors (their SGR code offsets); RESET is the terminal's default."""
    BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE, RESET = (*range(8), 9)


class Intensity(enum.Enum):
    """ANSI intensities (their SGR codes)."""
    DIM, NORMAL, BRIGHT = 2, 22, 1


class _Color(Doc):
    __slots__ = ("child", "foreground", "background", "intensity")

    def __init__(self, child, foreground, background, intensity):
        self.child, self.foreground = child, foreground
        self.background, self.intensity = background, intensity

    def __repr__(self):
        return f"color({self.child!r})"


def _can_use_color():
    """Whether the output is a notebook or a terminal (where JAX colors jaxprs)."""
    shell = getattr(sys.modules.get("builtins"), "get_ipython", None)
    if shell is not None:
        ipython = shell()
        if type(ipython).__name__ == "ZMQInteractiveShell" or "colab" in str(type(ipython)):
            return True
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


CAN_USE_COLOR = _can_use_color()  # decided once, when refjax is imported, as JAX does


def nil():
    """The empty document."""
    return _Nil()


def text(s):
    """Literal text (a newline inside it is printed as is and not counted as a break)."""
    return _Text(s)


def concat(docs):
    """The documents one after the other."""
    return _Concat(docs)


def brk(s=" "):
    """A break: `s` when its group prints flat, else a newline and the current indentation."""
    return _Break(s)


def group(doc):
    """`doc`, printed flat if it fits on the rest of the line, else with its breaks as
    newlines (nested groups decide again for themselves)."""
    return _Group(doc)


def nest(n, doc):
    """`doc` with the lines its breaks start indented by `n` more columns."""
    return _Nest(n, doc)


def color(doc, foreground=None, background=None, intensity=None):
    """`doc` in these colors (None: as around it); only when formatted with use_color."""
    return _Color(doc, foreground, background, intensity)


def keyword(doc):
    """A keyword of a jaxpr (`lambda`, `let`, `in`), colored as JAX colors it."""
    return color(doc, foreground=Color.BLUE, intensity=Intensity.BRIGHT)


def type_annotation(doc):
    """A type annotation of a jaxpr (`:f32[3]`), colored as JAX colors it."""
    return color(doc, foreground=Color.MAGENTA, intensity=Intensity.NORMAL)


def join(sep, docs):
    """The documents with `sep` between each two."""
    docs = list(docs)
    if len(docs) <= 1:
        return docs[0] if docs else nil()
    parts = [docs[0]]
    for doc in docs[1:]:
        parts += [sep, doc]
    return concat(parts)


_DEFAULT_COLORS = (Color.RESET, Color.RESET, Intensity.NORMAL)


class _Formatter:
    """Lays out one document: a stack of (indent, flat, colors, doc) still to print, the
    output so far, the current column and the colors last written."""

    def __init__(self, width, use_color=False):
        self.width, self.use_color = width, use_color
        self.out = []
        self.column = 0
        self.colors = _DEFAULT_COLORS

    def run(self, doc):
        todo = [(0, False, _DEFAULT_COLORS, doc)]
        while todo:
            self._step(todo, *todo.pop())
        self._set_colors(_DEFAULT_COLORS)
        return "".join(self.out)

    def _step(self, todo, indent, flat, colors, doc):
        kind = type(doc)
        if kind is _Text:
            self._emit(doc.text, colors)
        elif kind is _Concat:
            todo.extend((indent, flat, colors, child) for child in reversed(doc.children))
        elif kind is _Break:
            self._emit(doc.text, colors) if flat else self._newline(indent)
        elif kind is _Nest:
            todo.append((indent + doc.n, flat, colors, doc.child))
        elif kind is _Group:
            fits = flat or _fits(doc.child, self.width - self.column)
            todo.append((indent, fits, colors, doc.child))
        elif kind is _Color:
            new = (doc.foreground, doc.background, doc.intensity)
            todo.append((indent, flat, tuple(n or c for n, c in zip(new, colors)), doc.child))

    def _emit(self, s, colors):
        self._set_colors(colors)
        self.out.append(s)
        self.column += len(s)

    def _newline(self, indent):
        self.out.append("\n" + " " * indent)
        self.column = indent

    def _set_colors(self, colors):
        if not self.use_color or colors == self.colors:
            return
        codes = [_code(new, base) for new, old, base in zip(colors, self.colors, (30, 40, 0))
                 if new != old]
        self.out.append(f"\x1b[{';'.join(codes)}m")
        self.colors = colors


def _code(value, base):
    return str(base + value.value)


def _fits(doc, room):
    """Whether `doc` printed flat takes at most `room` columns."""
    todo = [doc]
    while todo and room >= 0:
        doc = todo.pop()
        kind = type(doc)
        if kind is _Text or kind is _Break:
            room -= len(doc.text)
        elif kind is _Concat:
            todo.extend(reversed(doc.children))
        elif kind is _Nest or kind is _Group or kind is _Color:
            todo.append(doc.child)
    return room >= 0
