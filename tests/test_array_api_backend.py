"""The third-party backend of contrib/refjax-array-api (the Python Array API standard, on
array-api-strict), built from ARCHITECTURE.md's recipe with refjax's public API, checked by the
conformance CLI with a quick profile: every primitive it implements passes; those the standard
cannot express are reported as not implemented, each with its reason."""
import json
import sys

import numpy as np
import pytest

import refjax
from refjax.backends import register_backend
from refjax.conformance import main

import contrib_backend

QUICK = ["--examples", "2", "--checks", "eager,jit,vmap,invalid", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def contrib_on_path():
    path = contrib_backend.source_path()  # (None: installed, found by its entry point)
    sys.path[:0] = [path] if path else []
    yield
    if path:
        sys.path.remove(path)


def test_the_kit_passes_on_the_array_api_backend(tmp_path):
    path = tmp_path / "report.json"
    code = main(["--backend", contrib_backend.strict_backend(), "--report", str(path)] + QUICK)
    report = json.loads(path.read_text())
    failures = [(o["primitive"], o["check"], o["detail"][:200]) for o in report["outcomes"]
                if o["status"] == "fail"]
    assert code == 0 and not failures, failures
    statuses = {(o["primitive"], o["check"]): o for o in report["outcomes"]}
    for name in ("sin", "add", "dot_general", "reduce_sum", "while", "cond", "transpose"):
        assert statuses[name, "eager"]["status"] == "pass", statuses[name, "eager"]
    for o in report["outcomes"]:
        if o["status"] == "not implemented":  # a reason, not a crash
            assert "on the array_api backend: " in o["detail"] or \
                o["detail"].startswith("no "), o  # or: every example had a dtype it lacks
    assert statuses["erf", "eager"]["detail"].endswith("no special functions in the Array API "
                                                       "standard")


def test_a_program_runs_on_it_with_the_oracles_values():
    from refjax_array_api.backend import ArrayApiStrictBackend
    import array_api_strict
    register_backend("array_api", ArrayApiStrictBackend)

    def loss(w, x):
        return refjax.numpy.sum(refjax.numpy.tanh(x @ w) ** 2)
    w, x = np.array([0.5, -1.0], np.float32), np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with refjax.backend("array_api"):
        g = refjax.jit(refjax.grad(loss))(w, x)
        assert type(g._buf) is type(array_api_strict.asarray(0.0))  # an array-api-strict Array
    t = np.tanh(x @ w)
    np.testing.assert_allclose(np.asarray(g), x.T @ (2 * t * (1 - t ** 2)), rtol=1e-5)


def test_ci_reaches_it_by_its_entry_point(monkeypatch):
    """Installed (as .ci/run installs it), the backend is named by its entry point; on the
    source tree CI's REFJAX_REQUIRE_CONTRIB_ENTRY_POINT=1 refuses the import-path fallback."""
    monkeypatch.setenv("REFJAX_REQUIRE_CONTRIB_ENTRY_POINT", "1")
    if contrib_backend.installed():
        assert contrib_backend.strict_backend() == "array_api"
        assert type(refjax.get_backend("array_api")).__module__ == "refjax_array_api.backend"
        return
    with pytest.raises(RuntimeError, match="entry point 'array_api' is missing"):
        contrib_backend.strict_backend()
    monkeypatch.delenv("REFJAX_REQUIRE_CONTRIB_ENTRY_POINT")
    assert contrib_backend.strict_backend() == "refjax_array_api.backend:ArrayApiStrictBackend"
