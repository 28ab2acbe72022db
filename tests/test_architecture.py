"""The architecture's rules, checked on the source: core/ imports neither api/ nor backends/,
no module outside tests/ grows past 800 lines unless ARCHITECTURE.md names it, the code
passes the linter configured in pyproject.toml, and spec/PRIMITIVES.md is current."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "refjax"


def _modules(folder):
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE] + parts)


def _imported(path):
    """The absolute names of every module `path` imports (function-local imports included)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"


def test_core_imports_neither_api_nor_backends():
    """The one-way arrows: api/ and backends/ build on core/, never the reverse (core reaches
    the backends through core/runtime.py's hooks)."""
    upward = [f"{p.relative_to(ROOT)} imports {name}" for p in _modules("core")
              for name in _imported(p)
              if name.startswith((f"{PACKAGE}.api", f"{PACKAGE}.backends", "jax"))
              and not name.startswith("jax_")]
    assert upward == []


def test_the_import_check_sees_upward_imports(tmp_path):
    """The walk above resolves relative imports, including function-local ones."""
    fake = ROOT / "core" / "transforms" / "_probe_for_test.py"
    fake.write_text("def f():\n    from ...api import numpy\n    from ...backends.base import x\n")
    try:
        names = set(_imported(fake))
    finally:
        fake.unlink()
    assert {f"{PACKAGE}.api.numpy", f"{PACKAGE}.backends.base.x"} <= names


_LONG_MODULES_WITH_A_REASON = set()  # paths ARCHITECTURE.md names as allowed past 800 lines


def test_no_module_over_800_lines():
    long = [f"{p.relative_to(ROOT)} ({len(p.read_text().splitlines())} lines)"
            for folder in ("core", "api", "backends", "spec", "benchmarks", "testing", "conformance")
            for p in _modules(folder)
            if len(p.read_text().splitlines()) > 800
            and str(p.relative_to(ROOT)) not in _LONG_MODULES_WITH_A_REASON]
    assert long == []


def test_ruff_passes():
    """The linter configured in pyproject.toml ([tool.ruff]; ruff is in the test extra) is
    clean on the whole repository."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_primitives_md_is_current():
    """spec/PRIMITIVES.md is generated from the spec and the rules (each rule cell links to
    the line that sets it): when it is stale, this test rewrites it and fails, so that the
    new version gets committed."""
    from refjax.spec import generate_docs
    path = ROOT / "spec" / "PRIMITIVES.md"
    text = generate_docs.render()
    if path.read_text() != text:
        path.write_text(text)
        raise AssertionError("spec/PRIMITIVES.md was stale: regenerated it, commit it")


def test_every_rule_cell_links_to_the_line_that_sets_it():
    from refjax.core.primitive import all_primitives
    for name, prim in all_primitives().items():
        for rule, site in prim.rule_sites.items():
            path, line = site.rsplit(":", 1)
            source = (ROOT / path).read_text().splitlines()
            assert 0 < int(line) <= len(source), (name, rule, site)
        assert "abstract_eval" in prim.rule_sites, name
