"""Write spec/PRIMITIVES.md (`python -m refjax.spec.generate_docs`) from the specification and
from the rules each primitive carries (every rule cell links to where the rule is set)."""
import os

from refjax.backends.base import get_backend, rule_sites
from refjax.core.dtypes import short_name
from refjax.core.primitive import all_primitives

from .base import CANDIDATES, np_dtype
from .primitives import SPECS, defining_module, missing_specs

_HEADER = """# refjax primitives

Generated from the executable specification (`refjax/spec`) by `python -m
refjax.spec.generate_docs`; do not edit by hand. Every registered primitive has an entry; the
property tests in `tests/test_primitive_properties.py` run each entry's samples through eager
evaluation (against `jax.lax`), jit, JVP (against finite differences), transposition (the
dot-product test), vmap (against a loop) and the invalid inputs listed.

Columns: *dtypes* accepted among the candidates {candidates}
("all": every one; their 64-bit counterparts join under x64); *linear args* the arguments
with a transpose rule (#i: argument i); *differentiable* the arguments with a derivative, or
how the primitive declares it has none. The rule columns link to the line that sets each
rule of the primitive (see `Primitive` in core/primitive.py for what each rule is); "-"
means the primitive has none: *linearize* and *partial eval* (higher-order primitives only;
the others are linearized through their JVP), *sharding* (without one, outputs on a mesh
are replicated), *vma* (without one, an output varies wherever an operand does; call-like
primitives are looked through, "call"), *pp* (the params a printed jaxpr shows, in order;
without one, every param sorted by name), *key reuse* (under jax_debug_key_reuse, the keys it
consumes, makes or passes on; without one, it consumes its key operands), *call* (call-like
primitives: the param holding their jaxpr), *layout* (the param that sets the outputs' layout), *axis env* (collectives,
whose rules run on unbatched operands too); *numpy* and *xla* link to the backends' rules.
"""

_COLUMNS = ("primitive", "family", "dtypes", "linear args", "differentiable", "abstract eval",
            "jvp", "transpose", "batch", "linearize", "partial eval", "sharding", "vma", "pp",
            "key reuse", "call", "layout", "axis env", "numpy", "xla")
_RULES = ("abstract_eval", "jvp", "transpose", "batch", "linearize", "partial_eval", "sharding",
          "vma", "pp", "key_reuse")


def _dtypes(names):
    """Short dtype names ('all' for every candidate)."""
    if set(names) == set(CANDIDATES):
        return "all"
    return " ".join(short_name(np_dtype(n)) for n in names)


def _link(text, site):
    """A Markdown link from spec/PRIMITIVES.md to `path:line` of the repository."""
    if site is None:
        return text
    path, line = site.rsplit(":", 1)
    return f"[{text}](../{path}#L{line})"


def _rule_cell(prim, rule):
    if getattr(prim, rule) is None:
        return "call" if rule == "vma" and prim.call_param is not None else "-"
    return _link("yes", prim.rule_sites.get(rule))


def _flag_cell(prim, what, value):
    return "-" if not value else _link(str(value) if value is not True else "yes",
                                       prim.rule_sites.get(what))


def _backend_cell(backend, prim):
    if backend is None:
        return "-"
    try:
        backend.rule(prim)
    except NotImplementedError:
        return "-"
    return _link("yes", rule_sites.get((type(backend), prim)))


def _xla_backend():
    try:
        return get_backend("xla")
    except (ImportError, RuntimeError, ValueError):
        return None


def _describe_args(fn):
    """What an args function (diff_args / linear_args) says, in words."""
    return getattr(fn, "description", "see spec")


def _differentiable(spec):
    if spec.nondiff == "zero":
        return "no (zero tangents)"
    if spec.nondiff == "raises":
        return "no (raises)"
    text = _describe_args(spec.diff_args)
    if spec.reverse == "raises":
        text += " (forward mode only)"
    if spec.forward == "raises":
        text += " (reverse mode only)"
    return text


def row(name, numpy_ref, xla):
    """The table row of the primitive `name`."""
    prim, spec = all_primitives()[name], SPECS[name]
    return (name, defining_module(name), _dtypes(spec.dtypes),
            _describe_args(spec.linear_args), _differentiable(spec),
            *[_rule_cell(prim, r) for r in _RULES],
            _flag_cell(prim, "call", prim.call_param), _flag_cell(prim, "layout", prim.layout_param),
            _flag_cell(prim, "uses_axis_env", prim.uses_axis_env),
            _backend_cell(numpy_ref, prim), _backend_cell(xla, prim))


def render():
    """The Markdown text of PRIMITIVES.md."""
    missing = missing_specs()
    if missing:
        raise SystemExit(f"primitives without a spec entry: {missing}")
    numpy_ref, xla = get_backend("numpy_ref"), _xla_backend()
    candidates = " ".join(short_name(np_dtype(n)) for n in CANDIDATES)
    lines = [_HEADER.format(candidates=candidates),
             "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    for name in sorted(all_primitives(), key=lambda n: (defining_module(n), n)):
        lines.append("| " + " | ".join(row(name, numpy_ref, xla)) + " |")
    notes = [f"- **{n}**: {SPECS[n].notes}" for n in sorted(SPECS) if SPECS[n].notes]
    return "\n".join(lines + ["", "## Notes", ""] + notes) + "\n"


def main():
    """Write PRIMITIVES.md next to this file."""
    path = os.path.join(os.path.dirname(__file__), "PRIMITIVES.md")
    with open(path, "w") as f:
        f.write(render())
    print(f"wrote {path} ({len(all_primitives())} primitives)")


if __name__ == "__main__":
    main()
