"""refjax's pytest plugin on a user's test file outside tests/ (contrib/refjax-array-api/tests/
test_user_program.py): --refjax-backends runs each of its tests once per backend, a backend
named by its entry point (installed) or as MODULE:CLASS (source tree) included, with the
`oracle` and `refjax_backend` fixtures."""
import os
import subprocess
import sys

import contrib_backend

CONTRIB = contrib_backend.CONTRIB
USER_FILE = CONTRIB / "tests" / "test_user_program.py"


def _pytest(*args):
    paths = [contrib_backend.source_path(), os.environ.get("PYTHONPATH")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p",
           "refjax.testing.pytest_plugin", str(USER_FILE), *args]
    return subprocess.run(cmd, cwd=CONTRIB, capture_output=True, text=True, env=env, timeout=600)


def test_a_users_file_runs_once_per_backend():
    result = _pytest(f"--refjax-backends=numpy_ref,{contrib_backend.strict_backend()}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    for test in ("test_the_gradient_matches_the_oracle", "test_my_softplus_against_the_oracle"):
        for backend in ("numpy_ref", "array_api"):
            assert f"{test}[{backend}] PASSED" in result.stdout, result.stdout[-3000:]
    assert "4 passed" in result.stdout


def test_without_the_option_each_test_runs_once():
    result = _pytest()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "test_the_gradient_matches_the_oracle PASSED" in result.stdout
    assert "2 passed" in result.stdout


def test_the_plugin_loads_without_hypothesis(tmp_path):
    """pytest, with refjax's plugin loaded (an installed entry point), works in environments
    without the `testing` extra: the plugin imports hypothesis only when --refjax-backends asks
    for backends."""
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    code = ("import sys; sys.modules['hypothesis'] = None; import pytest; "
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-p', "
            f"'refjax.testing.pytest_plugin', {str(tmp_path)!r}]))")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # (hypothesis' own plugin)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
