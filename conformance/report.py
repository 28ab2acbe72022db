"""Conformance reports: the summary table, Markdown, JSON and JUnit XML, with reproducers."""
import json
import pathlib
import xml.etree.ElementTree as ET
from collections import Counter

from ..testing.suite import FAIL, NOT_APPLICABLE, NOT_IMPLEMENTED, PASS

_MARK = {PASS: "pass", FAIL: "FAIL", NOT_IMPLEMENTED: "not impl.", NOT_APPLICABLE: "-"}


def _grid(outcomes):
    """primitive -> {check: outcome}, both in first-seen order."""
    grid = {}
    for o in outcomes:
        grid.setdefault(o.primitive, {})[o.check] = o
    return grid


def _checks(outcomes):
    return list(dict.fromkeys(o.check for o in outcomes))


def totals(outcomes):
    """'N pass, M fail, ...' over the outcomes."""
    counts = Counter(o.status for o in outcomes)
    return ", ".join(f"{counts[s]} {s}" for s in (PASS, FAIL, NOT_IMPLEMENTED, NOT_APPLICABLE))


def summary_table(outcomes, target):
    """A plain-text table, one row per primitive, one column per check, then the totals."""
    checks = _checks(outcomes)
    width = max([len("primitive")] + [len(p) for p in _grid(outcomes)])
    cols = [max(len(c), 9) for c in checks]
    lines = [f"refjax conformance of {target}",
             "  ".join(["primitive".ljust(width)] + [c.ljust(w) for c, w in zip(checks, cols)])]
    for prim, row in _grid(outcomes).items():
        cells = [_MARK[row[c].status] if c in row else "" for c in checks]
        lines.append("  ".join([prim.ljust(width)] + [x.ljust(w) for x, w in zip(cells, cols)]))
    lines.append(totals(outcomes))
    lines.extend(f"FAILED {o.primitive}/{o.check}: {_first_line(o.detail)}"
                 for o in outcomes if o.status == FAIL)
    return "\n".join(lines)


def _first_line(text):
    return text.strip().splitlines()[0] if text.strip() else ""


def reproducer(o, target, options):
    """The command that re-runs one failure, and what hypothesis shrank it to."""
    where = "--target jax" if target == "jax" else f"--backend {options.get('backend', target)}"
    dtypes = f" --dtypes {options['dtypes']}" if options.get("dtypes") else ""
    return (f"python -m refjax.conformance {where} --primitives {o.primitive} --checks {o.check} "
            f"--seed {options.get('seed', 0)} --examples {options.get('examples', 4)}{dtypes}")


def markdown(outcomes, target, options):
    """The report as Markdown: the table, the totals, each failure with its reproducer, and
    what is not implemented (with the reason)."""
    checks = _checks(outcomes)
    out = [f"# refjax conformance report: {target}", "",
           f"Options: `{_options_text(options)}`. Totals: {totals(outcomes)}.", "",
           "| primitive | " + " | ".join(checks) + " |", "|---|" + "---|" * len(checks)]
    for prim, row in _grid(outcomes).items():
        out.append(f"| {prim} | " + " | ".join(_MARK[row[c].status] if c in row else ""
                                              for c in checks) + " |")
    out += _section("Failures", [o for o in outcomes if o.status == FAIL], target, options)
    out += _section("Not implemented", [o for o in outcomes if o.status == NOT_IMPLEMENTED],
                    target, options)
    out += _not_applicable([o for o in outcomes if o.status == NOT_APPLICABLE])
    if target == "jax":
        out += _jax_notes(_grid(outcomes))
    return "\n".join(out) + "\n"


def _not_applicable(items):
    """The checks that did not apply, grouped by their reason."""
    by_reason = {}
    for o in items:
        by_reason.setdefault(_first_line(o.detail) or "(no reason given)", []).append(
            f"{o.primitive}/{o.check}")
    lines = [f"- {reason}: {', '.join(cases)}" for reason, cases in sorted(by_reason.items())]
    return ["", "## Not applicable (`-`), by reason", ""] + lines if lines else []


def _jax_notes(primitives):
    """What the spec records about JAX's behaviour where it differs from the oracle's (the
    samples or the comparison of those primitives take it into account)."""
    from ..spec import SPECS
    notes = [f"- **{name}**: {SPECS[name].notes}" for name in primitives
             if name in SPECS and "JAX" in SPECS[name].notes]
    title = "## What the spec records about JAX (deviations the samples or comparisons account for)"
    return ["", title, ""] + notes if notes else []


def _options_text(options):
    keys = ("backend", "target", "primitives", "families", "checks", "dtypes", "examples", "x64",
            "seed", "max_ulps")
    skip = {"backend"} if options.get("target") == "jax" else {"target"}
    return " ".join(f"{k}={options[k]}" for k in keys
                    if options.get(k) not in (None, False) and k not in skip)


def _section(title, items, target, options):
    if not items:
        return []
    out = ["", f"## {title}", ""]
    for o in items:
        out.append(f"### {o.primitive} / {o.check}")
        out.append("")
        out.append("```")
        out.append(o.detail.strip())
        if o.example:
            out.append("")
            out.append(o.example.strip())
        if o.status == FAIL:
            out.append("")
            out.append("reproduce: " + reproducer(o, target, options))
        out.append("```")
        out.append("")
    return out


def as_json(outcomes, target, options):
    """The report as a JSON document (options, totals, one record per outcome)."""
    records = [dict(vars(o), reproducer=reproducer(o, target, options) if o.status == FAIL
                    else None) for o in outcomes]
    return json.dumps({"target": str(target), "options": {k: v for k, v in options.items()
                                                           if k != "report"},
                       "totals": dict(Counter(o.status for o in outcomes)),
                       "outcomes": records}, indent=1, default=str)


def junit_xml(outcomes, target, options):
    """The report as JUnit XML: a testcase per (primitive, check); failures with their
    reproducer, not implemented and not applicable as skipped."""
    counts = Counter(o.status for o in outcomes)
    suite = ET.Element("testsuite", name=f"refjax-conformance-{target}", tests=str(len(outcomes)),
                       failures=str(counts[FAIL]),
                       skipped=str(counts[NOT_IMPLEMENTED] + counts[NOT_APPLICABLE]),
                       time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=f"conformance.{o.primitive}",
                             name=o.check, time=f"{o.seconds:.3f}")
        if o.status == FAIL:
            node = ET.SubElement(case, "failure", message=_first_line(o.detail)[:500])
            node.text = f"{o.detail}\n\n{o.example}\n\nreproduce: {reproducer(o, target, options)}"
        elif o.status in (NOT_IMPLEMENTED, NOT_APPLICABLE):
            ET.SubElement(case, "skipped", message=f"{o.status}: {_first_line(o.detail)}")
    return ET.tostring(suite, encoding="unicode")


_WRITERS = {".md": markdown, ".json": as_json, ".xml": junit_xml}


def write_report(path, outcomes, target, options):
    """Write the report to `path`; its suffix (.md, .json, .xml) chooses the format."""
    path = pathlib.Path(path)
    if path.suffix not in _WRITERS:
        raise SystemExit(f"--report {path}: the suffix must be one of {', '.join(_WRITERS)}")
    path.write_text(_WRITERS[path.suffix](outcomes, target, options))
