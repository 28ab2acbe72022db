"""Hypothesis profiles and the default run's budget: `ci` (the default: small, reproducible) and
`thorough` (large: every parametrized case, 300 examples per property).

Select one with `--hypothesis-profile=thorough` or the HYPOTHESIS_PROFILE environment variable;
the command-line flag wins because hypothesis' plugin loads it after this file."""
import contextlib
import os
import zlib

import pytest
from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

# database=None: no .hypothesis directory in the repository (ci is derandomized anyway).
settings.register_profile("ci", max_examples=6, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_QUIET, print_blob=False)
settings.register_profile("thorough", max_examples=300, deadline=None, database=None,
                          suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@contextlib.contextmanager
def fixed_local_constants():
    """Hypothesis sometimes draws a literal constant of the local modules imported so far:
    then a test's examples depend on which modules ran before it (refjax imports its modules
    lazily), and a recording of JAX's side made running one module misses the examples the
    whole run draws. Within this, hypothesis draws from its fixed pool only (the constants
    it caches are dropped on entry and exit: they are the pool's)."""
    from hypothesis.internal.conjecture import providers
    real, empty = providers._get_local_constants, providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = real
        providers.CONSTANTS_CACHE.cache.clear()


# Real JAX (the reference several tests compare against) and refjax's xla backend both need
# 8 CPU devices; JAX fixes its device count when its backend first starts, so set it first.
import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)

import jax_recordings  # noqa: E402 - after the device count, which recordings are stamped with


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
    parser.addoption("--record-jax", action="store_true", default=False,
                     help="run real JAX where tests compare with it and record its outputs "
                          "in tests/recordings/ (also REFJAX_RECORD_JAX=1)")
    parser.addoption("--max-live-jax", type=int, default=jax_recordings.MAX_LIVE,
                     help="fail a run reading recordings in which more JAX comparisons than "
                          f"this ran on live JAX for lack of a usable recording (default "
                          f"{jax_recordings.MAX_LIVE})")


# ---------------------------------------------------------------- recorded outputs of JAX
#
# Tests comparing refjax with real JAX take JAX's side from tests/recordings/ in the default
# run (tests/jax_recordings.py: `recorded`); the thorough profile (or REFJAX_RECORD_JAX=verify,
# on the default run's cases) runs JAX and fails on a recording that no longer equals what JAX
# gives; `--record-jax` (or REFJAX_RECORD_JAX=1) runs JAX and rewrites the recordings of the
# tests it runs.
def pytest_configure(config):
    if config.getoption("record_jax") or os.environ.get(jax_recordings.RECORD_ENV) == "1":
        if _thorough(config):  # its random examples are not the ones the default run draws
            raise pytest.UsageError("--record-jax records what the default run compares: "
                                    "run it without the thorough profile")
        jax_recordings.set_mode("record")
    elif _thorough(config) or os.environ.get(jax_recordings.RECORD_ENV) == "verify":
        jax_recordings.set_mode("verify")


@pytest.fixture(autouse=True)
def _jax_recording_keys(request):
    # the modules comparing with recordings draw the same examples however they are run (the
    # ci profile's; thorough draws others anyway): other modules' draws stay as they were
    fixed = jax_recordings.uses_recordings(request.module) and not _thorough(request.config)
    with jax_recordings.running(request.path.stem, jax_recordings.test_key(request.node)), \
            fixed_local_constants() if fixed else contextlib.nullcontext():
        yield


def pytest_sessionfinish(session):
    jax_recordings.save()
    if jax_recordings.too_many_live(session.config.getoption("max_live_jax")):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    for line in jax_recordings.summary(terminalreporter.config.getoption("max_live_jax")):
        terminalreporter.write_line(line)


# ---------------------------------------------------------------- the default run's budget
#
# As hypothesis' `ci` profile draws 6 examples where `thorough` draws 300, the default run
# takes a fixed share of each parametrized test's cases: its first case, then those whose id
# hashes into the share (crc32: the same cases on every run and machine). The `thorough`
# profile (`--hypothesis-profile=thorough`, or HYPOTHESIS_PROFILE=thorough) runs every case.
# The generic property suite (every primitive, every check) always runs whole; tests marked
# `thorough` (a whole JAX documentation page compiling many programs in JAX) run only there.
_SHARE = 20
_WHOLE = {"test_primitive_properties.py", "test_differential.py", "test_architecture.py",
          "test_namespace_numpy.py", "test_namespace_scipy.py", "test_namespace_linalg.py",
          "test_namespace_toplevel.py", "test_namespace_sharding.py", "test_readme.py"}


def _thorough(config):
    profile = config.getoption("hypothesis_profile", default=None)
    return (profile or os.environ.get("HYPOTHESIS_PROFILE", "ci")) == "thorough"


def pytest_collection_modifyitems(config, items):
    if _thorough(config):
        return
    firsts, keep, drop = set(), [], []
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        if item.get_closest_marker("thorough"):
            drop.append(item)
        elif item.path.name in _WHOLE or "[" not in item.nodeid or function not in firsts:
            firsts.add(function)
            keep.append(item)
        elif zlib.crc32(item.nodeid.encode()) % _SHARE == 0:
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
