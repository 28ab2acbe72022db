"""Spec entries of the primitives defined by transformations: jit and stop_gradient."""
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, PrimitiveSpec, Signature, all_args, floats, shapes,
                   weak_flag)
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

# ---------------------------------------------------------------- remat2, name

def _remat_signature(dtype, diff):
    @st.composite
    def sig(draw):
        program = draw(programs(dtype, smooth=diff))
        elements = smooth_elements(dtype) if diff else None
        policy = draw(st.sampled_from((None, "dots", "everything")))
        return Signature(program.in_args(elements),
                         {"jaxpr": program_jaxpr(program), "prevent_cse": True,
                          "differentiated": False, "policy": _POLICIES[policy]})
    return sig()


def _policies():
    from refjax.core.transforms import checkpoint
    return {None: None, "dots": checkpoint.dots_saveable,
            "everything": checkpoint.everything_saveable}


class _Lazy(dict):
    def __missing__(self, key):
        self.update(_policies())
        return self[key]


_POLICIES = _Lazy()


def _remat_reference(jax, *args, jaxpr, **_):
    return jaxpr_reference(jax, jaxpr, args)


REMAT = PrimitiveSpec(
    name="remat2", dtypes=ALL + COMPLEX, family="transforms", signature=_remat_signature,
    reference=_remat_reference, tol=JIT.tol, diff_args=all_args, linear_args=all_args,
    notes="jax.checkpoint's primitive; samples wrap a random program with a policy; "
          "tests/test_checkpoint.py counts the residuals each policy saves")

def _name_signature(dtype, diff):
    @st.composite
    def sig(draw):
        elements = floats(-3.0, 3.0, dtype) if diff else None
        return Signature((Arg(draw(shapes()), dtype, draw(weak_flag(dtype)), elements),), {})
    return sig()


NAME = PrimitiveSpec(
    name="name", dtypes=ALL + COMPLEX, family="transforms", signature=_name_signature,
    reference=lambda jax, x: _jax_checkpoint_name(x), apply=lambda x: _checkpoint_name(x),
    exact=True, diff_args=all_args,
    notes="checkpoint_name: the identity, named (the tangent is not named: no transpose)")


def _jax_checkpoint_name(x):
    from jax.ad_checkpoint import checkpoint_name
    return checkpoint_name(x, "sample")


def _checkpoint_name(x):
    from refjax.core.transforms.checkpoint import checkpoint_name
    return checkpoint_name(x, "sample")


SPECS = [JIT, STOP_GRADIENT, REMAT, NAME]
