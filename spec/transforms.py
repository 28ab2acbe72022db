"""Spec entries of the primitives defined by transformations: jit and stop_gradient."""
from hypothesis import strategies as st

from .base import ALL, COMPLEX, Arg, PrimitiveSpec, Signature, all_args, shapes, weak_flag
from .programs import program_jaxpr, programs, smooth_elements


def jaxpr_reference(jax, closed, args):
    """A refjax ClosedJaxpr evaluated with real JAX, each equation by its spec's reference."""
    from refjax.core.jaxpr import Literal
    from .primitives import SPECS
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))

    def read(v):
        return v.val if type(v) is Literal else env[v]
    for eqn in closed.jaxpr.eqns:
        out = SPECS[eqn.primitive.name].reference(jax, *map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return [read(v) for v in closed.jaxpr.outvars]


# ---------------------------------------------------------------- jit

def _jit_signature(dtype, diff):
    @st.composite
    def sig(draw):
        program = draw(programs(dtype, smooth=diff))
        elements = smooth_elements(dtype) if diff else None
        return Signature(program.in_args(elements),
                         {"name": "program", "jaxpr": program_jaxpr(program)})
    return sig()


def _jit_reference(jax, *args, name, jaxpr):
    return jaxpr_reference(jax, jaxpr, args)


JIT = PrimitiveSpec(
    name="jit", dtypes=ALL + COMPLEX, family="transforms", signature=_jit_signature,
    reference=_jit_reference, tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2),
                                   "float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5)},
    diff_args=all_args, linear_args=all_args,
    notes="samples wrap a random program (spec/programs.py) staged to a ClosedJaxpr")


# ---------------------------------------------------------------- stop_gradient

def _stop_gradient_signature(dtype, diff):
    @st.composite
    def sig(draw):
        return Signature((Arg(draw(shapes()), dtype, draw(weak_flag(dtype))),), {})
    return sig()


STOP_GRADIENT = PrimitiveSpec(
    name="stop_gradient", dtypes=ALL + COMPLEX, family="transforms",
    signature=_stop_gradient_signature, reference=lambda jax, x: jax.lax.stop_gradient(x),
    exact=True, nondiff="zero", notes="the identity, with a zero tangent")

SPECS = [JIT, STOP_GRADIENT]
