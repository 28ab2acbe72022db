"""grad on Explicit mesh axes (JAX's "Autodiff and sharding" page, docs/new_docs/301/
sharding-ad.md): a cotangent has its primal's type, so the gradients of the programs users
write (matmul MLPs, softmax cross-entropy, layernorm, scan over layers, vmap of grad, indexing,
control flow) are typed, valued and laid out as JAX's, eagerly and under jit, and jit(grad)
jaxprs print as JAX's. Each program runs on real JAX (8 CPU devices) and on refjax."""
import jax as real_jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import refjax
from refjax.spec.checks import budget
from test_explicit_sharding import layout

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _explicit_mesh(lib, sizes, names):
    return lib.make_mesh(sizes, names, axis_types=(lib.sharding.AxisType.Explicit,) * len(sizes))


def _put(lib, shape, spec):
    """Small values (sums of products stay moderate) laid out as `spec` on the context mesh."""
    x = (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7 - 3) / 10
    return lib.device_put(x, lib.P(*spec))


def gradients(lib, program, jit, sizes=(2, 4), names=("X", "Y")):
    """The gradients of `program(lib)`'s loss w.r.t. all its arguments, each as (type text,
    values, layout), or the class of the error raised."""
    with lib.set_mesh(_explicit_mesh(lib, sizes, names)):
        try:
            loss, args = program(lib)
            grad = lib.grad(loss, argnums=tuple(range(len(args))))
            outs = (lib.jit(grad) if jit else grad)(*args)
        except Exception as e:  # the class JAX raises is part of what is compared
            return type(e)
        return [(str(lib.typeof(o)), np.asarray(o), layout(o)) for o in outs]


def assert_same(ours, theirs):
    """Types and layouts equal, values within float32 rounding of sums of products; or the
    error JAX raises (refjax's class is JAX's or a subclass of it)."""
    if isinstance(theirs, type) or isinstance(ours, type):
        assert isinstance(ours, type) and isinstance(theirs, type), (ours, theirs)
        assert theirs.__name__ in {c.__name__ for c in ours.__mro__}, (ours, theirs)
        return
    assert [(t, lay) for t, _, lay in ours] == [(t, lay) for t, _, lay in theirs]
    for (_, a, _), (_, b, _) in zip(ours, theirs):
        # float32 sums cancel: an absolute error of a few ulps of the largest entry
        np.testing.assert_allclose(a, b, rtol=3e-5, atol=2e-6 * max(1, np.abs(b).max(initial=0)))


def same_gradients_as_jax(program, **mesh):
    for jit in (False, True):
        assert_same(gradients(refjax, program, jit, **mesh),
                    gradients(real_jax, program, jit, **mesh))


# ---------------------------------------------------------------- the page's cells 1 and 2

def _page_loss(lib):
    x = lib.device_put(np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4), lib.P("X", None))
    w = lib.device_put(np.arange(4 * 2.0, dtype=np.float32).reshape(4, 2) / 10, lib.P(None, None))
    return (lambda w, x: lib.numpy.sum((x @ w) ** 2)), (w, x)


def test_page_data_parallel_loss_gradients_are_typed_as_their_primals():
    """Cell 1: dw replicated like w, dx sharded like x (refjax raised ShardingTypeError from
    dot_general's typing rule: the transpose contracted a sharded dimension untyped)."""
    ours = gradients(refjax, _page_loss, jit=False, sizes=(2,), names=("X",))
    assert [t for t, _, _ in ours] == ["float32[4,2]", "float32[8@X,4]"]
    same_gradients_as_jax(_page_loss, sizes=(2,), names=("X",))


def _jaxpr_of_grad(lib, program, sizes=(2,), names=("X",)):
    with lib.set_mesh(_explicit_mesh(lib, sizes, names)):
        loss, args = program(lib)
        return str(lib.jit(lib.grad(loss, argnums=tuple(range(len(args))))).trace(*args).jaxpr)


def _mlp_loss(lib):
    jnp = lib.numpy
    args = (_put(lib, (4, 2), ()), _put(lib, (2, 2), ()), _put(lib, (8, 4), ("X",)))
    return (lambda w1, w2, x: jnp.sum(jnp.tanh(x @ w1) @ w2)), args


def _transposes_loss(lib):
    jnp = lib.numpy
    args = (_put(lib, (4, 2), ()), _put(lib, (8, 4), ("X",)))
    return (lambda w, x: jnp.sum(jnp.sin(x.T) * 2.0) + jnp.mean(x @ w)), args


@pytest.mark.backends("numpy_ref")  # printing: one backend
def test_jit_grad_jaxprs_print_as_jax():
    """Cell 2's jaxpr (the seed cotangent a `reshard 1.0`, reduce_sum's transpose a
    broadcast_in_dim typed 8@X), an MLP (tanh's derivative takes JAX's resharded 1) and
    transposes with a mean: the text JAX prints, every cotangent typed as its primal."""
    text = _jaxpr_of_grad(refjax, _page_loss)
    assert "f:f32[] = reshard 1.0:f32[]\n    g:f32[8@X,2] = broadcast_in_dim f" in text
    for program in (_page_loss, _mlp_loss, _transposes_loss):
        assert _jaxpr_of_grad(refjax, program) == _jaxpr_of_grad(real_jax, program)


# ---------------------------------------------------------------- what users write

def _mlp(lib):
    jnp = lib.numpy
    args = (_put(lib, (4, 2), ()), _put(lib, (2, 4), (None, "Y")), _put(lib, (8, 4), ("X",)))
    return (lambda w1, w2, x: jnp.mean((jnp.tanh(x @ w1) @ w2) ** 2)), args


def _softmax_cross_entropy(lib):
    jnp = lib.numpy

    def loss(w, x, labels):
        logp = lib.nn.log_softmax(x @ w, axis=-1)
        return -jnp.mean(jnp.sum(logp * labels, axis=-1))
    return loss, (_put(lib, (4, 4), ()), _put(lib, (8, 4), ("X",)), _put(lib, (8, 4), ("X",)))


def _layernorm(lib):
    jnp = lib.numpy

    def loss(g, b, x):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return jnp.sum(jnp.sin((x - m) * lib.lax.rsqrt(v + 1e-5) * g + b))
    return loss, (_put(lib, (4,), ()), _put(lib, (4,), ("Y",)), _put(lib, (8, 4), ("X", "Y")))


def _scan_over_layers(lib):
    """The page's cell 14 with replicated weights (its reduced ones are unred2's)."""
    jnp = lib.numpy

    def loss(ws, x):
        h, _ = lib.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
        return jnp.sum(h ** 2)
    return loss, (_put(lib, (3, 4, 4), ()), _put(lib, (8, 4), ("X",)))


def _vmap_of_grad(lib):
    jnp = lib.numpy

    def loss(w, x):
        per_example = lib.vmap(lib.grad(lambda w, xi: jnp.sum(jnp.sin(xi @ w))),
                               in_axes=(None, 0))(w, x)
        return jnp.sum(per_example ** 2)
    return loss, (_put(lib, (4, 2), ()), _put(lib, (8, 4), ("X",)))


def _shapes(lib):
    """reshape, transpose, broadcast, concatenate, pad, slice, cumsum, astype."""
    jnp = lib.numpy

    def loss(b, x):
        y = jnp.concatenate([x, 2 * x], axis=1) + jnp.tile(b, 2)[None, :]
        y = jnp.pad(y, ((0, 0), (1, 1)))[:, 1:5].reshape(8, 2, 2).transpose(1, 0, 2)
        return jnp.sum(jnp.sin(jnp.cumsum(y.astype(jnp.bfloat16).astype(jnp.float32), 1)))
    return loss, (_put(lib, (4,), ()), _put(lib, (8, 4), ("X",)))


def _indexing(lib):
    """dynamic_slice, dynamic_update_slice, gather (an index array), where."""
    jnp, lax = lib.numpy, lib.lax

    def loss(x):
        y = lax.dynamic_update_slice_in_dim(x, lax.dynamic_slice_in_dim(x, 1, 2, 1) * 3, 0, 1)
        z = y[:, jnp.array([0, 2, 3])]
        return jnp.sum(jnp.where(z > 0, z ** 2, jnp.sin(z)))
    return loss, (_put(lib, (8, 4), ("X",)),)


def _updates(lib):
    """scatter-add, scatter, scatter-mul (x.at[...]) and dynamic_update_slice of sharded
    updates."""
    jnp, lax = lib.numpy, lib.lax

    def loss(x, u, v):
        y = x.at[:, 1].add(u).at[:, 2].set(u * 2).at[:, 3].multiply(3.0)
        return jnp.sum(jnp.sin(lax.dynamic_update_slice(y, v, (0, 0))))
    return loss, (_put(lib, (8, 4), ("X",)), _put(lib, (8,), ("X",)), _put(lib, (8, 2), ("X",)))


def _control_flow(lib):
    """cond, fori_loop (a while), a windowed sum and a convolution."""
    jnp, lax = lib.numpy, lib.lax

    def loss(k, x):
        y = lax.cond(True, jnp.sin, lambda v: v * 2, x)
        y = lax.fori_loop(0, 2, lambda i, v: jnp.sin(v) * 1.5, y)
        y = lax.reduce_window(y, 0.0, lax.add, (1, 1, 2), (1, 1, 1), "SAME")
        c = lax.conv_general_dilated(y, k, (1,), "SAME", dimension_numbers=("NCH", "OIH", "NCH"))
        return jnp.sum(c ** 2)
    return loss, (_put(lib, (3, 2, 3), ()), _put(lib, (8, 2, 8), ("X",)))


def _shard_map_layer(lib):
    """A layer in shard_map (the page's last section without reduced weights)."""
    jnp = lib.numpy

    @lib.shard_map(in_specs=(lib.P("X", None), lib.P()), out_specs=lib.P("X", None))
    def layer(x, w):
        return jnp.tanh(x @ w)
    return (lambda w, x: jnp.sum(layer(x, w) ** 2)), (_put(lib, (4, 2), ()),
                                                      _put(lib, (8, 4), ("X",)))


def _remat_and_inner_jit(lib):
    jnp = lib.numpy

    def loss(w, x):
        h = lib.checkpoint(lambda x: jnp.sin(x @ w))(x)
        return jnp.sum(lib.jit(lambda h, x: h * x[:, :2])(h, x) ** 2)
    return loss, (_put(lib, (4, 2), ()), _put(lib, (8, 4), ("X",)))


def _ambiguous_contraction(lib):
    """Contracting dimensions sharded on both sides: JAX's ShardingTypeError, forward."""
    jnp = lib.numpy
    return (lambda a, b: jnp.sum(a @ b)), (_put(lib, (4, 8), (None, "X")),
                                          _put(lib, (8, 4), ("X", None)))


PROGRAMS = {f.__name__.lstrip("_"): f for f in (
    _mlp, _softmax_cross_entropy, _layernorm, _scan_over_layers, _vmap_of_grad, _shapes,
    _indexing, _updates, _control_flow, _shard_map_layer, _remat_and_inner_jit, _ambiguous_contraction)}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_of_user_programs_are_typed_as_jax(name, refjax_backend):
    """grad and jit(grad): each gradient's jax.typeof, values and layout are JAX's. (The xla
    backend's eager grad runs each primitive as a JAX program: the default run checks its
    jit(grad), the thorough profile both.)"""
    thorough = settings.default.max_examples >= 300
    jits = (True,) if refjax_backend == "xla" and not thorough else (False, True)
    for jit in jits:
        assert_same(gradients(refjax, PROGRAMS[name], jit), gradients(real_jax, PROGRAMS[name], jit))


# ---------------------------------------------------------------- drawn programs

_OPS = ("matmul", "add", "mul", "sin", "sum", "mean", "reshape", "transpose", "broadcast")


def _apply(lib, op, h, w, x, b):
    jnp = lib.numpy
    return {"matmul": lambda: h @ w, "add": lambda: h + x, "mul": lambda: h * x,
            "sin": lambda: jnp.sin(h), "sum": lambda: h - jnp.sum(h, 0),
            "mean": lambda: h * jnp.mean(h, 1, keepdims=True),
            "reshape": lambda: h.reshape(2, 8).reshape(4, 4), "transpose": lambda: h.T,
            "broadcast": lambda: h * b[None, :]}[op]()


def _drawn_program(ops, specs, final):
    def program(lib):
        jnp = lib.numpy

        def loss(w, x, b):
            h = x
            for op in ops:
                h = _apply(lib, op, h, w, x, b)
            return (jnp.sum if final == "sum" else jnp.mean)(h ** 2)
        return loss, tuple(_put(lib, shape, spec)
                           for shape, spec in zip(((4, 4), (4, 4), (4,)), specs))
    return program


def _spec(draw, names, ndim):
    """Per-dimension entries, each mesh axis used at most once."""
    entries = []
    for _ in range(ndim):
        entries.append(draw(st.sampled_from([None] + [a for a in names if a not in entries])))
    return tuple(entries)


@st.composite
def _programs(draw):
    names = draw(st.sampled_from([("X",), ("X", "Y")]))
    specs = [_spec(draw, names, ndim) for ndim in (2, 2, 1)]
    ops = draw(st.lists(st.sampled_from(_OPS), min_size=1, max_size=4))
    return names, _drawn_program(ops, specs, draw(st.sampled_from(["sum", "mean"]))), \
        (ops, specs)


@budget(0.34)
@given(_programs())
def test_drawn_programs_have_jax_gradient_types(drawn):
    """Small programs on a (2,) or (2, 2) Explicit mesh, operands' specs and operations
    drawn: jit(grad)'s gradients typed, valued and laid out as JAX's (or JAX's error)."""
    names, program, _ = drawn
    mesh = dict(sizes=(2,) * len(names), names=names)
    assert_same(gradients(refjax, program, True, **mesh),
                gradients(real_jax, program, True, **mesh))


def _sort_loss(lib):
    return lambda x: lib.numpy.sum(lib.numpy.sort(x, axis=1)[:, :2] ** 2)


def test_sort_gradient_where_jax_refuses():
    """JAX 0.10.2 raises ShardingTypeError for grad through sort of an array sharded on an
    Explicit axis (its JVP sorts an untyped iota beside the typed operand: "Arguments to
    sort must have equal shardings"); refjax differentiates it, the gradient typed as x and
    valued as JAX's gradient of the same values unsharded."""
    program = lambda lib: (_sort_loss(lib), (_put(lib, (8, 4), ("X",)),))  # noqa: E731
    assert gradients(real_jax, program, jit=False).__name__ == "ShardingTypeError"
    (ours,) = gradients(refjax, program, jit=False)
    x = (np.arange(32, dtype=np.float32).reshape(8, 4) % 7 - 3) / 10
    assert ours[0] == "float32[8@X,4]"
    np.testing.assert_allclose(ours[1], real_jax.grad(_sort_loss(real_jax))(x), rtol=1e-6)


def _outside_set_mesh(lib, jit):
    """grad of a tanh MLP on arrays put on an Explicit mesh, with no mesh context."""
    jnp, S = lib.numpy, lib.sharding.NamedSharding
    mesh = _explicit_mesh(lib, (2,), ("X",))
    x = lib.device_put(np.arange(32, dtype=np.float32).reshape(8, 4) / 10, S(mesh, lib.P("X")))
    w = lib.device_put(np.ones((4, 2), np.float32), S(mesh, lib.P()))
    grad = lib.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2), argnums=(0, 1))
    try:
        outs = (lib.jit(grad) if jit else grad)(w, x)
    except Exception as e:
        return type(e)
    return [(str(lib.typeof(o)), np.asarray(o), layout(o)) for o in outs]


def test_grad_outside_a_mesh_context():
    """Without jax.set_mesh, JAX's eager grad stops at its seed cotangent (ValueError: a
    scalar typed on the Explicit mesh has one device, "Please enter your `jit` into a mesh
    context"), while its jit(grad) runs; refjax runs both, each as JAX's jit(grad)."""
    assert _outside_set_mesh(real_jax, jit=False) is ValueError
    theirs = _outside_set_mesh(real_jax, jit=True)
    assert_same(_outside_set_mesh(refjax, jit=True), theirs)
    assert_same(_outside_set_mesh(refjax, jit=False), theirs)
