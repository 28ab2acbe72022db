"""jax.ensure_compile_time_eval, jax.named_scope and jax.named_call against real JAX 0.10.2
(values, staged jaxprs, Python control flow on values computed inside jit, errors), and the
name stack each staged equation records."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from refjax.core import source_info
from refjax.core.trace import Tracer

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _compile_time_programs(jax):
    jnp = jax.numpy

    @jax.jit
    def branch(x):
        with jax.ensure_compile_time_eval():
            z = jnp.sin(jnp.sin(3.0))
            positive = z > 0  # concrete: Python may branch on it
            w = x * 2 + z  # traced operand: staged as usual
        return jnp.sin(w) if positive else jnp.cos(w)

    def count(x):
        with jax.ensure_compile_time_eval():
            n = int(jnp.arange(4).sum())
        return x * n
    return {
        "branch": lambda: branch(1.0),
        "jit": lambda: jax.jit(count)(2.0),
        "vmap": lambda: jax.vmap(count)(jnp.arange(2.0)),
        "grad": lambda: jax.grad(count)(1.0),
        "vmap_jaxpr": lambda: str(jax.make_jaxpr(jax.vmap(count))(jnp.arange(2.0))),
        "eager": lambda: _eager(jax),
    }


def _eager(jax):
    with jax.ensure_compile_time_eval():
        return jax.numpy.ones(2) * 3


def _same(ours, theirs):
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype


@pytest.mark.parametrize("name", sorted(_compile_time_programs(real_jax)))
def test_ensure_compile_time_eval_as_jax(name):
    _same(_compile_time_programs(refjax)[name](), _compile_time_programs(real_jax)[name]())


def test_concrete_values_inside_jit_are_not_traced():
    seen = []

    @refjax.jit
    def f(x):
        with refjax.ensure_compile_time_eval():
            seen.append(refjax.numpy.arange(3) * 2)
            seen.append(x * 2)
        return x
    f(1.0)
    assert not isinstance(seen[0], Tracer) and np.asarray(seen[0]).tolist() == [0, 2, 4]
    assert isinstance(seen[1], Tracer)


def _scoped(jax):
    jnp = jax.numpy

    def f(x):
        with jax.named_scope("foo"):
            y = jnp.sin(x)
            with jax.named_scope("inner"):
                y = y + 1
        return jax.named_call(lambda z: z * 2, name="bar")(y) - 1
    return f


def test_named_scope_and_call_as_jax():
    """The same values and (default) printed jaxprs: names show only in name stacks."""
    for fn in (lambda jax: _scoped(jax)(1.0),
               lambda jax: jax.jit(jax.grad(_scoped(jax)))(1.0),
               lambda jax: str(jax.make_jaxpr(_scoped(jax))(1.0))):
        _same(fn(refjax), fn(real_jax))


def test_name_stacks_recorded():
    """Each staged equation records the scopes open when it was bound (JAX's name stack,
    printed by JAX's pretty_print(name_stack=True) as `# [foo]`), kept by transformations
    that re-bind it; under grad within JAX's `jvp(...)` and `transpose(...)`, as JAX's."""
    jaxpr = refjax.make_jaxpr(_scoped(refjax))(1.0)
    assert [e.source_info.name_stack for e in jaxpr.eqns] == [
        ("foo",), ("foo", "inner"), ("bar",), ()]
    grad = refjax.make_jaxpr(refjax.grad(_scoped(refjax)))(1.0)
    theirs = real_jax.make_jaxpr(real_jax.grad(_scoped(real_jax)))(1.0)
    assert [(e.primitive.name, "/".join(source_info.render(e.source_info.name_stack)))
            for e in grad.eqns] == [(e.primitive.name, str(e.source_info.name_stack))
                                    for e in theirs.eqns]


def test_named_scope_decorator_and_errors_as_jax():
    for jax in (refjax, real_jax):
        @jax.named_scope("deco")
        def g(x):
            return x + 1
        assert float(g(1.0)) == 2.0
        named = jax.named_call(lambda x: x * 2, name="bar")
        assert float(named(2.0)) == 4.0
    messages = []
    for jax in (refjax, real_jax):
        with pytest.raises(TypeError) as e:
            with jax.named_scope(3):
                pass
        messages.append(str(e.value))
    assert messages[0] == messages[1]
