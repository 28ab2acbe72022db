"""Spec entry of check (checkify's effect): the samples check a predicate that holds, with
the operand as the message's value, under checkify, and return the operand, so the generic
suite runs the check's discharge under jit, vmap, jvp, grad and on both backends; failing
checks and their messages are tested against JAX in tests/test_checkify.py."""
from .base import ALL, COMPLEX, PrimitiveSpec, all_args
from .debugging import _jax_identity, _signature


def _checked_identity(x):
    from refjax.experimental import checkify

    def f(x):
        checkify.check(True, "never fails: {}", x)
        return x
    err, out = checkify.checkify(f)(x)
    return out


SPECS = [
    PrimitiveSpec(name="check", dtypes=ALL + COMPLEX, family="checkify",
                  signature=_signature, reference=_jax_identity, apply=_checked_identity,
                  exact=True, diff_args=all_args,
                  notes="no outputs: the samples return the operand after a check under checkify"),
]
