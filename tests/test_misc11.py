"""Small fidelity differences settled against real JAX: jit's argnums/argnames checked when jit
is called, a concrete reference's stored weak type after writes, how often eager control
flow's debug callbacks run, Array.traceback's frames."""

import numpy as np
from jax_recordings import on_jax

import refjax


def _outcome(call):
    """What a call gives: 'ok', or the class and message of what it raises."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the error class is what is compared
        return f"{type(e).__name__}: {e}"
    return "ok"


def _positional_only(x, y, /, z):
    return x


def _argnum_checks(jax_mod):
    """jit's argument specifications refused (or not) when jit is called, on functions with
    keyword-only, positional-only, *args and **kwargs parameters and on a builtin."""
    def f(x, y=1, *, z=2):
        return x

    def star(x, *args, **kwargs):
        return x

    cases = [(f, dict(static_argnums=5)), (f, dict(static_argnums=-3)),
             (f, dict(static_argnums=-2)), (f, dict(static_argnames="w")),
             (f, dict(static_argnames="z")), (f, dict(static_argnums=1, static_argnames="y")),
             (f, dict(donate_argnums=2)), (f, dict(donate_argnames=("x", "w"))),
             (f, dict(static_argnums=0, donate_argnums=0)),
             (f, dict(static_argnames="z", donate_argnames="z")),
             (f, dict(static_argnums=0, donate_argnums=(0,), donate_argnames="y")),
             (f, dict(static_argnums="a")), (f, dict(static_argnums=1.5)),
             (f, dict(static_argnames=1)), (f, dict(static_argnames=("x", 2))),
             (star, dict(static_argnums=7, static_argnames="anything")),
             (_positional_only, dict(static_argnames="y")),
             (_positional_only, dict(static_argnums=3)),
             (_positional_only, dict(donate_argnames="z")),
             (max, dict(static_argnums=9)), (max, dict(donate_argnames="x"))]
    return [_outcome(lambda: jax_mod.jit(fun, **kw)) for fun, kw in cases]


def test_jit_checks_argnums_and_argnames_when_called():
    """Out-of-range argnums, unknown or positional-only names and a static argument also
    donated are refused by jit() itself (not at the first call), with JAX's ValueError and
    message; non-integer argnums and non-string names with its TypeError."""
    ours = _argnum_checks(refjax)
    assert ours == on_jax(_argnum_checks)
    assert sum(o.startswith("ValueError") for o in ours) == 10  # the cases are not vacuous


def _negative_static(jax_mod):
    f = jax_mod.jit(lambda x, n: x * n, static_argnums=-1)
    return [float(f(np.float32(2.0), 3)), _outcome(lambda: f(np.float32(1.0), [1]))[:11]]


def test_valid_negative_static_argnum_still_works():
    """static_argnums=-1 names the last positional argument at each call (as JAX's): its
    value is static, an unhashable one refused."""
    assert _negative_static(refjax) == on_jax(_negative_static)
