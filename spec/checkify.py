"""Spec entry of check (checkify's effect): the samples check a predicate that holds, with
the operand as the message's value, under checkify, and return the operand, so the generic
suite runs the check's discharge under jit, vmap, jvp, grad and on both backends; failing
checks and their messages are tested against JAX in tests/test_checkify.py."""
import dataclasses

from . import debugging


def _checked_identity(x):
    from refjax.experimental import checkify

    def f(x):
        checkify.check(True, "never fails: {}", x)
        return x
    err, out = checkify.checkify(f)(x)
    return out


# debug_callback's entry (an effect without outputs, every dtype) with the check's sample
SPECS = [
    dataclasses.replace(debugging.SPECS[0], name="check", family="checkify",
                        apply=_checked_identity,
                        notes="no outputs: the samples return the operand after a check under "
                              "checkify"),
]
