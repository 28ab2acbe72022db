"""refjax.spec: the executable specification of every primitive, and random programs."""
# A new primitive needs a PrimitiveSpec (spec/base.py) in its family's module, listed in that
# module's SPECS; tests/test_primitive_properties.py then covers it (and fails until it has one).
from .base import Invalid, PrimitiveSpec, Sample, Signature  # noqa: F401
from .primitives import SPECS, defining_module, missing_specs, spec_for  # noqa: F401
