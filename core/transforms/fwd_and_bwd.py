"""jax.fwd_and_bwd: a function's forward and backward passes as two (jitted) functions."""
from .autodiff import _check_argnums, _per_argnums, vjp
from .jit import jit


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """(fwd, bwd): `fwd(*args)` returns `(fun(*args), residuals)` (plus `aux` with has_aux),
    `bwd(residuals, cotangent)` the cotangents of the arguments `argnums` selects (one value
    for an int argnums, a tuple otherwise). The residuals are the `jax.vjp` pullback, a pytree,
    so a jitted `bwd` compiles once however often `fwd` runs."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")

    def fwd(*args, **kwargs):
        _check_in_range(argnums, len(args))
        nums = _check_argnums(argnums, len(args), "fwd_and_bwd")

        def selected(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full, **kwargs)
        return vjp(selected, *(args[i] for i in nums), has_aux=has_aux)

    def bwd(residuals, cotangent):
        return _per_argnums(residuals(cotangent), argnums)

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def _check_in_range(argnums, nargs):
    """JAX's ValueError (fwd_and_bwd selects arguments as jit's static_argnums do)."""
    for i in (argnums,) if isinstance(argnums, int) else argnums:
        if isinstance(i, int) and not -nargs <= i < nargs:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value greater "
                f"than or equal to -len(args) and less than len(args), but got value {i} for "
                f"len(args) == {nargs}.")
