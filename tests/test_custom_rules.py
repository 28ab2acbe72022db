"""custom_jvp and custom_vjp behave as JAX's: which of f, f_jvp, fwd and bwd run under each
transformation (and on what: concrete primals outside jit), and the checks of what the rules
return (the errors JAX raises, naming the rule). Compared with real JAX side by side."""
import jax as real_jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _traced_jvp_pair(jax):
    """A custom_jvp function whose f and rule log their calls; the rule branches in Python on
    a primal (works only when primals are concrete)."""
    log = []

    @jax.custom_jvp
    def f(x):
        log.append("f")
        return jax.numpy.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        log.append("jvp")
        scale = 2.0 if x > 0 else -2.0  # Python control flow on a primal
        return jax.numpy.sin(x), scale * t
    return f, log


@pytest.mark.parametrize("transform", ["call", "jvp", "grad", "vjp", "linearize",
                                       "jit_grad", "grad_jit", "vmap_grad"])
def test_custom_jvp_call_order_and_concrete_primals(transform):
    def run(jax):
        f, log = _traced_jvp_pair(jax)
        x = np.float32(0.5)
        out = {
            "call": lambda: f(x),
            "jvp": lambda: jax.jvp(f, (x,), (np.float32(1.0),)),
            "grad": lambda: jax.grad(f)(x),
            "vjp": lambda: jax.vjp(f, x)[1](np.float32(1.0)),
            "linearize": lambda: jax.linearize(f, x)[1](np.float32(1.0)),
            "jit_grad": lambda: jax.jit(jax.grad(lambda v: f(v) if True else v))(x),
            "grad_jit": lambda: jax.grad(jax.jit(f))(x),
            "vmap_grad": lambda: jax.vmap(jax.grad(f))(np.array([0.5, 1.5], np.float32)),
        }
        try:
            result = out[transform]()
        except Exception as e:  # both must fail alike where Python branches on a tracer
            return type(e).__name__, log
        return real_jax.tree_util.tree_map(np.asarray, result), log

    expected, expected_log = run(real_jax)
    actual, actual_log = run(refjax)
    assert actual_log == expected_log
    if isinstance(expected, str):
        assert actual == expected
    else:
        real_jax.tree_util.tree_map(np.testing.assert_allclose, actual, expected)


def _logged_vjp(jax):
    log = []

    @jax.custom_vjp
    def f(x, y):
        log.append("f")
        return x * y

    def fwd(x, y):
        log.append("fwd")
        assert x > 0  # concrete outside jit
        return x * y, (x, y)

    def bwd(res, g):
        log.append("bwd")
        x, y = res
        return g * y * 10, None
    f.defvjp(fwd, bwd)
    return f, log


@pytest.mark.parametrize("transform", ["call", "grad", "vjp", "jvp", "value_and_grad"])
def test_custom_vjp_call_order(transform):
    def run(jax):
        f, log = _logged_vjp(jax)
        x, y = np.float32(2.0), np.float32(3.0)
        calls = {
            "call": lambda: f(x, y),
            "grad": lambda: jax.grad(f)(x, y),
            "vjp": lambda: jax.vjp(f, x, y)[1](np.float32(1.0)),
            "jvp": lambda: jax.jvp(f, (x, y), (np.float32(1.0), np.float32(0.0))),
            "value_and_grad": lambda: jax.value_and_grad(f, argnums=(0, 1))(x, y),
        }
        try:
            result = calls[transform]()
        except Exception as e:
            return type(e).__name__, log
        return real_jax.tree_util.tree_map(np.asarray, result), log

    expected, expected_log = run(real_jax)
    actual, actual_log = run(refjax)
    assert actual_log == expected_log
    if isinstance(expected, str):
        assert actual == expected
    else:
        real_jax.tree_util.tree_map(np.testing.assert_allclose, actual, expected)


# ---------------------------------------------------------------- checks of the rules' outputs

def _jvp_with_rule(jax, rule):
    @jax.custom_jvp
    def f(x):
        return x * 2.0
    f.defjvp(rule)
    return f


BAD_JVP_RULES = {
    "not_a_pair": lambda p, t: p[0],
    "tangent_shape": lambda p, t: (p[0] * 2.0, np.ones(3, np.float32)),
    "tangent_dtype": lambda p, t: (p[0] * 2.0, np.int32(1)),
    "tree_mismatch": lambda p, t: ((p[0] * 2.0,), t[0]),
}


@pytest.mark.parametrize("name", sorted(BAD_JVP_RULES))
def test_custom_jvp_rule_outputs_are_checked(name):
    rule = BAD_JVP_RULES[name]
    x = np.float32(1.0)
    with pytest.raises(Exception) as expected:
        real_jax.jvp(_jvp_with_rule(real_jax, rule), (x,), (x,))
    with pytest.raises(type(expected.value)) as actual:
        refjax.jvp(_jvp_with_rule(refjax, rule), (x,), (x,))
    assert str(actual.value) == str(expected.value)


def test_custom_jvp_rule_primal_checked_against_the_function_when_it_ran():
    """Under jit (staging) the function runs, then its rule's primal output must match."""
    rule = lambda p, t: (np.zeros(3, np.float32), np.zeros(3, np.float32))  # noqa: E731
    x = np.float32(1.0)
    with pytest.raises(TypeError) as expected:
        real_jax.grad(real_jax.jit(_jvp_with_rule(real_jax, rule)))(x)
    with pytest.raises(TypeError) as actual:
        refjax.grad(refjax.jit(_jvp_with_rule(refjax, rule)))(x)
    assert str(actual.value) == str(expected.value)


def test_custom_jvp_rule_structure_checked_against_the_function_when_it_ran():
    rule = lambda p, t: ((p[0],), (t[0],))  # noqa: E731
    x = np.float32(1.0)
    with pytest.raises(TypeError) as expected:
        real_jax.grad(real_jax.jit(_jvp_with_rule(real_jax, rule)))(x)
    with pytest.raises(TypeError) as actual:
        refjax.grad(refjax.jit(_jvp_with_rule(refjax, rule)))(x)
    assert str(actual.value) == str(expected.value)


def test_custom_vjp_fwd_primal_checked_against_the_function_when_it_ran():
    fwd = lambda x, y: ((x * y, x), None)  # noqa: E731
    x = np.float32(2.0)
    with pytest.raises(TypeError) as expected:
        real_jax.grad(real_jax.jit(_vjp_with(real_jax, fwd, lambda r, g: (g, g))))(x, x)
    with pytest.raises(TypeError) as actual:
        refjax.grad(refjax.jit(_vjp_with(refjax, fwd, lambda r, g: (g, g))))(x, x)
    assert str(actual.value) == str(expected.value)


def _vjp_with(jax, fwd, bwd):
    @jax.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(fwd, bwd)
    return f


BAD_VJPS = {
    "fwd_not_pair": (lambda x, y: x * y, lambda r, g: (g, g)),
    "bwd_too_few": (lambda x, y: (x * y, None), lambda r, g: (g,)),
    "bwd_not_tuple": (lambda x, y: (x * y, None), lambda r, g: g),
    "bwd_wrong_shape": (lambda x, y: (x * y, None), lambda r, g: (np.ones(3, np.float32), g)),
}


@pytest.mark.parametrize("name", sorted(BAD_VJPS))
def test_custom_vjp_rule_outputs_are_checked(name):
    fwd, bwd = BAD_VJPS[name]
    x = np.float32(2.0)
    with pytest.raises(Exception) as expected:
        real_jax.grad(_vjp_with(real_jax, fwd, bwd))(x, x)
    with pytest.raises(type(expected.value)) as actual:
        refjax.grad(_vjp_with(refjax, fwd, bwd))(x, x)
    assert str(actual.value).split(":")[0] == str(expected.value).split(":")[0]


def test_custom_vjp_bwd_none_is_a_zero_cotangent():
    f = _vjp_with(refjax, lambda x, y: (x * y, y), lambda y, g: (g * y, None))
    gx, gy = refjax.grad(f, argnums=(0, 1))(np.float32(2.0), np.float32(3.0))
    assert float(gx) == 3.0 and float(gy) == 0.0
