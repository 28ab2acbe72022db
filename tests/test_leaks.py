"""jax.checking_leaks / jax_check_tracer_leaks: a tracer that outlives its jit (or
make_jaxpr) staging or its vmap is reported as JAX reports it ("Leaked trace ... Leaked
tracer(s):" and what holds it, down to the module global), as UnexpectedTracerError (JAX
raises a bare Exception); correct programs run unchanged, with JAX's values."""
import re

import jax as real_jax
import numpy as np
import pytest

import refjax

# The check is in core's tracing, the same for every backend: run once, on the default one
# (each check collects garbage and scans the heap, which takes seconds under load).
LEAKED = []


class Box:
    pass


BOX = Box()


def _jit_leak(jax):
    @jax.jit
    def f(x):
        LEAKED.append(x * 2)
        return x
    return f(1.0)


def _vmap_leak(jax):
    def h(x):
        BOX.v = x
        return x
    return jax.vmap(h)(jax.numpy.ones(2))


def _report(jax, program):
    LEAKED.clear()
    with jax.checking_leaks():
        with pytest.raises(Exception) as e:
            program(jax)
    LEAKED.clear()
    BOX.v = None
    return str(e.value), e.value


@pytest.mark.parametrize("program, trace, jax_trace, holder", [
    (_jit_leak, "StagingTrace", "DynamicJaxprTrace", r"<list \d+>\[0\]\n<list \d+> is referred to "
                                                     r"by test_leaks\.LEAKED"),
    (_vmap_leak, "BatchTrace", "BatchTrace", r"Tracer \d+> is referred to by <Box \d+>\.v\n"
                                             r"<Box \d+> is referred to by test_leaks\.BOX"),
])
def test_leaks_reported_as_jax(program, trace, jax_trace, holder):
    ours, error = _report(refjax, program)
    theirs, _ = _report(real_jax, program)
    assert isinstance(error, refjax.errors.UnexpectedTracerError)
    assert ours.startswith(f"Leaked trace {trace}. Leaked tracer(s):\n\n")
    assert theirs.startswith(f"Leaked trace {jax_trace}. Leaked tracer(s):\n\n")
    assert re.search(holder, ours) and re.search(holder, theirs)


def _clean_programs(jax):
    jnp, lax = jax.numpy, jax.lax

    @jax.custom_jvp
    def cj(x):
        return jnp.sin(x)
    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0]))
    return [
        lambda: jax.jit(lambda x: jnp.sin(x) * 2)(1.0),
        lambda: jax.jit(jax.grad(lambda x: lax.scan(lambda c, y: (c * y, c), x,
                                                    jnp.arange(3.0))[0]))(2.0),
        lambda: jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(jnp.arange(3.0)),
        lambda: jax.jit(jax.vmap(jax.grad(lambda x: jnp.tanh(x).sum())))(jnp.ones((2, 3))),
        lambda: jax.jit(jax.grad(cj))(1.0),
        lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0),
    ]


@pytest.mark.parametrize("index", range(len(_clean_programs(real_jax))))
def test_correct_programs_run_unchanged(index):
    with refjax.checking_leaks():
        ours = _clean_programs(refjax)[index]()
    with real_jax.checking_leaks():
        theirs = _clean_programs(real_jax)[index]()
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_state():
    assert refjax.check_tracer_leaks.value is False
    with refjax.checking_leaks():
        assert refjax.config.jax_check_tracer_leaks is True
    assert refjax.config.jax_check_tracer_leaks is False
