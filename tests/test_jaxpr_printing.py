"""Printed jaxprs against real JAX's, character for character: `str(make_jaxpr(f)(*args))` for
the programs of tests/jaxpr_programs.py, on both backends; plus the printer's own rules (shared
jaxprs, `_` for unused values, literals, line breaking, the `pp` rule of a primitive)."""
import functools
import sys

import jax as real_jax
import pytest
from jax._src import core as jax_core

import refjax as jax
import refjax.numpy as jnp
from refjax.core import jaxpr as jx

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import jaxpr_programs  # noqa: E402

pytestmark = pytest.mark.backends("numpy_ref", "xla")


# ---------------------------------------------------------------- JAX's params refjax has not
#
# Deliberate differences, removed from JAX's jaxpr (then printed by JAX's own printer, so the
# layout is JAX's for what remains):
#   none now (refjax prints the scatters' update_consts/update_jaxpr, NumPy integers in
#   params and sharding_constraint's context_mesh/layout/unconstrained_dims as JAX does).
_HIDDEN = {}


def normalized(jaxpr, memo=None):
    """JAX's jaxpr without the params above (the same object for a jaxpr met twice, so that
    shared jaxprs stay shared)."""
    memo = {} if memo is None else memo
    if isinstance(jaxpr, jax_core.ClosedJaxpr):
        return jax_core.ClosedJaxpr(normalized(jaxpr.jaxpr, memo), jaxpr.consts)
    if id(jaxpr) not in memo:
        memo[id(jaxpr)] = jaxpr.replace(eqns=[_normalized_eqn(e, memo) for e in jaxpr.eqns])
    return memo[id(jaxpr)]


def _normalized_eqn(eqn, memo):
    hidden = _HIDDEN.get(eqn.primitive.name, ())
    params = {k: _param(v, memo) for k, v in eqn.params.items() if k not in hidden}
    return eqn.replace(params=params)


def _param(value, memo):
    if isinstance(value, (jax_core.Jaxpr, jax_core.ClosedJaxpr)):
        return normalized(value, memo)
    if type(value) is tuple and value and all(isinstance(v, (jax_core.Jaxpr, jax_core.ClosedJaxpr))
                                              for v in value):
        return tuple(normalized(v, memo) for v in value)
    return value


# ---------------------------------------------------------------- the programs

@functools.lru_cache(maxsize=None)
def _jax_texts(sharding):
    """{name: (plain text, colored text)} of JAX's jaxprs of the programs."""
    real_jax.config.update("jax_num_cpu_devices", 8)
    cases = jaxpr_programs.sharding_programs(real_jax) if sharding else \
        jaxpr_programs.programs(real_jax)
    jaxprs = {name: normalized(real_jax.make_jaxpr(f)(*args)) for name, (f, args) in cases.items()}
    return {name: (j.pretty_print(use_color=False), j.pretty_print(use_color=True))
            for name, j in jaxprs.items()}


def _assert_prints_as_jax(closed, want):
    """JAX's text, plain and with JAX's ANSI colors (what str() gives in a terminal or a
    notebook)."""
    assert closed.pretty_print(use_color=False) == want[0]
    assert closed.pretty_print(use_color=True) == want[1]


def _names(sharding):
    cases = jaxpr_programs.sharding_programs(real_jax) if sharding else \
        jaxpr_programs.programs(real_jax)
    return sorted(cases)


@pytest.mark.parametrize("name", _names(False))
def test_program_prints_as_jax(name):
    f, args = jaxpr_programs.programs(jax)[name]
    _assert_prints_as_jax(jax.make_jaxpr(f)(*args), _jax_texts(False)[name])


@pytest.mark.parametrize("name", _names(True))
def test_sharding_program_prints_as_jax(name):
    f, args = jaxpr_programs.sharding_programs(jax)[name]
    _assert_prints_as_jax(jax.make_jaxpr(f)(*args), _jax_texts(True)[name])


def test_str_colors_where_jax_does():
    ours = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    theirs = real_jax.make_jaxpr(lambda x: real_jax.numpy.sin(x) * 2.0)(1.0)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    with jax.config.override(jax_pprint_use_color=False):
        assert str(ours) == theirs.pretty_print(use_color=False)


def test_enough_programs():
    assert len(_names(False)) + len(_names(True)) >= 40


# ---------------------------------------------------------------- the printer's own rules

def test_shared_jaxprs_unused_values_and_literals():
    inner = jax.jit(lambda x: x * 2.0)
    text = str(jax.make_jaxpr(lambda x: (inner(x), inner(x + 1.0), jnp.sin(x))[:2])(1.0))
    theirs_inner = real_jax.jit(lambda x: x * 2.0)
    want = str(real_jax.make_jaxpr(lambda x: (theirs_inner(x), theirs_inner(x + 1.0),
                                              real_jax.numpy.sin(x))[:2])(1.0))
    assert text == want
    # the jit's jaxpr, used twice, comes first (named after the function, without <>); the
    # unused sin prints `_`; the literal keeps its type
    assert text.startswith("let lambda = { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[]")
    assert "jaxpr=lambda] c" in text and "_:f32[] = sin c" in text


def test_long_jaxprs_are_laid_out_at_the_requested_width():
    def f(x, y):
        return jnp.sin(x) * y + jnp.cos(y) * x

    def g(x, y):
        return real_jax.numpy.sin(x) * y + real_jax.numpy.cos(y) * x

    ours, theirs = jax.make_jaxpr(f)(1.0, 2.0), real_jax.make_jaxpr(g)(1.0, 2.0)
    for width in (0, 20, 40, 80, 200):
        assert ours.pretty_print(width=width) == theirs.pretty_print(width=width, use_color=False)


def test_a_primitive_pp_rule_chooses_params_and_their_order():
    eqn = jax.make_jaxpr(lambda x: jnp.broadcast_to(x, (3,)))(1.0).eqns[0]
    assert eqn.primitive.pp is not None and "shape" in eqn.params
    assert [k for k, _ in jx.eqn_params(eqn, jx.PpContext())] == []  # all implied by the type
    no_rule = jax.make_jaxpr(lambda x: x.reshape(2, 1))(jnp.ones(2)).eqns[0]
    assert no_rule.primitive.pp is None
    assert [k for k, _ in jx.eqn_params(no_rule, jx.PpContext())] == sorted(no_rule.params)


def test_jit_names_its_jaxpr_binders_after_the_call_site():
    inner = jax.jit(lambda a, b: a * b)
    text = str(jax.make_jaxpr(lambda x, y: inner(y, x))(1.0, 2.0))
    assert "jaxpr={ lambda ; b:f32[] a:f32[]. let" in text
