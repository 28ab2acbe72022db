"""refjax.testing: the oracle, strategies and assertions for conformance tests of JAX-like code.

Stable public names (see README "Use the oracle in your tests"):

- strategies: `dtypes`, `shapes`, `broadcastable_shapes`, `arrays`, `edge_values`,
  `weak_scalars`, `samples(primitive_name)`, `invalid_samples(primitive_name)`;
- the oracle: `reference(primitive_name, *args, **params)`, `reference_fn(fn)`, `enable_x64`;
- assertions: `assert_conforms`, `ulp_distance`, `ConformanceError`;
- the generic checks: `CHECKS` (name -> check function), `run_check`, `Outcome`.

Example, a hypothesis test of one's own function against the oracle::

    from hypothesis import given
    import refjax.testing as rt

    @given(rt.arrays("float32", (3,)))
    def test_my_sin(x):
        rt.assert_conforms(my_sin(x), rt.reference("sin", x), max_ulps=2)
"""
import importlib

# name -> the submodule defining it. Loaded on first use (PEP 562), so that the pytest plugin
# (refjax.testing.pytest_plugin, installed as an entry point with refjax) does not import
# hypothesis in environments that have pytest but not the `testing` extra.
_HOME = {
    "assertions": ("ConformanceError", "assert_conforms", "assert_values_conform",
                   "ulp_distance"),
    "checks": ("JAX", "NotApplicable"),
    "oracle": ("ORACLE", "enable_x64", "reference", "reference_fn"),
    "strategies": ("DTYPES_32", "DTYPES_64", "Invalid", "Sample", "arrays",
                   "broadcastable_shapes", "dtypes", "edge_values", "invalid_samples", "samples",
                   "shapes", "weak_scalars"),
    "suite": ("CHECKS", "JAX_CHECKS", "Outcome", "checks_for", "run_check"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}


def __getattr__(name):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'refjax.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = ["ConformanceError", "assert_conforms", "assert_values_conform", "ulp_distance",
           "JAX", "NotApplicable", "ORACLE", "enable_x64", "reference", "reference_fn",
           "DTYPES_32", "DTYPES_64", "Invalid", "Sample", "arrays", "broadcastable_shapes",
           "dtypes", "edge_values", "invalid_samples", "samples", "shapes", "weak_scalars",
           "CHECKS", "JAX_CHECKS", "Outcome", "checks_for", "run_check"]
