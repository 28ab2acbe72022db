"""The refjax pytest plugin: run tests once per refjax backend; the `oracle` and `refjax_backend`
fixtures.

Installed with refjax (entry point `pytest11`). `pytest --refjax-backends=numpy_ref,xla,mine`
(names of registered backends, or MODULE:CLASS) runs every test of a module that imports
refjax (`import refjax as jax`) once per named backend
(test ids end in `[numpy_ref]`, `[xla]`, ...), with that backend selected for the test. The
marker `@pytest.mark.backends("numpy_ref", "xla")` (on a test, class or module) names the
backends of its tests explicitly (`--refjax-backends` then keeps only those it lists); an
empty `@pytest.mark.backends()` opts a test out: it runs once, on the default backend.

Fixtures: `refjax_backend` (the name of the backend the test runs on, None when not
parametrized) and `oracle` (`refjax.testing`: `reference`, `reference_fn`, `assert_conforms`,
the strategies)::

    import refjax as jax

    def test_sum(oracle, refjax_backend):
        f = lambda x: jax.numpy.sum(x ** 2)
        x = jax.numpy.arange(4.0)
        oracle.assert_conforms(f(x), oracle.reference_fn(f)(x))
"""
import types

import pytest


def pytest_addoption(parser):
    parser.addoption("--refjax-backends", dest="refjax_backends", default=None,
                     help="comma-separated refjax backends (names, or MODULE:CLASS): each test "
                          "of a module importing "
                          "refjax runs once per backend (tests marked `backends` run on those "
                          "they name that are listed here)")


def pytest_configure(config):
    config.addinivalue_line("markers", "backends(*names): run the test once per named refjax "
                                       "backend (none: once, on the default backend)")


def _listed(config, dest):
    """The backend names of a comma-separated option (MODULE:CLASS entries are imported and
    registered under the class's `name`)."""
    value = config.getoption(dest, default=None)
    if not value:  # (refjax.testing.suite needs hypothesis: imported only when asked for)
        return None
    from refjax.testing.suite import load_backend
    return [load_backend(n.strip()) for n in value.split(",") if n.strip()]


def _uses_refjax(module):
    """Whether a test module imported refjax (or one of its modules) at its top level."""
    return any(isinstance(v, types.ModuleType) and v.__name__.split(".")[0] == "refjax"
               for v in vars(module).values())


def backends_for(metafunc):
    """The backends a test runs on (None: not parametrized)."""
    config = metafunc.config
    chosen = _listed(config, "refjax_backends")
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is not None:
        names = list(marker.args)
        wanted = chosen or _listed(config, "backends")  # refjax's own --backends filter
        return [n for n in names if not wanted or n in wanted] or None
    if chosen and metafunc.module is not None and _uses_refjax(metafunc.module):
        return chosen
    return None


def pytest_generate_tests(metafunc):
    names = backends_for(metafunc)
    if names:
        metafunc.parametrize("refjax_backend", names, indirect=True, ids=names,
                             scope="function")


@pytest.fixture(autouse=True)
def refjax_backend(request):
    """The backend this test runs on, selected for its duration (None, and no change, for a
    test that is not run per backend)."""
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


@pytest.fixture
def oracle():
    """refjax.testing: `reference`, `reference_fn`, `assert_conforms` and the strategies."""
    import refjax.testing
    return refjax.testing
