"""refjax.spec: the executable specification of every primitive (samples, references,
tolerances, derivative domains, linear arguments, invalid inputs) and random programs."""
from .base import Invalid, PrimitiveSpec, Sample, Signature  # noqa: F401
from .primitives import SPECS, defining_module, missing_specs, spec_for  # noqa: F401
