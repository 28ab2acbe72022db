"""Hypothesis profiles: `ci` (the default: small, reproducible) and `thorough` (large).

Select one with `--hypothesis-profile=thorough` or the HYPOTHESIS_PROFILE environment variable;
the command-line flag wins because hypothesis' plugin loads it after this file."""
import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

# database=None: no .hypothesis directory in the repository (ci is derandomized anyway).
settings.register_profile("ci", max_examples=8, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_QUIET, print_blob=False)
settings.register_profile("thorough", max_examples=300, deadline=None, database=None,
                          suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Real JAX (the reference several tests compare against) and refjax's xla backend both need
# 8 CPU devices; JAX fixes its device count when its backend first starts, so set it first.
import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)


# ---------------------------------------------------------------- one test, every backend
#
# refjax's pytest plugin (refjax/testing/pytest_plugin.py, also installed as a `pytest11` entry
# point for users) runs tests once per backend: `pytestmark = pytest.mark.backends("numpy_ref",
# "xla")` (on a module, class or test) runs each test once per named backend, with ids ending in
# [numpy_ref] / [xla]; an empty `@pytest.mark.backends()` opts a test out (it compares or picks
# backends itself). `--backends=xla` (comma-separated) keeps only the marked tests' runs on
# those backends, e.g. to check a change to the XLA lowering quickly; unmarked tests still run
# once (the plugin's --refjax-backends would also run them per backend).
pytest_plugins = ("refjax.testing.pytest_plugin",)


def pytest_addoption(parser):
    parser.addoption("--backends", dest="backends", default=None,
                     help="comma-separated refjax backends to run the tests marked `backends` "
                          "on (default: every backend the marker names; unmarked tests still "
                          "run: add `-m backends` to run only the marked ones)")
