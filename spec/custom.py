"""Spec entries of custom_jvp_call, custom_vjp_call, custom_vmap_call, composite, custom_lin
(random programs wrapped) and linear_call."""
from hypothesis import strategies as st

from .base import ALL, COMPLEX, PrimitiveSpec, Signature, args_at, float_args, no_args
from .elementwise import nary
from .programs import program_fn, program_reference, programs, smooth_elements

ANY = ALL + COMPLEX
_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5),
        "complex64": (1e-4, 1e-5)}


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        program = draw(programs(dtype, smooth=diff, max_eqns=4))
        elements = smooth_elements(dtype) if diff else None
        return Signature(program.in_args(elements), {"program": program})
    return sig()


def custom_jvp_function(program):
    """The program as a refjax.custom_jvp function whose rule is refjax.jvp of the program."""
    import refjax
    f = program_fn(program)
    wrapped = refjax.custom_jvp(lambda *xs: f(*xs))

    @wrapped.defjvp
    def rule(primals, tangents):
        return refjax.jvp(f, list(primals), list(tangents))
    return wrapped


def custom_vjp_function(program):
    """The program as a refjax.custom_vjp function whose backward pass is refjax.vjp."""
    import refjax
    f = program_fn(program)
    wrapped = refjax.custom_vjp(lambda *xs: f(*xs))

    def fwd(*xs):
        return f(*xs), xs

    def bwd(xs, cts):
        return tuple(refjax.vjp(f, *xs)[1](list(cts)))
    wrapped.defvjp(fwd, bwd)
    return wrapped


def custom_vmap_function(program):
    """The program as a refjax.custom_batching.custom_vmap function whose rule is refjax.vmap
    of the program over the batched arguments."""
    import refjax
    f = program_fn(program)
    wrapped = refjax.custom_batching.custom_vmap(lambda *xs: f(*xs))

    @wrapped.def_vmap
    def rule(axis_size, in_batched, *xs):
        outs = refjax.vmap(f, in_axes=[0 if b else None for b in in_batched],
                           axis_size=axis_size)(*xs)
        return outs, refjax.tree.map(lambda _: True, outs)
    return wrapped


def composite_function(program):
    """The program as a refjax.lax.composite operation."""
    import refjax
    f = program_fn(program)
    return refjax.lax.composite(lambda *xs: f(*xs), "refjax.program")


def _reference(jax, *args, program):
    return program_reference(program, args)


def _entry(name, make, linear, notes, forward="ok"):
    return PrimitiveSpec(
        name=name, dtypes=ANY, family="custom", signature=_signature, reference=_reference,
        apply=lambda *args, program: make(program)(*args), tol=_TOL, diff_args=float_args,
        linear_args=float_args if linear else no_args, forward=forward, notes=notes)


SPECS = [
    _entry("custom_jvp_call", custom_jvp_function, False,
           "bound by calling a refjax.custom_jvp function (samples: a random program)"),
    _entry("custom_vjp_call", custom_vjp_function, False,
           "bound by calling a refjax.custom_vjp function (samples: a random program); "
           "forward mode raises TypeError, as in JAX", forward="raises"),
    _entry("custom_vmap_call", custom_vmap_function, False,
           "bound by calling a custom_batching.custom_vmap function (samples: a random "
           "program, its rule vmap of it); derivatives are the function's"),
    PrimitiveSpec(
        name="composite", dtypes=ANY, family="custom", signature=_signature,
        reference=_reference, apply=lambda *args, program: composite_function(program)(*args),
        tol=_TOL, nondiff="raises", nondiff_error=ValueError,
        notes="bound by calling a lax.composite operation (samples: a random program as its "
              "decomposition); no JVP, as in JAX; vmapped through its decomposition (JAX: "
              "NotImplementedError)"),
    _entry("custom_lin", custom_vjp_function, True,
           "internal: the linear part of a custom_vjp function under linearize; exercised "
           "through custom_vjp functions, its transpose runs the user's backward pass",
           forward="raises"),
]


def _masked(lax, r, x):
    """x where r != 0, else 0: linear in x, its own transpose; every dtype has it."""
    return lax.select(lax.ne(r, lax.full_like(r, 0)), x, lax.full_like(x, 0))


def _linear_call_reference(jax, r, x):
    masked = lambda r, x: _masked(jax.lax, r, x)  # noqa: E731
    return jax.custom_derivatives.linear_call(masked, masked, r, x)


def _linear_call_apply(r, x):
    import refjax
    return _linear_call_reference(refjax, r, x)


SPECS.append(PrimitiveSpec(
    name="linear_call", dtypes=ANY, family="custom", signature=nary(2, scalars=False),
    reference=_linear_call_reference, apply=_linear_call_apply, tol=_TOL,
    diff_args=args_at(1), linear_args=args_at(1),
    notes="bound by custom_derivatives.linear_call (samples: x masked where r is 0, linear in "
          "x and its own transpose); derivatives in the residuals raise (JAX: "
          "AssertionError); vmapped by batching both (JAX: NotImplementedError)"))
