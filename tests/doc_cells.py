"""Run the code cells of JAX documentation pages (MyST markdown notebooks) as a notebook
would, with `jax` being real JAX or refjax, and record what each cell shows: its stdout,
the repr of its last expression, or its exception class. Used by tests/test_doc_examples.py
to compare refjax with JAX cell by cell. Pages written as doctests (```python blocks of `>>>`
examples, such as aot.md) run example by example, after a first cell importing what JAX's
doctest namespace holds (jax, lax, jnp, np)."""
import ast
import contextlib
import doctest
import io
import re
import sys

from jax_recordings import fingerprint, recorded, recording

_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
_DOCTEST = re.compile(r"```python\n(.*?)```", re.S)
_DOCTEST_NAMESPACE = "import jax\nfrom jax import lax\nimport jax.numpy as jnp\nimport numpy as np"
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_PYTHON = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


_OPTIONS = re.compile(r"\A---\n.*?^---\n", re.S | re.M)


def cells(markdown):
    """The code cells of a MyST notebook, without their `:tags:`-style option lines or
    `---`-fenced option block."""
    out = []
    for body in _CELL.findall(markdown):
        body = _OPTIONS.sub("", body)
        lines = [line for line in body.splitlines() if not line.startswith(":")]
        out.append("\n".join(lines).strip("\n"))
    return out or doctest_cells(markdown)


def doctest_cells(markdown):
    """A doctest page's examples, one cell each, after the imports of JAX's doctest namespace
    (none: the page has no doctests)."""
    parser = doctest.DocTestParser()
    examples = [ex.source.strip("\n") for block in _DOCTEST.findall(markdown)
                for ex in parser.get_examples(block)]
    return [_DOCTEST_NAMESPACE, *examples] if examples else []


def python_blocks(markdown):
    """The ```python blocks of a plain (not notebook) page: its snippets, in order."""
    return [body.strip("\n") for body in _PYTHON.findall(markdown)]


def as_refjax(source):
    """The cell with `jax` imports resolved to refjax."""
    source = re.sub(r"^(\s*)import jax\b(?!\.)", r"\1import refjax as jax", source, flags=re.M)
    source = re.sub(r"^(\s*)import jax\.([\w.]+) as", r"\1import refjax.\2 as", source,
                    flags=re.M)
    source = re.sub(r"^(\s*)from jax(\.[\w.]+)? import", r"\1from refjax\2 import", source,
                    flags=re.M)
    return source


def run_cell(source, namespace):
    """What the cell shows: (stdout + repr of the last expression, or 'Error: ClassName')."""
    if source.lstrip().startswith(("%", "!")) or "\n%" in source:
        return "<magic>"
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
            _flush(namespace)
    except Exception as e:  # the class of a cell's error is what a notebook shows
        return _HEX.sub("0x", out.getvalue()) + f"Error: {type(e).__name__}"
    return _HEX.sub("0x", out.getvalue())


def _flush(namespace):
    jax = namespace.get("jax")
    barrier = getattr(jax, "effects_barrier", None)
    if barrier is not None and jax.__name__ == "jax":
        barrier()


def run_page(markdown, refjax, blocks=cells, preamble=""):
    """[(cell source, what it shows)] for every cell of a page, in one namespace (`blocks`
    picks the cells: `python_blocks` for a plain page; `preamble` runs first, unshown)."""
    namespace = {"__name__": "__main__"}
    exec(as_refjax(preamble) if refjax else preamble, namespace)
    results = []
    for source in blocks(markdown):
        src = as_refjax(source) if refjax else source
        try:
            results.append((source, run_cell(src, namespace)))
        except SyntaxError:
            results.append((source, "<syntax>"))
    return results


def jax_cells(run, inputs, same):
    """What each cell of a page shows on real JAX, `run()` being the page run on JAX
    ([(source, shown)]): in the default run its recording (tests/jax_recordings.py) for the
    running test, made from the same `inputs` (the page's text and what it runs with). A
    recording notes the cells that show something else when the page runs again (unseeded
    random numbers, Python ids): the thorough run's check of the recording against live JAX
    (cell by cell with `same`) passes over those."""
    def shown():
        cells = [text for _, text in run()]
        if not recording():
            return {"cells": cells}
        again = [text for _, text in run()]
        return {"cells": cells, "volatile": [i for i, (a, b) in enumerate(zip(cells, again))
                                             if a != b]}

    def agrees(ours, live):
        return len(ours["cells"]) == len(live["cells"]) and all(
            i in ours["volatile"] or same(a, b)
            for i, (a, b) in enumerate(zip(ours["cells"], live["cells"])))
    return recorded("page", shown, fingerprint(*inputs), agrees)["cells"]


if __name__ == "__main__":
    page = open(sys.argv[1]).read()
    ours, theirs = run_page(page, True), run_page(page, False)
    same = sum(a[1] == b[1] for a, b in zip(ours, theirs))
    print(f"{same}/{len(ours)} cells show the same")
    for i, ((src, a), (_, b)) in enumerate(zip(ours, theirs)):
        if a != b:
            print(f"--- cell {i}:\n{src[:300]}\n>>> refjax:\n{a[:600]}\n>>> jax:\n{b[:600]}")
