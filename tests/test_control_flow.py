"""cond, switch, while_loop, fori_loop, scan and map against jax.lax, float64 finite
differences and Python loops, on both backends and through jit, grad, vmap and linearize."""
import contextlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst
from jax import lax as jlax

import refjax
import refjax.numpy as rnp
from refjax import lax
from refjax.core.primitives import control_flow as cf

pytestmark = pytest.mark.backends("numpy_ref", "xla")
own_backend = pytest.mark.backends()  # tests that compare or pick the backends themselves

few = settings(max_examples=10, deadline=None, database=None)
fewer = settings(max_examples=6, deadline=None, database=None)
WHILE_GRAD_ERROR = ("Reverse-mode differentiation does not work for lax.while_loop or "
                    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
                    "fori_loop with static start/stop.")


@contextlib.contextmanager
def x64():
    refjax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        refjax.config.update("jax_enable_x64", False)


def close(a, b, tol=2e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def on_backends(fun, *args):
    """fun(*args) eagerly on numpy_ref and jitted (one compilation) on xla, as NumPy values."""
    outs = []
    for name, f in (("numpy_ref", fun), ("xla", refjax.jit(fun))):
        with refjax.backend(name):
            outs.append(jax.tree_util.tree_map(np.asarray, f(*args)))
    return outs


def f32(seed, *shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def directional_fd(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


# ---------------------------------------------------------------- random bodies (np_ is a
# numpy namespace: jax.numpy or refjax.numpy, so one body runs on JAX and on refjax)

OPS = [
    lambda np_, a, b, x: a + 0.5 * b,
    lambda np_, a, b, x: np_.tanh(a) * x,
    lambda np_, a, b, x: np_.maximum(a, b) - x,
    lambda np_, a, b, x: a * b - x,
    lambda np_, a, b, x: np_.where(a > b, a, b * x),
    lambda np_, a, b, x: np_.sin(a + x),
    lambda np_, a, b, x: 0.9 * a + np_.cos(b) * x,
]
op_index = hst.integers(0, len(OPS) - 1)


def scan_body(np_, ops, y_op):
    def body(carry, x):
        floats, count = carry
        k = len(floats)
        new = tuple(OPS[o](np_, floats[i], floats[(i + 1) % k], x) for i, o in enumerate(ops))
        return (new, count + 1), OPS[y_op](np_, floats[0], new[-1], x)
    return body


@hst.composite
def scan_cases(draw):
    k = draw(hst.integers(1, 3))
    return dict(ops=draw(hst.lists(op_index, min_size=k, max_size=k)), y_op=draw(op_index),
                shape=draw(hst.sampled_from([(), (2,), (2, 3)])), length=draw(hst.integers(0, 5)),
                reverse=draw(hst.booleans()), seed=draw(hst.integers(0, 2 ** 16)))


def scan_args(case):
    k, shape, seed = len(case["ops"]), case["shape"], case["seed"]
    init = tuple(f32(seed + i, *shape) for i in range(k))
    return (init, np.int32(0)), f32(seed + 7, case["length"], *shape)


@own_backend
@few
@given(scan_cases())
def test_random_scans_agree_on_both_backends_and_with_jax(case):
    init, xs = scan_args(case)

    def run(np_, lax_):
        body = scan_body(np_, case["ops"], case["y_op"])
        return lambda init, xs: lax_.scan(body, init, xs, reverse=case["reverse"])

    ref, xla = on_backends(run(rnp, lax), init, xs)
    close(ref, xla)
    close(ref, run(jnp, jlax)(init, xs))


@own_backend
@fewer
@given(hst.lists(op_index, min_size=2, max_size=4), hst.integers(-1, 5),
       hst.sampled_from([(), (3,)]), hst.integers(0, 2 ** 16))
def test_random_switches_agree_on_both_backends_and_with_jax(ops, index, shape, seed):
    a, b = f32(seed, *shape), f32(seed + 1, *shape)

    def run(np_, lax_):
        branches = [lambda a, b, o=o: OPS[o](np_, a, b, b) for o in ops]
        return lambda i, a, b: lax_.switch(i, branches, a, b)

    ref, xla = on_backends(run(rnp, lax), np.int32(index), a, b)
    close(ref, xla)
    close(ref, run(jnp, jlax)(np.int32(index), a, b))


@own_backend
@few
@given(hst.integers(0, 6), op_index, hst.sampled_from([(), (2,)]), hst.integers(0, 2 ** 16))
def test_random_while_loops_agree_on_both_backends_and_with_python(n, op, shape, seed):
    x0 = f32(seed, *shape)
    body = lambda c: (c[0] + 1, OPS[op](rnp, c[1], c[1], 0.5 * c[1]))  # noqa: E731
    loop = lambda n, x: lax.while_loop(lambda c: c[0] < n, body, (np.int32(0), x))  # noqa: E731
    ref, xla = on_backends(loop, np.int32(n), x0)
    close(ref, xla)
    x = x0
    for _ in range(n):
        x = np.asarray(OPS[op](np, x, x, np.float32(0.5) * x), np.float32)
    close(ref[1], x)


@own_backend
@fewer
@given(scan_cases())
def test_random_scan_gradients_agree_on_both_backends_and_with_jax(case):
    init, xs = scan_args(case)

    def loss(np_, lax_, grad):
        body = scan_body(np_, case["ops"], case["y_op"])

        def f(init, xs):
            (floats, _), ys = lax_.scan(body, (init, np.int32(0)), xs, reverse=case["reverse"])
            return np_.sum(ys) + sum(np_.sum(c) for c in floats)
        return grad(f, (0, 1))

    ref, xla = on_backends(loss(rnp, lax, refjax.grad), init[0], xs)
    close(ref, xla, 1e-4)
    close(ref, loss(jnp, jlax, jax.grad)(init[0], xs), 1e-4)


# ---------------------------------------------------------------- values against jax.lax

def test_cond_and_switch_match_jax_with_pytrees_and_clamping():
    ops = ({"a": f32(0, 3)}, f32(1, 2, 3))
    assert lax.cond(False, 2.0, lambda x: x, 3.0, lambda x: -x) == -3.0  # the deprecated form
    for fwd in (lambda lx, p: lx.cond(p, lambda d, m: d["a"] * m, lambda d, m: d["a"] - m, *ops),
                lambda lx, p: lx.cond(p, lambda d, m: (m, d), lambda d, m: (m * 2, d), *ops)):
        for pred in (True, 0, -2.5):
            close(fwd(lax, pred), fwd(jlax, pred))
    branches = lambda np_: [lambda x: x, lambda x: np_.sin(x), lambda x: -x]  # noqa: E731
    for i in range(-3, 6):
        close(lax.switch(i, branches(rnp), ops[1]), jlax.switch(i, branches(jnp), ops[1]))
    assert lax.switch(7, [lambda: 5.0]) == 5.0


def test_scan_matches_jax_with_xs_none_reverse_unroll_and_pytrees():
    xs = (f32(0, 4, 2), {"k": np.arange(4, dtype=np.int32)})

    def body(np_):
        return lambda c, x: ((c[0] * x[0] + x[1]["k"], c[1] + 1), {"y": np_.sum(c[0])})

    for reverse in (False, True):
        for unroll in (1, 2, True):
            args = ((np.ones(2, np.float32), 0), xs)
            close(lax.scan(body(rnp), *args, reverse=reverse, unroll=unroll),
                  jlax.scan(body(jnp), *args, reverse=reverse, unroll=unroll))
    close(lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=5),
          jlax.scan(lambda c, _: (c * 2, c), 1.0, None, length=5))
    close(lax.scan(lambda c, x: (c + x, c), 0.0, np.zeros(0, np.float32)),
          jlax.scan(lambda c, x: (c + x, c), 0.0, np.zeros(0, np.float32)))


def test_weak_initial_carries_take_the_body_dtype_like_jax():
    for lax_, np_ in ((lax, rnp), (jlax, jnp)):
        out = lax_.scan(lambda c, x: (c + x, None), 0, np_.ones(3, np_.float32))[0]
        assert out.dtype == np.float32
        assert lax_.fori_loop(0, 3, lambda i, c: c + 0.5, 0.0).dtype == np.float32


def test_map_with_and_without_batch_size_matches_a_python_loop():
    xs = {"a": f32(0, 7, 2), "b": f32(1, 7)}
    f = lambda d: rnp.sum(rnp.sin(d["a"])) * d["b"]  # noqa: E731
    expected = np.stack([np.sum(np.sin(a)) * b for a, b in zip(xs["a"], xs["b"])])
    for batch_size in (None, 0, 1, 3, 7, 10):
        close(lax.map(f, xs, batch_size=batch_size), expected)


def test_fori_loop_is_a_scan_with_static_bounds_and_a_while_otherwise():
    body = lambda i, c: c * 2.0 + i  # noqa: E731
    assert "scan[" in str(refjax.make_jaxpr(lambda x: lax.fori_loop(1, 4, body, x))(1.0))
    dynamic = refjax.make_jaxpr(lambda n, x: lax.fori_loop(0, n, body, x))(3, 1.0)
    assert "while[" in str(dynamic) and "scan[" not in str(dynamic)
    expected = 1.0
    for i in range(1, 4):
        expected = expected * 2.0 + i
    assert lax.fori_loop(1, 4, body, 1.0) == expected
    assert refjax.jit(lambda lo, x: lax.fori_loop(lo, 4, body, x))(1, 1.0) == expected
    assert lax.fori_loop(5, 2, body, 1.0) == 1.0


def test_while_loop_matches_a_python_loop():
    def collatz_steps(n):
        steps = 0
        while n != 1:
            n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
        return steps

    def steps(n):
        body = lambda c: (lax.cond(c[0] % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1, c[0]),
                          c[1] + 1)
        return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    for n in (1, 6, 27):
        assert int(steps(n)) == collatz_steps(n)
        assert int(refjax.jit(steps)(n)) == collatz_steps(n)


# ---------------------------------------------------------------- jaxprs

def test_make_jaxpr_prints_control_flow_nested_like_jax():
    def program(lax_, np_):
        def f(p, x):
            a = lax_.cond(p, lambda x: np_.sin(x), lambda x: np_.cos(x), x)
            b = lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))
            c = lax_.scan(lambda c, y: (c + y * x, c), 0.0, np_.ones(3))
            return a, b, c
        return f

    text = str(refjax.make_jaxpr(program(lax, rnp))(True, 1.0))
    jax_text = str(jax.make_jaxpr(program(jlax, jnp))(True, 1.0))
    assert "cond[\n      branches=(\n        { lambda ; " in text
    assert text.count("{ lambda ;") == 6  # the jaxpr, two branches, cond, body, scan body
    for param in ("body_jaxpr={ lambda ;", "body_nconsts=1", "cond_jaxpr={ lambda ;",
                  "cond_nconsts=0", "jaxpr={ lambda ;", "length=3", "num_carry=1",
                  "num_consts=1", "reverse=False", "unroll=1"):
        assert param in text
        assert param in jax_text  # the same parameters, named and printed as JAX does
    assert jax_text.count("{ lambda ;") == text.count("{ lambda ;")


def test_typechecked_branches_reject_mismatched_types():
    one = refjax.make_jaxpr(lambda x: x)(1.0)
    other = refjax.make_jaxpr(lambda x: x.astype(np.int32))(1.0)
    with pytest.raises(TypeError, match=r"f32\[\].*i32\[\]"):
        cf.cond_p.bind(np.int32(0), 1.0, branches=(one, other))


def test_grad_of_scan_is_a_forward_scan_then_a_reverse_scan():
    text = str(refjax.make_jaxpr(refjax.grad(
        lambda w: lax.scan(lambda c, x: (rnp.sin(c * w + x), None), 0.0, rnp.ones(4))[0]))(0.3))
    assert text.count("scan[") == 2 and "reverse=True" in text


# ---------------------------------------------------------------- errors

def test_branch_output_mismatch_raises_type_error_showing_both_types():
    with pytest.raises(TypeError, match=r"float32\[\].*int32\[\]"):
        lax.cond(True, lambda: 1.0, lambda: 1)
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0)
    with pytest.raises(TypeError, match=r"f32\[2\]|float32\[2\]"):
        lax.switch(0, [lambda: rnp.ones(2), lambda: rnp.ones(3)])


def test_bad_predicates_and_indices_raise_like_jax():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(rnp.ones(2) > 0, lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.5, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [])
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1, 0)


def test_carry_mismatches_raise_type_errors():
    with pytest.raises(TypeError, match="carry input and carry output must have equal types"):
        lax.scan(lambda c, x: (c.astype(np.int32), x), np.float32(0), rnp.ones(2))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.while_loop(lambda c: c[0] < 2, lambda c: c[0] + 1, (0, 1))
    with pytest.raises(TypeError, match="must be a pair"):
        lax.scan(lambda c, x: c, 0.0, rnp.ones(2))
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, None), 0.0, (rnp.ones(2), rnp.ones(3)))
    with pytest.raises(TypeError, match="must have equal types"):
        lax.fori_loop(np.int32(0), np.int16(3), lambda i, c: c, 0.0)


def test_reverse_mode_through_while_loop_raises_jaxs_error():
    loop = lambda y: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * y),  # noqa
                                    (0, 1.0))[1]
    with pytest.raises(ValueError) as e:
        refjax.grad(loop)(2.0)
    assert str(e.value) == WHILE_GRAD_ERROR
    dynamic = refjax.jit(refjax.grad(lambda y, n: lax.fori_loop(0, n, lambda i, c: c * y, 1.0)))
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        dynamic(2.0, 3)


# ---------------------------------------------------------------- derivatives

def rnn_loss(np_, lax_):
    def loss(W, xs):
        def step(h, x):
            h = np_.tanh(W @ h + x)
            return h, np_.sum(h * h)
        h, ys = lax_.scan(step, np_.zeros(W.shape[0], W.dtype), xs)
        return np_.sum(h) + np_.sum(ys)
    return loss


def test_grad_of_an_rnn_scan_matches_float64_finite_differences():
    W, xs = f32(0, 3, 3).astype(np.float64), f32(1, 6, 3).astype(np.float64)
    V = np.random.RandomState(2).randn(3, 3)
    with x64():
        loss = rnn_loss(rnp, lax)
        g = np.asarray(refjax.grad(loss)(W, xs))
        fd = directional_fd(lambda w: float(loss(w, xs)), W, V)
        g_xs = np.asarray(refjax.grad(loss, 1)(W, xs))
        fd_xs = directional_fd(lambda x: float(loss(W, x)), xs, np.ones_like(xs))
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.sum(g * V), fd, rtol=1e-6)
    np.testing.assert_allclose(np.sum(g_xs), fd_xs, rtol=1e-6)


def test_grad_of_cond_matches_float64_finite_differences_on_both_branches():
    a = np.array([0.3, -1.2, 0.7])

    def f(x):
        return lax.cond(x[0] > 0, lambda x: rnp.sum(rnp.sin(x) * a), lambda x: rnp.sum(x ** 3),
                        x)

    with x64():
        for x in (np.array([0.5, 1.0, -2.0]), np.array([-0.5, 1.0, -2.0])):
            g = np.asarray(refjax.grad(f)(x))
            for i in range(3):
                e = np.eye(3)[i]
                np.testing.assert_allclose(g[i], directional_fd(lambda y: float(f(y)), x, e),
                                           rtol=1e-6)


def test_grad_of_switch_with_different_residuals_per_branch_matches_jax():
    def f(lax_, np_):
        branches = [lambda x, y: np_.sum(np_.sin(x) * y), lambda x, y: np_.sum(x * x),
                    lambda x, y: np_.sum(np_.exp(y) * np_.tanh(x * y))]
        return lambda i, x, y: lax_.switch(i, branches, x, y)

    x, y = f32(0, 3), f32(1, 3)
    for i in range(3):
        close(refjax.grad(f(lax, rnp), (1, 2))(i, x, y), jax.grad(f(jlax, jnp), (1, 2))(i, x, y))
    close(refjax.vmap(refjax.grad(f(lax, rnp), 1), (0, None, None))(np.arange(3), x, y),
          np.stack([jax.grad(f(jlax, jnp), 1)(i, x, y) for i in range(3)]))


def test_grad_through_static_fori_loop_and_closed_over_values_matches_jax():
    def f(lax_, np_):
        def loss(y, z):
            c = lax_.fori_loop(0, 4, lambda i, c: c * y + np_.sin(z * i), np_.ones(2) * 0.5)
            return np_.sum(lax_.cond(np_.sum(c) > 0, lambda: c * z, lambda: c - z))
        return loss
    close(refjax.grad(f(lax, rnp), (0, 1))(0.8, 0.3), jax.grad(f(jlax, jnp), (0, 1))(0.8, 0.3))


def test_nested_scan_with_cond_gradients_and_hessian_match_jax():
    xs = f32(3, 4, 3)

    def f(lax_, np_):
        def loss(a, xs):
            def outer(c, x):
                def inner(d, y):
                    d = lax_.cond(y > 0, lambda d: d * a + y, lambda d: d - a * y, d)
                    return d, d * 2
                d, ys = lax_.scan(inner, c, x)
                return d, np_.sum(ys)
            c, ys = lax_.scan(outer, 1.0, xs)
            return c + np_.sum(ys)
        return loss

    close(refjax.grad(f(lax, rnp), (0, 1))(0.7, xs), jax.grad(f(jlax, jnp), (0, 1))(0.7, xs), 1e-4)
    close(refjax.hessian(f(lax, rnp))(0.7, xs), jax.hessian(f(jlax, jnp))(0.7, xs), 1e-3)


def test_jvp_and_linearize_of_cond_while_and_scan_match_jax():
    def f(lax_, np_):
        def g(x):
            a = lax_.cond(x[0] > 0, np_.sin, np_.cos, x)
            b = lax_.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * np_.tanh(x)),
                                (0, x))[1]
            c = lax_.scan(lambda c, y: (c * y, c), 1.0, x)
            return a, b, c
        return g

    x, t = f32(0, 3) + 0.5, f32(1, 3)
    out, tan = refjax.jvp(f(lax, rnp), (x,), (t,))
    close((out, tan), jax.jvp(f(jlax, jnp), (x,), (t,)))
    close(refjax.linearize(f(lax, rnp), x)[1](t), tan)


def test_vjp_of_jit_and_jit_of_grad_agree():
    loss = rnn_loss(rnp, lax)
    W, xs = f32(0, 3, 3), f32(1, 5, 3)
    expected = jax.grad(rnn_loss(jnp, jlax))(W, xs)
    for g in (refjax.grad(refjax.jit(loss)), refjax.jit(refjax.grad(loss))):
        close(g(W, xs), expected, 1e-5)


# ---------------------------------------------------------------- vmap against Python loops

def test_vmap_of_cond_with_a_batched_predicate_is_a_select():
    f = lambda x, y: lax.cond(x > 0, lambda x, y: rnp.log(x) * y, lambda x, y: x * 2.0 + y,  # noqa
                              x, y)
    xs, y = np.array([-1.0, 2.0, 0.5, 0.0], np.float32), np.float32(3.0)
    close(refjax.vmap(f, (0, None))(xs, y), np.stack([f(x, y) for x in xs]))
    grads = refjax.vmap(refjax.grad(f), (0, None))(xs, y)
    close(grads, np.array([2.0, 1.5, 6.0, 2.0]))  # log's gradient on x <= 0 never leaks in
    assert "select_n" in str(refjax.make_jaxpr(refjax.vmap(f, (0, None)))(xs, y))


def test_vmap_of_switch_with_batched_index_and_unbatched_index():
    branches = [lambda x: x, lambda x: rnp.sin(x), lambda x: -x]
    idx, xs = np.array([0, 1, 2, 9, -4], np.int32), f32(0, 5)
    expected = np.stack([lax.switch(i, branches, x) for i, x in zip(idx, xs)])
    close(refjax.vmap(lambda i, x: lax.switch(i, branches, x))(idx, xs), expected)
    close(refjax.vmap(lambda x: lax.switch(1, branches, x))(xs), np.sin(xs))


def test_vmap_of_while_with_a_batched_predicate_runs_until_every_lane_is_done():
    loop = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0),  # noqa
                                       (0, x))
    ns, xs = np.array([0, 3, 1, 5], np.int32), np.array([1.0, 1.5, -2.0, 0.25], np.float32)
    counts, outs = refjax.vmap(loop)(ns, xs)
    close(counts, ns)
    close(outs, np.array([x * 2.0 ** n for n, x in zip(ns, xs)]))
    close(refjax.jit(refjax.vmap(loop))(ns, xs), (counts, outs))
    close(refjax.vmap(loop, (None, 0))(3, xs)[1], xs * 8.0)  # unbatched predicate


def test_vmap_of_scan_matches_a_python_loop_over_the_batch():
    loss = rnn_loss(rnp, lax)
    W, xs = f32(0, 3, 3), f32(1, 4, 5, 3)
    close(refjax.vmap(loss, (None, 0))(W, xs), np.stack([loss(W, x) for x in xs]))
    Ws = f32(2, 4, 3, 3)
    close(refjax.vmap(refjax.grad(loss))(Ws, xs),
          np.stack([refjax.grad(loss)(w, x) for w, x in zip(Ws, xs)]), 1e-5)
    close(refjax.vmap(lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x, reverse=True),
                      in_axes=1)(f32(3, 4, 2)),
          refjax.tree_util.tree_map(lambda *a: np.stack(a), *[
              lax.scan(lambda c, y: (c + y, c * y), 0.0, x, reverse=True)
              for x in f32(3, 4, 2).T]))


# ---------------------------------------------------------------- jit and long loops

def test_jit_of_each_matches_eager():
    x = f32(0, 3)
    funs = [lambda x: lax.cond(x[0] > 0, rnp.sin, rnp.cos, x),
            lambda x: lax.switch(2, [rnp.sin, rnp.cos, rnp.tanh], x),
            lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5),
                                     (0, x)),
            lambda x: lax.fori_loop(0, 3, lambda i, c: c + i * x, x),
            lambda x: lax.scan(lambda c, y: (c * y, c + y), 1.0, x),
            lambda x: lax.map(rnp.exp, x)]
    for f in funs:
        close(refjax.jit(f)(x), f(x))


@own_backend
def test_a_10000_step_scan_traces_once_and_interprets_without_recursion():
    calls = []

    def body(c, x):
        calls.append(x)
        return c * 0.5 + x, c

    xs = np.ones(10000, np.float32)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(__import__("inspect").stack()) + 150)
    try:
        with refjax.backend("numpy_ref"):
            c, ys = lax.scan(body, 0.0, xs)
    finally:
        sys.setrecursionlimit(limit)
    assert len(calls) == 1
    assert np.asarray(ys).shape == (10000,)
    np.testing.assert_allclose(float(c), 2.0, rtol=1e-6)


def test_disable_jit_runs_python_control_flow():
    with refjax.config.override(jax_disable_jit=True):
        seen = []
        out = lax.cond(True, lambda x: seen.append(x) or x + 1, lambda x: x, 1.0)
        assert seen == [1.0] and out == 2.0
        close(lax.scan(lambda c, x: (c + x, c), 0.0, rnp.ones(3)),
              (3.0, np.array([0.0, 1.0, 2.0])))
