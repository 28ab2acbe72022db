"""The conformance CLI's --dtypes filter: samples are drawn in the listed dtypes only (a fault of
one dtype is found with it and missed without it), derivative checks apply only when their
float64 is listed, and what is left without a dtype is reported n/a with the reason."""
import json
import pathlib
import sys

import pytest
from hypothesis import given, settings, strategies as st

from refjax.conformance import main
from refjax.conformance.cli import parser
from refjax.spec import SPECS
from refjax.testing.checks import NotApplicable
from refjax.testing.suite import DtypeFilter

RECIPES = pathlib.Path(__file__).resolve().parent / "recipes"


@pytest.fixture(scope="module", autouse=True)
def recipes_on_path():
    sys.path.insert(0, str(RECIPES))
    yield
    sys.path.remove(str(RECIPES))


def _report(tmp_path, *argv):
    path = tmp_path / "report.json"
    code = main(list(argv) + ["--no-progress", "--report", str(path), "--report",
                              str(tmp_path / "report.md")])
    return code, json.loads(path.read_text())


def _by_case(report):
    return {(o["primitive"], o["check"]): o for o in report["outcomes"]}


def test_a_float32_fault_is_found_only_when_float32_is_listed(tmp_path):
    """WrongBackend's sin and reduce_sum are wrong in float32 only, its transpose in every
    dtype: listing the half floats leaves only transpose failing."""
    argv = ["--backend", "wrong_backend:WrongBackend", "--primitives", "sin,reduce_sum,transpose",
            "--checks", "eager", "--examples", "4", "--max-ulps", "0"]
    code, report = _report(tmp_path, *argv, "--dtypes", "float16,bfloat16")
    status = {k: o["status"] for k, o in _by_case(report).items()}
    assert code == 1 and status == {("sin", "eager"): "pass", ("reduce_sum", "eager"): "pass",
                                    ("transpose", "eager"): "fail"}
    reproducer = _by_case(report)["transpose", "eager"]["reproducer"]
    assert reproducer.endswith("--dtypes float16,bfloat16")
    assert "dtypes=float16,bfloat16" in (tmp_path / "report.md").read_text()
    code, report = _report(tmp_path, *argv, "--dtypes", "float32")
    assert {k for k, o in _by_case(report).items() if o["status"] == "fail"} == {
        ("sin", "eager"), ("reduce_sum", "eager"), ("transpose", "eager")}


def test_checks_left_without_a_dtype_say_why(tmp_path):
    code, report = _report(tmp_path, "--backend", "numpy_ref", "--primitives", "sin,and",
                           "--checks", "eager,jvp,grad,dtypes", "--examples", "3",
                           "--dtypes", "float32,int8")
    cases = _by_case(report)
    assert code == 0
    assert cases["sin", "jvp"]["status"] == "n/a"
    assert cases["sin", "jvp"]["detail"] == ("the derivatives of sin are checked in float64: "
                                            "none of --dtypes float32,int8")
    assert cases["sin", "grad"]["status"] == "pass"  # its float32 half ran
    assert cases["sin", "dtypes"]["status"] == "pass"  # int8 is rejected: checked
    assert cases["and", "eager"]["status"] == "pass"  # int8
    markdown = (tmp_path / "report.md").read_text()
    assert "## Not applicable (`-`), by reason" in markdown
    assert "- the derivatives of sin are checked in float64: none of --dtypes float32,int8: " \
           "sin/jvp" in markdown
    code, report = _report(tmp_path, "--backend", "numpy_ref", "--primitives", "sin",
                           "--checks", "jvp", "--examples", "2", "--dtypes", "float64")
    assert report["outcomes"][0]["status"] == "pass"


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_the_filter_draws_only_listed_dtypes(data):
    spec = DtypeFilter(SPECS["add"], ["int8", "bfloat16"])
    sample = data.draw(spec.samples())
    assert {a.dtype for a in sample.sig.args} <= {"int8", "bfloat16"}
    assert DtypeFilter(SPECS["sin"], ["int8", "float32"]).rejected_dtypes() == ("int8",)


def test_the_filter_names_what_is_left_out():
    with pytest.raises(NotApplicable, match="and accepts bool, int8, .*: none of --dtypes "
                                            "float16"):
        DtypeFilter(SPECS["and"], ["float16"]).samples()
    assert DtypeFilter(SPECS["sin"], ["float32"]).name == "sin"  # the rest is the spec's


def test_unknown_dtypes_are_refused_with_the_choices():
    with pytest.raises(SystemExit, match="unknown dtypes: float8, int4; choose among bool, "):
        main(["--dtypes", "float32,float8,int4", "--primitives", "sin"])
    assert "--dtypes DTYPES" in parser().format_help()
    assert "float32,int8" in parser().format_help()
