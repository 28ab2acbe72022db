"""Wadler/Lindig pretty-printing documents (text, concat, brk, group, nest) and their formatter.

A document describes text with optional line breaks. `format(width)` lays it out: a `group`
prints flat (its breaks as their text) when the group alone fits in what is left of the
current line, else each of its own breaks starts a new line indented by the enclosing `nest`s.
This is the layout JAX prints jaxprs with (Wadler, "A prettier printer", 1998; Lindig,
"Strictly Pretty", 2000), including JAX's choice of measuring only the group, not the rest of
the line after it.
"""


class Doc:
    """A pretty-printing document; `a + b` concatenates, `str(doc)` formats at width 80."""

    __slots__ = ()

    def __add__(self, other):
        return concat([self, other])

    def __str__(self):
        return self.format()

    def format(self, width=80):
        """The document laid out in lines of at most `width` columns where groups allow."""
        return _Formatter(width).run(self)


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


def join(sep, docs):
    """The documents with `sep` between each two."""
    docs = list(docs)
    if len(docs) <= 1:
        return docs[0] if docs else nil()
    parts = [docs[0]]
    for doc in docs[1:]:
        parts += [sep, doc]
    return concat(parts)


class _Formatter:
    """Lays out one document: a stack of (indent, flat, doc) still to print, the output so
    far and the current column."""

    def __init__(self, width):
        self.width = width
        self.out = []
        self.column = 0

    def run(self, doc):
        todo = [(0, False, doc)]
        while todo:
            indent, flat, doc = todo.pop()
            self._step(todo, indent, flat, doc)
        return "".join(self.out)

    def _step(self, todo, indent, flat, doc):
        kind = type(doc)
        if kind is _Text:
            self._emit(doc.text)
        elif kind is _Concat:
            todo.extend((indent, flat, child) for child in reversed(doc.children))
        elif kind is _Break:
            self._emit(doc.text) if flat else self._newline(indent)
        elif kind is _Nest:
            todo.append((indent + doc.n, flat, doc.child))
        elif kind is _Group:
            todo.append((indent, flat or _fits(doc.child, self.width - self.column), doc.child))

    def _emit(self, s):
        self.out.append(s)
        self.column += len(s)

    def _newline(self, indent):
        self.out.append("\n" + " " * indent)
        self.column = indent


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
        elif kind is _Nest or kind is _Group:
            todo.append(doc.child)
    return room >= 0
