"""Write spec/PRIMITIVES.md (`python -m refjax.spec.generate_docs`) from the specification."""
import os

from refjax.backends.base import get_backend
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
how the primitive declares it has none; the rule columns say whether the primitive has a
JVP, transpose and batching rule and an implementation on the numpy_ref and xla backends.
"""

_COLUMNS = ("primitive", "family", "dtypes", "linear args", "differentiable", "jvp",
            "transpose", "batch", "numpy", "xla")


def _dtypes(names):
    """Short dtype names ('all' for every candidate)."""
    if set(names) == set(CANDIDATES):
        return "all"
    return " ".join(short_name(np_dtype(n)) for n in names)


def _mark(flag):
    return "yes" if flag else "-"


def _has_backend_rule(backend, prim):
    if backend is None:
        return False
    try:
        backend.rule(prim)
    except NotImplementedError:
        return False
    return True


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
            _mark(prim.jvp or prim.linearize), _mark(prim.transpose), _mark(prim.batch),
            _mark(_has_backend_rule(numpy_ref, prim)), _mark(_has_backend_rule(xla, prim)))


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
