"""jax_debug_key_reuse (core/key_reuse.py) against real JAX: each program below runs under both
libraries' checker, which must accept the same programs and reject the others with
KeyReuseError and the same message (first line; JAX's later lines print its own jaxprs)."""
import numpy as np
import pytest

import jax

import refjax
from refjax.core import key_reuse


def _reuse(jx):
    k = jx.random.key(0)
    jx.random.normal(k)
    jx.random.uniform(k)


def _split_twice(jx):
    k = jx.random.key(0)
    jx.random.split(k)
    jx.random.split(k)


def _split_then_sample(jx):
    k = jx.random.key(0)
    jx.random.split(k)
    jx.random.bits(k)


def _fold_in_and_clone(jx):
    k = jx.random.key(0)
    jx.random.fold_in(k, 1)
    jx.random.fold_in(k, 2)
    jx.random.normal(jx.random.clone(k))
    jx.random.normal(k)
    jx.random.fold_in(k, 3)
    jx.random.clone(k)
    jx.random.key_data(k)


def _raw_keys(jx):
    k = jx.random.PRNGKey(0)
    jx.random.normal(k)
    jx.random.uniform(k)


def _jit_internal_reuse(jx):
    jx.jit(lambda k: jx.random.normal(k) + jx.random.uniform(k))(jx.random.key(0))


def _jit_split_twice(jx):
    jx.jit(lambda k: (jx.random.split(k), jx.random.split(k)))(jx.random.key(0))


def _jit_then_eager(jx):
    k = jx.random.key(0)
    jx.jit(jx.random.normal)(k)
    jx.random.normal(k)


def _jit_returns_keys(jx):
    k = jx.random.key(0)
    same, fresh = jx.jit(lambda k: (k, jx.random.split(k)[0]))(k)
    jx.random.normal(fresh)
    jx.random.normal(same)  # passed on from k, consumed by split


def _jit_passes_key_on(jx):
    k = jx.random.key(0)
    jx.random.normal(jx.jit(lambda k: k)(k))
    jx.random.normal(k)


def _indexing(jx):
    keys = jx.random.split(jx.random.key(0), 3)
    jx.random.normal(keys[0])
    jx.random.normal(keys[1])
    jx.random.normal(keys[0])


def _unpacking(jx):
    k1, k2, k3 = jx.random.split(jx.random.key(0), 3)
    jx.random.normal(k1)
    jx.random.normal(k2)
    jx.jit(lambda k: [jx.random.normal(s) for s in jx.random.split(k, 3)])(k3)


def _failed_jit_leaves_key(jx):
    k = jx.random.key(0)
    try:
        jx.jit(lambda k: (jx.random.split(k), jx.random.split(k)))(k)
    except jax.errors.KeyReuseError if jx is jax else refjax.errors.KeyReuseError:
        pass
    jx.random.normal(k)


def _pytree(jx):
    k = jx.random.key(0)
    jx.jit(lambda d: jx.random.normal(d["a"][0]))({"a": [k]})
    jx.random.normal(k)


def _vmap_twice(jx):
    keys = jx.random.split(jx.random.key(0), 3)
    jx.vmap(jx.random.normal)(keys)
    jx.vmap(jx.random.normal)(keys)


def _grad(jx):
    k = jx.random.key(0)
    jx.grad(lambda x: x * jx.random.normal(k) * jx.random.normal(k))(1.0)


def _fori_closure(jx):
    k = jx.random.key(0)
    jx.lax.fori_loop(0, 3, lambda i, x: x + jx.random.normal(k), 0.0)


def _fori_carry_reused(jx):
    jx.lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] + jx.random.normal(c[0])),
                     (jx.random.key(0), 0.0))


def _fori_carry_split(jx):
    def body(i, c):
        k, sub = jx.random.split(c[0])
        return k, c[1] + jx.random.normal(sub)
    jx.jit(lambda k: jx.lax.fori_loop(0, 3, body, (k, 0.0)))(jx.random.key(0))


def _scan_xs_keys(jx):
    keys = jx.random.split(jx.random.key(0), 3)
    jx.lax.scan(lambda c, k: (c + jx.random.normal(k), None), 0.0, keys)


def _scan_closure(jx):
    k = jx.random.key(0)
    jx.jit(lambda: jx.lax.scan(lambda c, x: (c + jx.random.normal(k), None), 0.0, None,
                               length=2))()


def _while_closure(jx):
    k = jx.random.key(0)
    jx.lax.while_loop(lambda c: c < 1.0, lambda c: c + jx.random.uniform(k), 0.0)


def _cond_each_branch(jx):
    k = jx.random.key(0)
    jx.lax.cond(True, jx.random.normal, jx.random.uniform, k)
    jx.random.normal(k)


def _cond_then_reuse(jx):
    def f(k, p):
        return jx.lax.cond(p, jx.random.normal, lambda k: 0.0, k) + jx.random.normal(k)
    jx.jit(f)(jx.random.key(0), True)


def _checkpoint_makes_keys(jx):
    new = jx.jit(jx.checkpoint(lambda k: jx.random.split(k)[0]))(jx.random.key(0))
    jx.random.normal(new)


def _constraint_passes_key_on(jx):
    device = jx.sharding.SingleDeviceSharding(jx.devices()[0])
    jx.jit(lambda k: jx.random.normal(jx.lax.with_sharding_constraint(k, device))
           + jx.random.normal(k))(jx.random.key(0))


def _closure_in_jit(jx):
    k = jx.random.key(0)
    f = jx.jit(lambda x: x + jx.random.normal(k))
    f(1.0)
    f(2.0)  # k is a const of f's jaxpr, after its arguments


def _reshaped_keys(jx):
    keys = jx.random.split(jx.random.key(0), 4).reshape(2, 2)
    jx.random.normal(keys[0, 0])
    jx.random.normal(keys[1, 1])


def _traced_index(jx):
    keys = jx.random.split(jx.random.key(0), 4)
    jx.jit(lambda ks, i: jx.random.normal(ks[i]) + jx.random.normal(ks[i]))(keys, 1)


def _comparing_keys(jx):
    k = jx.random.key(0)
    _ = k == k
    jx.random.normal(k)
    jx.random.normal(jx.random.fold_in(k, 2))


def _vmap_split(jx):
    keys = jx.random.split(jx.random.key(0), 3)
    jx.vmap(lambda k: jx.random.normal(jx.random.split(k)[0]))(keys)


def _jit_vmap_reuse(jx):
    draw = jx.vmap(lambda k: jx.random.normal(k) + jx.random.normal(k))
    jx.jit(draw)(jx.random.split(jx.random.key(0), 3))


def _switch_then_reuse(jx):
    branches = [jx.random.normal, jx.random.uniform, lambda k: 0.0]
    jx.jit(lambda i, k: jx.lax.switch(i, branches, k) + jx.random.normal(k))(1, jx.random.key(0))


def _while_carry_split(jx):
    def body(c):
        k, sub = jx.random.split(c[0])
        return k, c[1] + jx.random.uniform(sub)
    jx.lax.while_loop(lambda c: c[1] < 2.0, body, (jx.random.key(0), 0.0))


_EAGER = "Previously-consumed key passed to {} at index 0"
_JITTED = "Previously-consumed key passed to jit-compiled function at index 0"
_SCAN = ("scan body function leads to key reuse when repeatedly executed, because key constants "
         "are repeatedly consumed:")

# Each program's outcome under JAX 0.10.2's checker (test_expected_is_jax reruns JAX on them:
# its compilations would take most of this file's time in the default run).
EXPECTED = {
    _jit_split_twice: "In random_split, argument 0 is already consumed.", _reuse: _JITTED,
    _split_twice: _EAGER.format("random_split"),
    _split_then_sample: _EAGER.format("random_bits"), _fold_in_and_clone: None, _raw_keys: None,
    _jit_internal_reuse: "In jit, argument 0 is already consumed.",
    _jit_then_eager: _JITTED, _jit_returns_keys: _JITTED, _jit_passes_key_on: None,
    _indexing: _EAGER.format("slice"), _unpacking: None, _failed_jit_leaves_key: None,
    _pytree: _JITTED, _vmap_twice: _JITTED, _grad: _JITTED, _fori_closure: _SCAN,
    _fori_carry_reused: _SCAN, _fori_carry_split: None, _scan_xs_keys: None, _scan_closure: _SCAN,
    _while_closure: "while_loop body function leads to key reuse when repeatedly executed:   "
                    "body_signature=KeyReuseSignature(Sink(0),)",
    _cond_each_branch: _JITTED, _cond_then_reuse: "In jit, argument 0 is already consumed.",
    _checkpoint_makes_keys: None, _reshaped_keys: None, _comparing_keys: None, _vmap_split: None,
    _while_carry_split: None, _traced_index: "In jit, argument 0 is already consumed.",
    _closure_in_jit: "Previously-consumed key passed to jit-compiled function at index 1",
    _jit_vmap_reuse: "In jit, argument 0 is already consumed.",
    _switch_then_reuse: "In jit, argument 0 is already consumed.",
    _constraint_passes_key_on: "In jit, argument 0 is already consumed.",
}
PROGRAMS = list(EXPECTED)


def _outcome(jx, program):
    """None when the program runs; else the first line of its KeyReuseError (any other error
    fails the test)."""
    try:
        with jx.debug_key_reuse(True):
            program(jx)
    except (jax.errors.KeyReuseError, refjax.errors.KeyReuseError) as e:
        return str(e).splitlines()[0]
    return None


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_expected_is_jax(program):
    assert _outcome(jax, program) == EXPECTED[program]


def test_programs_as_jax():
    """Every program: JAX's outcome, on the oracle."""
    for program in PROGRAMS:
        assert _outcome(refjax, program) == EXPECTED[program], program.__name__


@pytest.mark.parametrize("program", [_fori_carry_split, _reuse, _jit_internal_reuse, _indexing,
                                     _cond_then_reuse], ids=lambda p: p.__name__)
def test_programs_on_xla(program):
    with refjax.backend("xla"):
        assert _outcome(refjax, program) == EXPECTED[program]


def test_off_by_default_and_global_update():
    """Unchecked by default; config.update turns the check on for a jit traced before (its
    cached trace and fast path do not skip it), and off again."""
    f = refjax.jit(lambda k: refjax.random.normal(k) + refjax.random.uniform(k))
    k = refjax.random.key(0)
    f(k), f(k)
    refjax.config.update("jax_debug_key_reuse", True)
    try:
        with pytest.raises(refjax.errors.KeyReuseError, match="In jit, argument 0 is already"):
            f(k)
    finally:
        refjax.config.update("jax_debug_key_reuse", False)
    f(k)
    assert refjax.debug_key_reuse.value is False


def _draw():
    rk = refjax.random
    return np.asarray(rk.randint(rk.split(rk.fold_in(rk.key(3), 5))[1], (4,), 0, 99))


def test_values_unchanged_and_jaxpr_marks():
    """The marks are identities: samples are those drawn without the check (which
    tests/test_random.py compares with JAX's); a staged program shows where keys are made and
    read."""
    with refjax.debug_key_reuse(True):
        checked = _draw()
        text = str(refjax.make_jaxpr(lambda k: refjax.random.split(k))(refjax.random.key(0)))
    np.testing.assert_array_equal(checked, _draw())
    assert "random_unwrap[consumed_by=random_split]" in text and "random_wrap[impl=fry]" in text


def test_signatures_by_hand():
    """The walk on hand-computed cases: a slice consumes its part and is a fresh key; an update
    consumes the update; reading (eq) consumes nothing."""
    rk = refjax.random
    with refjax.debug_key_reuse(True):
        keys = rk.split(rk.key(0), 4)
        jaxpr = refjax.make_jaxpr(lambda ks: (ks[1:3], ks == ks))(keys).jaxpr
    sig = key_reuse.jaxpr_signature(jaxpr, [True])
    (sink,) = sig.sinks
    np.testing.assert_array_equal(sink.mask[:, 0], [False, True, True, False])
    assert [s.idx for s in sig.sources] == [0] and sig.keys_out == (0,)
    assert repr(key_reuse.Signature(key_reuse.Sink(0), key_reuse.Forward(0, 1))) == \
        "KeyReuseSignature(Sink(0), Forward(0, 1))"



def _samplers(jx):
    """Every sampler of jax.random drawing a few values from a key (both libraries)."""
    r, jnp = jx.random, jx.numpy
    return {
        "bits": lambda k: r.bits(k, (3,)), "uniform": lambda k: r.uniform(k, (3,)),
        "normal": lambda k: r.normal(k, (3,)), "randint": lambda k: r.randint(k, (3,), 0, 5),
        "bernoulli": lambda k: r.bernoulli(k, 0.3, (3,)),
        "categorical": lambda k: r.categorical(k, jnp.zeros(4)),
        "choice": lambda k: r.choice(k, 5, (3,), replace=False),
        "permutation": lambda k: r.permutation(k, jnp.arange(5)),
        "truncated_normal": lambda k: r.truncated_normal(k, -1.0, 1.0, (3,)),
        "gumbel": lambda k: r.gumbel(k, (3,)), "exponential": lambda k: r.exponential(k, (3,)),
        "logistic": lambda k: r.logistic(k, (3,)), "laplace": lambda k: r.laplace(k, (3,)),
        "rademacher": lambda k: r.rademacher(k, (3,)), "gamma": lambda k: r.gamma(k, 2.0, (3,)),
        "loggamma": lambda k: r.loggamma(k, 2.0, (3,)), "beta": lambda k: r.beta(k, 2.0, 3.0),
        "ball": lambda k: r.ball(k, 3), "cauchy": lambda k: r.cauchy(k, (3,)),
        "chisquare": lambda k: r.chisquare(k, 3.0), "dirichlet": lambda k: r.dirichlet(k, jnp.ones(3)),
        "double_sided_maxwell": lambda k: r.double_sided_maxwell(k, 0.0, 1.0, (3,)),
        "f": lambda k: r.f(k, 2.0, 3.0), "generalized_normal": lambda k: r.generalized_normal(k, 2.0),
        "geometric": lambda k: r.geometric(k, 0.3), "lognormal": lambda k: r.lognormal(k),
        "maxwell": lambda k: r.maxwell(k), "pareto": lambda k: r.pareto(k, 2.0),
        "rayleigh": lambda k: r.rayleigh(k, 1.0), "t": lambda k: r.t(k, 3.0),
        "triangular": lambda k: r.triangular(k, 0.0, 0.5, 1.0), "wald": lambda k: r.wald(k, 1.0),
        "weibull_min": lambda k: r.weibull_min(k, 1.0, 2.0), "poisson": lambda k: r.poisson(k, 3.0),
        "binomial": lambda k: r.binomial(k, 5.0, 0.3),
        "multinomial": lambda k: r.multinomial(k, 5.0, jnp.ones(3) / 3),
        "multivariate_normal": lambda k: r.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)),
        "orthogonal": lambda k: r.orthogonal(k, 3),
    }


SAMPLERS = list(_samplers(jax))


@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_use_their_key_once(name):
    """Each sampler accepts a fresh key (those built from other samplers use it once, as JAX's
    jit sees it) and refuses it the second time with JAX's message (JAX's samplers are jitted
    functions, but for bits and multinomial, which bind random_bits and random_split first)."""
    def program(jx):
        k, draw = jx.random.key(1), _samplers(jx)[name]
        draw(k)
        draw(k)
    assert _outcome(refjax, program) == _outcome(jax, program) is not None


def test_eager_error_says_where_the_key_was_consumed():
    """As JAX's, an eager reuse error is caused by one pointing at the first use (JAX puts
    that place in the cause's traceback; refjax, which keeps no frames, in its message)."""
    def cause(jx):
        with jx.debug_key_reuse(True), pytest.raises(Exception) as info:
            _reuse(jx)
        return info.value.__cause__
    ours, theirs = cause(refjax), cause(jax)
    assert type(ours).__name__ == type(theirs).__name__ == "KeyReuseError"
    first, where, link = str(ours).splitlines()
    assert [first, link] == str(theirs).splitlines()
    assert where.startswith(f"(first used at {__file__}:{_reuse.__code__.co_firstlineno + 2}:")


def test_messages_in_full():
    """Beyond the first line, JAX's message of a reuse ends with the link to its page."""
    assert _full(refjax, _reuse) == _full(jax, _reuse)
    assert _full(refjax, _jit_internal_reuse) == _full(jax, _jit_internal_reuse)


def _full(jx, program):
    with jx.debug_key_reuse(True), pytest.raises(Exception) as info:
        program(jx)
    return type(info.value).__name__, str(info.value)


def test_checkpoint_recomputation_is_no_reuse():
    """Better than JAX: the backward pass of jax.checkpoint draws again from the key its
    forward pass used, the same values, which JAX's eager check reports as a reuse (its own
    rule for remat says the differentiated copy consumes nothing new); refjax accepts it."""
    def program(jx):
        k = jx.random.key(0)
        return jx.grad(jx.checkpoint(lambda x: x * jx.random.normal(k)))(1.0)
    assert _outcome(jax, program) == _JITTED
    assert _outcome(refjax, program) is None
    with refjax.debug_key_reuse(True):
        grad = program(refjax)
    np.testing.assert_allclose(grad, program(refjax))
