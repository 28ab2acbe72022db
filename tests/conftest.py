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
# `pytestmark = pytest.mark.backends("numpy_ref", "xla")` (on a module, class or test) runs
# each test once per named backend, with ids ending in [numpy_ref] / [xla]: the autouse
# fixture below selects the backend with refjax.set_backend for the test and restores the
# previous one afterwards. An empty `@pytest.mark.backends()` opts a test out of its module's
# marker: it runs once, on the default backend (it compares or picks backends itself).
# `--backends=xla` (comma-separated) keeps only the runs on those backends, e.g. to check a
# change to the XLA lowering quickly.
import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--backends", default=None,
                     help="comma-separated refjax backends to run the tests marked `backends` "
                          "on (default: every backend the marker names; unmarked tests still "
                          "run: add `-m backends` to run only the marked ones)")


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is None:
        return
    names = list(marker.args)
    if not names:
        return
    wanted = metafunc.config.getoption("backends")
    if wanted:
        names = [n for n in names if n in wanted.split(",")]
    metafunc.parametrize("refjax_backend", names, indirect=True, ids=names, scope="function")


@pytest.fixture(autouse=True)
def refjax_backend(request):
    """The backend a `backends`-marked test runs on (None, and no change, for others)."""
    name = getattr(request, "param", None)
    if name is None:
        yield None
        return
    import refjax
    previous = refjax.current_backend_name()
    refjax.set_backend(name)
    try:
        yield name
    finally:
        refjax.set_backend(previous)
