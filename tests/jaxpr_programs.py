"""Programs people print with make_jaxpr, written once against a JAX-like module (real JAX or
refjax): `programs(jax)` gives {name: (function, args)}. tests/test_jaxpr_printing.py prints
each with both and compares the text."""
from functools import partial

import numpy as np


def programs(jax):
    """{name: (f, args)}: elementwise, autodiff, jit, vmap, control flow, reductions, products,
    shapes, indexing, gather/scatter, sort, casts and iota programs."""
    cases = {}
    for group in (_elementwise, _autodiff, _jit, _vmap, _control_flow, _reductions, _products,
                  _shapes, _indexing, _misc, _custom):
        cases.update(group(jax, jax.numpy, jax.lax))
    return cases


def _elementwise(jax, jnp, lax):
    x3 = jnp.arange(3.0)
    return {
        "sin_mul_add": (lambda x, y: jnp.sin(x) * y + 2.0, (1.0, 2.0)),
        "int_chain": (lambda x: (x * 2 + 1) // 3 % 2, (jnp.arange(4),)),
        "unary_funcs": (lambda x: jnp.exp(x) + jnp.log(x) + jnp.sqrt(x) + jnp.tanh(x) + 1 / jnp.sqrt(x),
                        (x3 + 1,)),
        "powers": (lambda x: x ** 2 + x ** 3 + jnp.abs(x) ** 0.5, (x3,)),
        "compare_where": (lambda x, y: jnp.where(x > y, x, y - 1) + (x == 1.0), (x3, 2.0 - x3)),
        "clip_maximum": (lambda x: jnp.clip(x, 0.5, 1.5) + jnp.maximum(x, 0.0), (x3,)),
        "logical": (lambda a, b: (a & b) | ~a, (jnp.array([True, False]), jnp.array([True, True]))),
        "float16_mix": (lambda x, y: x * y + 1, (jnp.ones(2, jnp.float16), jnp.ones(2, jnp.bfloat16))),
        "complex": (lambda z: jnp.real(z * jnp.conj(z)) + jnp.abs(z), (jnp.ones(2, jnp.complex64),)),
        "literals": (lambda x: x + 1 + 2.5 + True, (jnp.ones(2, jnp.int32),)),
        "bool_literal": (lambda x: jnp.logical_and(x, True), (jnp.array([True, False]),)),
    }


def _autodiff(jax, jnp, lax):
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w, x = jnp.ones((3, 2)), jnp.ones((4, 3))
    return {
        "grad": (jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), (jnp.ones(3),)),
        "grad_argnums": (jax.grad(loss, argnums=(0, 1)), (w, x)),
        "value_and_grad": (jax.value_and_grad(loss), (w, x)),
        "jvp": (lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), (1.0, 1.0)),
        "linearize": (lambda x: jax.linearize(jnp.sin, x)[1](2.0), (1.0,)),
        "vjp": (lambda x, g: jax.vjp(lambda y: y * jnp.cos(y), x)[1](g), (1.0, 1.0)),
        "grad_of_grad": (jax.grad(jax.grad(lambda x: x ** 3 * jnp.sin(x))), (1.0,)),
        "stop_gradient": (jax.grad(lambda x: x * lax.stop_gradient(x)), (1.0,)),
    }


def _jit(jax, jnp, lax):
    def f(x, y):
        return jnp.sin(x) * y + 2.0

    inner = jax.jit(lambda x: x * 2.0)

    def long(x):
        for _ in range(6):
            x = jnp.sin(x) * 2.0
        return x

    return {
        "jit": (jax.jit(f), (1.0, 2.0)),
        "nested_jit": (jax.jit(lambda x: inner(x) + inner(x + 1.0)), (1.0,)),
        "jit_in_function": (lambda x: inner(x) * 3.0, (jnp.ones(3),)),
        "jit_long_body": (lambda x: jax.jit(long)(x) + jax.jit(long)(x), (1.0,)),
        "jit_static": (lambda x: jax.jit(lambda x, n: x * n, static_argnums=1)(x, 3), (jnp.ones(2),)),
        "jit_of_grad": (jax.jit(jax.grad(lambda x: jnp.sin(x) * x)), (1.0,)),
        "jit_unused_output": (lambda x: jax.jit(lambda y: (y + 1.0, y * 2.0))(x)[0], (1.0,)),
        "multiple_outputs": (lambda x: (x, x + 1.0, (x * 2.0, x - 1.0)), (1.0,)),
        "unused_values": (lambda x: (jnp.sin(x), jnp.cos(x))[0] + 0 * jnp.exp(x).sum(), (jnp.ones(2),)),
        "constvars": (lambda x: x + np.arange(3.0, dtype=np.float32), (jnp.ones(3),)),
        "no_inputs": (lambda: jnp.zeros(2) + 1.0, ()),
    }


def _vmap(jax, jnp, lax):
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w))

    return {
        "vmap": (jax.vmap(lambda x, y: jnp.sin(x) * y), (jnp.ones(3), jnp.ones(3))),
        "vmap_in_axes": (jax.vmap(lambda x, y: x @ y, in_axes=(1, None)), (jnp.ones((2, 3)), jnp.ones(2))),
        "vmap_out_axes": (jax.vmap(lambda x: jnp.sin(x) * 2.0, out_axes=1), (jnp.ones((2, 3)),)),
        "per_example_grads": (jax.vmap(jax.grad(loss), in_axes=(None, 0)), (jnp.ones(3), jnp.ones((4, 3)))),
        "vmap_of_jit": (jax.vmap(jax.jit(lambda x: x.sum())), (jnp.ones((2, 3)),)),
    }


def _control_flow(jax, jnp, lax):
    def body(i, c):
        return c * 2.0 + i

    return {
        "cond": (lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (1.0,)),
        "cond_operands": (lambda p, x, y: lax.cond(p, lambda a, b: a + b, lambda a, b: a - b, x, y),
                          (True, 1.0, 2.0)),
        "switch": (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda y: y * 2.0], x), (1, 1.0)),
        "scan": (lambda x: lax.scan(lambda c, a: (c + a, c * a), 0.0, x), (jnp.ones(3),)),
        "scan_length": (lambda c: lax.scan(lambda c, _: (c * 2.0, c), c, None, length=4), (1.0,)),
        "scan_reverse": (lambda x: lax.scan(lambda c, a: (c + a, c), 0.0, x, reverse=True), (jnp.ones(3),)),
        "while": (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 2, x), (1.0,)),
        "fori_loop_static": (lambda x: lax.fori_loop(0, 5, body, x), (1.0,)),
        "fori_loop_traced": (lambda n, x: lax.fori_loop(0, n, body, x), (5, 1.0)),
        "grad_scan": (jax.grad(lambda x: lax.scan(lambda c, a: (c * a, None), jnp.float32(1), x)[0]),
                      (jnp.ones(3),)),
    }


def _reductions(jax, jnp, lax):
    x = jnp.ones((2, 3))
    return {
        "sum_max_min": (lambda x: (x.sum() + x.max(axis=0), x.min(axis=1, keepdims=True)), (x,)),
        "mean": (lambda x: (x.mean(0), x.mean(), jnp.mean(x, axis=1, keepdims=True)), (x,)),
        "sum_initial_where": (lambda x: (x.max(initial=0.0), jnp.sum(x, where=x > 0), x[0, 0].sum()),
                              (x,)),
        "argmax": (lambda x: jnp.argmax(x, axis=1), (x,)),
        "prod_any_all": (lambda x: (x.prod(), (x > 0).any(), (x > 0).all(1)), (x,)),
        "cumsum": (lambda x: jnp.cumsum(x, axis=1), (x,)),
        "logsumexp_like": (lambda x: jnp.log(jnp.sum(jnp.exp(x - x.max()))), (x,)),
    }


def _products(jax, jnp, lax):
    return {
        "dot_vectors": (jnp.dot, (jnp.ones(3), jnp.ones(3))),
        "matmul": (lambda a, b: a @ b, (jnp.ones((2, 3)), jnp.ones((3, 4)))),
        "batched_matmul": (jnp.matmul, (jnp.ones((5, 2, 3)), jnp.ones((5, 3, 4)))),
        "matvec": (lambda a, v: a @ v, (jnp.ones((2, 3)), jnp.ones(3))),
        "einsum": (lambda a, b: jnp.einsum("ij,jk->ik", a, b), (jnp.ones((2, 3)), jnp.ones((3, 4)))),
        "einsum_batch": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (jnp.ones((5, 2, 3)), jnp.ones((5, 3, 4)))),
        "dot_general": (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
                        (jnp.ones((2, 3)), jnp.ones((3,)))),
        "int_matmul": (lambda a, b: a @ b, (jnp.ones((2, 2), jnp.int32), jnp.ones((2, 2), jnp.int32))),
    }


def _shapes(jax, jnp, lax):
    x = jnp.ones((2, 3))
    return {
        "reshape_dot_T": (lambda a, b: (a.reshape(2, 3) @ b).T, (jnp.ones(6), jnp.ones((3, 4)))),
        "transpose": (lambda x: jnp.transpose(x) + x.T, (jnp.ones((3, 3)),)),
        "broadcast_to": (lambda x: jnp.broadcast_to(x, (4, 2, 3)) + 1.0, (x,)),
        "expand_squeeze": (lambda x: jnp.squeeze(jnp.expand_dims(x, 0), 0)[:, None], (x,)),
        "concatenate": (lambda x: jnp.concatenate([x, x], axis=0), (x,)),
        "pad_flip": (lambda x: jnp.flip(jnp.pad(x, 1), 0), (x,)),
        "ravel": (lambda x: x.ravel() * 2, (x,)),
    }


def _indexing(jax, jnp, lax):
    a = jnp.arange(5.0)
    m = jnp.ones((3, 4))
    return {
        "index_traced_int": (lambda a, i: a[i] + a[1:3].sum(), (a, 2)),
        "index_static": (lambda a: a[1] + a[-1] + a[::2].sum(), (a,)),
        "index_2d": (lambda m: m[:, 0] + m[1, :3], (m,)),
        "index_array": (lambda a, idx: a[idx], (a, jnp.array([0, 2, 4]))),
        "at_set": (lambda a: a.at[1].set(7.0), (a,)),
        "at_add_traced": (lambda a, i: a.at[i].add(1.0), (a, 1)),
        "at_array_add": (lambda a, idx: a.at[idx].add(1.0), (a, jnp.array([0, 2]))),
        "at_slices": (lambda m: (m.at[1:3].set(0.0), m.at[:, 0].multiply(2.0), m.at[::-2].min(0.5)), (m,)),
        "at_int_pair": (lambda m, i: m.at[i, 1].set(0.0), (m, 2)),
        "index_slices": (lambda m, i: (m[i, 1:3], m[i, ::-1], m[None, 1, None], m[::-2, None, 1:-1]), (m, 1)),
        "at_get": (lambda a, idx: a.at[idx].get(mode="fill", fill_value=0.0), (a, jnp.array([0, 9]))),
        "take": (lambda a, idx: jnp.take(a, idx), (a, jnp.array([0, 2]))),
        "take_along_axis": (lambda m, idx: jnp.take_along_axis(m, idx, axis=1), (m, jnp.zeros((3, 1), jnp.int32))),
        "dynamic_slice": (lambda a, i: lax.dynamic_slice(a, (i,), (2,)), (a, 1)),
        "dynamic_update_slice": (lambda a, b, i: lax.dynamic_update_slice(a, b, (i,)), (a, jnp.ones(2), 1)),
    }


def _misc(jax, jnp, lax):
    x = jnp.array([3.0, 1.0, 2.0])
    return {
        "sort": (jnp.sort, (x,)),
        "argsort": (jnp.argsort, (x,)),
        "sort_2d": (lambda m: jnp.sort(m, axis=0), (jnp.ones((2, 3)),)),
        "astype": (lambda a: a.astype(jnp.int32) + 1, (jnp.ones(3),)),
        "convert_lax": (lambda a: lax.convert_element_type(a, jnp.float16), (jnp.ones(3),)),
        "arange_mul": (lambda n: jnp.arange(4) * n, (2,)),
        "broadcasted_iota": (lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 1), ()),
        "eye": (lambda x: jnp.eye(3) * x, (2.0,)),
        "zeros_like_ones": (lambda x: jnp.zeros_like(x) + jnp.ones(3), (jnp.ones(3),)),
        "full": (lambda v: jnp.full((2, 2), v), (3.0,)),
        "tri_round": (lambda m: (jnp.tril(m), jnp.triu(m, 1), jnp.round(m, 2), jnp.isinf(m)),
                      (jnp.ones((3, 3)),)),
        "flip_pad_cumprod": (lambda x: (jnp.flip(x), jnp.pad(x, ((1, 2), (0, 1)), constant_values=2.0),
                                        jnp.cumprod(x, axis=0)), (jnp.ones((3, 3)),)),
        "divmod_ints": (lambda x, y: (x // y, x % y, jnp.where(x > y, x, 0)), (jnp.arange(4), 3)),
    }


def sharding_programs(jax):
    """{name: (f, args)} of programs on a (2, 4) mesh ("x", "y")."""
    jnp, P = jax.numpy, jax.sharding.PartitionSpec
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    spec = jax.sharding.NamedSharding(mesh, P("x", None))
    psum = partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P())
    return {
        "shard_map_psum": (psum(lambda b: jax.lax.psum(b.sum(), ("x", "y"))), (jnp.ones((4, 8)),)),
        "shard_map_blocks": (jax.shard_map(lambda b: b * b, mesh=mesh, in_specs=P("x"), out_specs=P("x")),
                             (jnp.ones((4, 8)),)),
        "shard_map_partial": (jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x", "y"),
                                            out_specs=P(None, "y")), (jnp.ones((4, 8)),)),
        "with_sharding_constraint": (lambda x: jax.lax.with_sharding_constraint(x * 2.0, spec),
                                     (jnp.ones((4, 8)),)),
    }


def _custom(jax, jnp, lax):
    @jax.custom_jvp
    def soft(x):
        return jnp.log1p(jnp.exp(x))

    @soft.defjvp
    def soft_jvp(primals, tangents):
        x, = primals
        return soft(x), tangents[0] / (1 + jnp.exp(-x))

    @jax.custom_vjp
    def clip_grad(x):
        return x * 2

    def clip_fwd(x):
        return clip_grad(x), None

    def clip_bwd(_, ct):
        return (jnp.clip(ct, -1.0, 1.0),)

    clip_grad.defvjp(clip_fwd, clip_bwd)
    both = lambda x: soft(x) + clip_grad(x)  # noqa: E731
    return {
        "custom_rules": (both, (1.0,)),
        "custom_rules_grad": (jax.grad(both), (1.0,)),
        "custom_rules_vmap": (jax.vmap(both), (jnp.arange(3.0),)),
    }
