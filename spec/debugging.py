"""Spec entries of debug_callback, debug_print and inspect_sharding: effects without outputs.
The samples bind them on one operand and return the operand, so the generic suite runs them
under jit, vmap, jvp, grad and on both backends; what they print is tested against JAX in
tests/test_debugging.py and (the shardings inspected) tests/test_debug_and_devices.py."""
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, PrimitiveSpec, Signature, all_args, floats, shapes,
                   weak_flag)


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        elements = floats(-3.0, 3.0, dtype) if diff else None
        return Signature((Arg(draw(shapes()), dtype, draw(weak_flag(dtype)), elements),), {})
    return sig()


def _callback_then_identity(x):
    import refjax
    refjax.debug.callback(lambda v: None, x)
    return x


def _print_then_identity(x):
    import refjax
    refjax.debug.print("{}", x)
    return x


def _inspect_then_identity(x):
    import refjax
    refjax.debug.inspect_array_sharding(x, callback=lambda sharding: None)
    return x


def _jax_identity(jax, x):
    return x


SPECS = [
    PrimitiveSpec(name="debug_callback", dtypes=ALL + COMPLEX, family="debugging",
                  signature=_signature, reference=_jax_identity, apply=_callback_then_identity,
                  exact=True, diff_args=all_args,
                  notes="no outputs: the samples return the operand after the callback"),
    PrimitiveSpec(name="debug_print", dtypes=ALL + COMPLEX, family="debugging",
                  signature=_signature, reference=_jax_identity, apply=_print_then_identity,
                  exact=True, diff_args=all_args,
                  notes="no outputs: the samples return the operand after printing it"),
    PrimitiveSpec(name="inspect_sharding", dtypes=ALL + COMPLEX, family="debugging",
                  signature=_signature, reference=_jax_identity, apply=_inspect_then_identity,
                  exact=True, diff_args=all_args,
                  notes="no outputs: the samples return the operand after inspecting its "
                        "sharding"),
]
