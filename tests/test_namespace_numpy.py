"""dir(refjax.numpy) and dir(refjax.numpy.fft) against JAX 0.10.2's jax.numpy: every public
name is there, but for those listed here with the reason (none are left)."""
import jax.numpy as jnp
import pytest

import refjax.numpy as rnp

MISSING = {"numpy": {}, "numpy.fft": {}, "numpy.linalg": {}}
NAMESPACES = {"numpy": (rnp, jnp), "numpy.fft": (rnp.fft, jnp.fft),
              "numpy.linalg": (rnp.linalg, jnp.linalg)}


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_every_public_name_is_present_or_explained(namespace):
    ours, theirs = NAMESPACES[namespace]
    lacking = {n for n in _public(theirs) if not hasattr(ours, n)}
    assert lacking == set(MISSING[namespace]), (
        f"unexplained: {sorted(lacking - set(MISSING[namespace]))}; now present: "
        f"{sorted(set(MISSING[namespace]) - lacking)}")


def test_array_api_namespace_attributes():
    assert rnp.__array_api_version__ == jnp.__array_api_version__
    info, theirs = rnp.__array_namespace_info__(), jnp.__array_namespace_info__()
    assert info.capabilities() == theirs.capabilities()
    assert info.default_dtypes() == theirs.default_dtypes()
    for kind in (None, "bool", "integral", "real floating", ("bool", "complex floating")):
        assert info.dtypes(kind=kind) == theirs.dtypes(kind=kind)


def test_submodules_import_as_in_jax():
    import refjax.numpy.fft as fft
    assert fft is rnp.fft
