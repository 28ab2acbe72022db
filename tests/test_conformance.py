"""The conformance CLI (refjax.conformance): it reports exactly the faults of a deliberately wrong
backend, with reproducers, in Markdown, JSON and JUnit XML; passes a correct backend; reports
the primitives a partial backend lacks as not implemented; runs on real JAX (--target jax)."""
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from refjax.conformance import main

HERE = pathlib.Path(__file__).resolve().parent
RECIPES = HERE / "recipes"
PRIMS = "sin,cos,add,mul,reduce_sum,transpose"
FAULTS = {("sin", "eager"), ("reduce_sum", "eager"), ("transpose", "eager")}


@pytest.fixture(scope="module", autouse=True)
def recipes_on_path():
    sys.path.insert(0, str(RECIPES))
    yield
    sys.path.remove(str(RECIPES))


def _run(tmp_path, *argv):
    """main() in this process; the reports' paths and the exit code."""
    reports = {ext: tmp_path / f"report.{ext}" for ext in ("md", "json", "xml")}
    args = list(argv) + ["--no-progress"] + [a for p in reports.values()
                                              for a in ("--report", str(p))]
    return main(args), reports


def _failures(report):
    return {(o["primitive"], o["check"]) for o in report["outcomes"] if o["status"] == "fail"}


def test_the_cli_reports_exactly_the_faults_of_a_wrong_backend(tmp_path, capsys):
    code, reports = _run(tmp_path, "--backend", "wrong_backend:WrongBackend", "--primitives",
                         PRIMS, "--checks", "eager,jit", "--examples", "20", "--max-ulps", "0")
    assert code == 1
    report = json.loads(reports["json"].read_text())
    assert _failures(report) == FAULTS
    details = {o["primitive"]: o for o in report["outcomes"] if o["status"] == "fail"}
    assert "float32 elements differ (allowed: 0 ulps)" in details["sin"]["detail"]
    assert details["sin"]["detail"].endswith("(1 ulps)")
    assert "float64 buffer" in details["reduce_sum"]["detail"]
    assert "shape" in details["transpose"]["detail"]
    for o in details.values():  # each with its shrunk example and a command reproducing it
        assert "Draw" in o["example"] and "params=" in o["example"], o["example"]
        assert o["reproducer"].startswith("python -m refjax.conformance --backend wrong_backend")
    markdown = reports["md"].read_text()
    assert markdown.count("reproduce: python -m refjax.conformance") == 3
    suite = ET.fromstring(reports["xml"].read_text())
    assert (suite.get("tests"), suite.get("failures")) == ("12", "3")
    assert {(c.get("classname").split(".")[-1], c.get("name")) for c in suite
            if c.find("failure") is not None} == FAULTS
    out = capsys.readouterr().out
    assert "FAILED sin/eager" in out and "9 pass, 3 fail" in out


def test_one_ulp_is_within_the_spec_tolerance_of_sin(tmp_path):
    """Without --max-ulps the float32 tolerance (1e-5 relative) admits sin's one-ulp error:
    the default run reports only the other two faults."""
    code, reports = _run(tmp_path, "--backend", "wrong_backend:WrongBackend", "--primitives",
                         PRIMS, "--checks", "eager", "--examples", "20")
    assert code == 1
    assert _failures(json.loads(reports["json"].read_text())) == FAULTS - {("sin", "eager")}


def test_the_cli_passes_a_correct_backend(tmp_path):
    code, reports = _run(tmp_path, "--backend", "wrong_backend:CorrectBackend", "--primitives",
                         PRIMS, "--checks", "eager,jit,vmap,jvp,transpose", "--examples", "6",
                         "--max-ulps", "0")
    report = json.loads(reports["json"].read_text())
    assert code == 0, _failures(report)
    assert report["totals"]["pass"] >= 25


def test_a_partial_backend_gets_not_implemented_rows(tmp_path):
    """The recipe's toy backend has sin and a few more: exp is `not implemented`, not a crash."""
    code, reports = _run(tmp_path, "--backend", "toy_backend:ToyBackend", "--primitives",
                         "sin,exp,sub", "--checks", "eager,jit", "--examples", "3")
    report = json.loads(reports["json"].read_text())
    status = {(o["primitive"], o["check"]): o["status"] for o in report["outcomes"]}
    assert status[("exp", "eager")] == status[("exp", "jit")] == "not implemented"
    assert status[("sin", "eager")] == "pass"
    assert code == 0
    assert "primitive 'exp' has no rule on the toy backend" in reports["md"].read_text()


def test_real_jax_against_the_oracle(tmp_path):
    code, reports = _run(tmp_path, "--target", "jax", "--primitives", "add,sin,cumsum,sort",
                         "--examples", "3")
    report = json.loads(reports["json"].read_text())
    assert code == 0, _failures(report)
    assert {o["check"] for o in report["outcomes"]} == {"eager", "dtypes", "invalid"}


def test_bad_arguments_are_refused_with_the_choices():
    with pytest.raises(SystemExit, match="unknown checks: speed"):
        main(["--checks", "speed"])
    with pytest.raises(ValueError, match="Unknown backend 'nope'"):
        main(["--backend", "nope"])


def test_python_dash_m_runs_it():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(RECIPES),
                                                      os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "refjax.conformance", "--backend",
                             "wrong_backend:CorrectBackend", "--primitives", "neg", "--checks",
                             "eager", "--examples", "2"], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "1 pass, 0 fail" in result.stdout
    assert "check/s" in result.stderr or "check" in result.stderr  # tqdm's progress bar


@pytest.mark.backends("numpy_ref", "xla")
def test_what_the_checked_primitives_print_is_not_mixed_into_the_table(refjax_backend, capsys):
    """debug_print's samples print their values (on xla from XLA's threads); the CLI prints
    its table alone."""
    assert main(["--backend", refjax_backend, "--primitives", "debug_print,debug_callback",
                 "--checks", "eager,vmap", "--examples", "2", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"refjax conformance of {refjax_backend}" and len(lines) == 5, lines
    assert lines[-1] == "4 pass, 0 fail, 0 not implemented, 0 n/a"
