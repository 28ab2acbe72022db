"""The specification of every primitive, by name: SPECS[name] is its PrimitiveSpec."""
from . import (arrays, bits, callbacks, checkify, control_flow, convolution, custom, custom_solve,
               debugging, decompositions, elementwise, fft, gather, linalg, parallel, ragged,
               reductions, rng, sharding_ops, solvers, sorting, special, spectral, state,
               structural, transforms, windowed)
from .base import PrimitiveSpec

_MODULES = [elementwise, structural, reductions, linalg, sorting, control_flow, custom,
            sharding_ops, parallel, transforms, gather, special, bits, fft, arrays, rng, debugging,
            solvers, decompositions, spectral, custom_solve, convolution, windowed, callbacks, ragged,
            checkify, state]


def _collect():
    specs = {}
    for module in _MODULES:
        for spec in module.SPECS:
            if spec.name in specs:
                raise ValueError(f"primitive {spec.name!r} specified twice")
            specs[spec.name] = spec
    return specs


SPECS = _collect()


def spec_for(name):
    """The PrimitiveSpec of the primitive called `name` (KeyError naming it if missing)."""
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"primitive {name!r} has no entry in refjax.spec: add a PrimitiveSpec "
                       f"for it (see spec/base.py)") from None


def missing_specs():
    """Names of registered primitives without a spec entry."""
    from refjax.core.primitive import all_primitives
    return sorted(set(all_primitives()) - set(SPECS))


def defining_module(name):
    """The refjax module that defines the primitive `name` (its family), e.g. 'elementwise'."""
    import sys
    from refjax.core.primitive import Primitive
    for mod_name, mod in sorted(sys.modules.items()):
        if not mod_name.startswith("refjax.core") or mod is None:
            continue
        for value in vars(mod).values():
            if isinstance(value, Primitive) and value.name == name:
                return mod_name.rsplit(".", 1)[-1]
    return "?"


__all__ = ["PrimitiveSpec", "SPECS", "spec_for", "missing_specs", "defining_module"]
