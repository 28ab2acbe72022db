"""core/pretty_print.py against JAX's own document formatter (jax._src.pretty_printer, C++ in
jaxlib: the reference, imported in tests only): the same documents, built with both, give the
same text at every width."""
from hypothesis import given
from hypothesis import strategies as st
from jax._src import pretty_printer as jpp

from refjax.core import pretty_print as pp
from refjax.spec.checks import budget

# A document as a plain tree, built with either library by `build`.
_texts = st.sampled_from(["", "a", "bb", "ccc", "let", "f32[3]", "x y", "long_name_here", "\n", "a\nb"])
_leaves = st.one_of(st.tuples(st.just("text"), _texts),
                    st.tuples(st.just("brk"), st.sampled_from([" ", "", "; ", ","])),
                    st.just(("nil",)))


_colors = st.sampled_from([None, "BLACK", "RED", "BLUE", "MAGENTA", "WHITE", "RESET"])
_intensities = st.sampled_from([None, "DIM", "NORMAL", "BRIGHT"])


def _nodes(children):
    return st.one_of(st.tuples(st.just("concat"), st.lists(children, max_size=5)),
                     st.tuples(st.just("group"), children),
                     st.tuples(st.just("nest"), st.integers(0, 4), children),
                     st.tuples(st.just("join"), children, st.lists(children, max_size=4)),
                     st.tuples(st.just("color"), children, _colors, _colors, _intensities))


documents = st.recursive(_leaves, _nodes, max_leaves=40)


def build(lib, tree):
    """The document `tree` describes, made with `lib` (refjax's or JAX's module)."""
    kind, *args = tree
    if kind == "text":
        return lib.text(args[0])
    if kind == "brk":
        return lib.brk(args[0])
    if kind == "nil":
        return lib.nil()
    if kind == "concat":
        return lib.concat([build(lib, c) for c in args[0]])
    if kind == "group":
        return lib.group(build(lib, args[0]))
    if kind == "nest":
        return lib.nest(args[0], build(lib, args[1]))
    if kind == "color":
        fg, bg, intensity = (None if n is None else getattr(enum, n)
                             for n, enum in zip(args[1:], (lib.Color, lib.Color, lib.Intensity)))
        return lib.color(build(lib, args[0]), foreground=fg, background=bg, intensity=intensity)
    return lib.join(build(lib, args[0]), [build(lib, c) for c in args[1]])


@budget(25)
@given(documents, st.sampled_from([0, 1, 3, 8, 20, 40, 80]), st.booleans())
def test_formatter_matches_jax(tree, width, use_color):
    assert build(pp, tree).format(width, use_color=use_color) == \
        build(jpp, tree).format(width, use_color=use_color)


def test_examples_of_jax_documentation_of_the_formatter():
    # The cases of JAX's pretty_printer_test.py, checked against hand-written text.
    x, y, z = pp.text("x"), pp.text("y"), pp.text("z")
    assert pp.group(pp.brk()).format() == " " and pp.brk().format() == "\n"
    assert pp.group(pp.brk("-")).format(width=0) == "\n"
    abc = pp.join(pp.text(",") + pp.brk(), [pp.text("a"), pp.text("b"), pp.text("c")])
    assert pp.group(abc).format() == "a, b, c"
    assert pp.group(abc).format(width=5) == "a,\nb,\nc"
    xbybz = x + pp.brk() + y + pp.brk() + z
    assert pp.nest(2, pp.group(xbybz)).format(width=0) == "x\n  y\n  z"
    # A group fits when it alone fits: what follows it on the line is not measured.
    assert (pp.text("aaaa") + pp.group(pp.brk() + pp.text("bbbb")) + pp.text("ccccc")
            ).format(width=9) == "aaaa bbbbccccc"
    # Indentation is written even on lines left empty.
    assert pp.nest(2, pp.text("a") + pp.brk() + pp.brk() + pp.text("b")).format() == "a\n  \n  b"


def test_colors_as_jax_writes_them():
    # JAX's pretty_printer_test: only the attributes that change, reset at the end.
    doc = pp.concat([pp.keyword(pp.text("let")), pp.text(" "),
                     pp.type_annotation(pp.text("x:f32"))])
    assert doc.format(use_color=True) == "\x1b[34;1mlet\x1b[39;22m \x1b[35mx:f32\x1b[39m"
    assert doc.format() == "let x:f32"


def test_str_and_plus():
    doc = pp.text("a") + pp.group(pp.brk() + pp.text("b"))
    assert str(doc) == "a b"
    assert repr(doc) == "concat(text('a'), group(concat(brk(' '), text('b'))))"
