"""Top-level config switches (log_compiles, explain_cache_misses, no_tracing, no_execution,
enable_checks, thread_guard) and the lax helpers that JAX exports, side by side with JAX."""
import logging
import re

import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp

import jax as JAX  # noqa: E402

JAX_LOGGERS = ("jax._src.dispatch", "jax._src.interpreters.pxla",
               "jax._src.interpreters.partial_eval")


def _records(caplog, lib, scenario):
    """The WARNING records of JAX's loggers while `scenario(lib)` runs, times and ids masked;
    JAX's own messages about its MLIR and XLA stages (refjax has neither) left out."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        scenario(lib)
    out = []
    for r in caplog.records:
        if r.name not in JAX_LOGGERS or "MLIR" in r.getMessage() or "XLA compilation" in \
                r.getMessage():
            continue
        text = re.sub(r"in [0-9.e-]+ sec", "in T sec", r.getMessage())
        out.append((r.name, r.levelname, re.sub(r"id=\d+", "id=N", text)))
    return out


def _log_compiles(lib):
    f = lib.jit(lambda x: x + 1)
    with lib.log_compiles():
        f(3.0)
        f(4.0)  # cached: nothing logged
        f(np.ones((2, 3), np.int32))


def _explain(lib):
    g = lib.jit(lambda x: x + 1)
    g(1.0)
    with lib.explain_cache_misses():
        g(lib.numpy.ones(3))
        g(lib.numpy.ones(3))
        lib.jit(lambda y: y)(lib.numpy.ones(3))


def _explain_dtype(lib):
    def h(a, b):
        return a * b
    hj = lib.jit(h)
    hj(np.ones(2, np.float32), 1)
    with lib.explain_cache_misses():
        hj(np.ones(2, np.float32), np.ones(2, np.int32))


@pytest.mark.parametrize("scenario", [_log_compiles, _explain, _explain_dtype])
def test_logged_messages_match_jax(caplog, scenario):
    ours = _records(caplog, jax, scenario)
    theirs = _records(caplog, JAX, scenario)
    assert ours == theirs and ours


def test_compiles_are_logged_at_debug_level_when_off(caplog):
    with caplog.at_level(logging.DEBUG, logger="jax._src.interpreters.pxla"):
        jax.jit(lambda x: x - 1)(2.0)
    assert [r.levelname for r in caplog.records if r.name == "jax._src.interpreters.pxla"] == \
        ["DEBUG"]


def _outcome(fn):
    try:
        return repr(fn())
    except Exception as e:  # noqa: BLE001  (the class and message are compared)
        return type(e).__name__, str(e)


def _guards(lib):
    f, g = lib.jit(lambda x: x * 2), lib.jit(lambda x: x * 3)
    results = [_outcome(lambda: f(1.0))]
    with lib.no_tracing():
        results.append(_outcome(lambda: f(2.0)))  # traced before: allowed
        results.append(_outcome(lambda: g(2.0)))
    with lib.no_execution():
        results.append(_outcome(lambda: f(2.0)))
        results.append(_outcome(lambda: lib.numpy.sin(1.0)))
        results.append(_outcome(lambda: lib.jit(lambda x: x).trace(1.0).jaxpr.eqns))  # no run
    with lib.enable_checks(), lib.thread_guard(True):
        results.append(_outcome(lambda: f(3.0)))
    return [re.sub(r"m2_\w+|test_toplevel_more.py:\d+", "HERE", str(r)) for r in results]


def test_guards_match_jax():
    """Messages name the function and its line, as JAX's. (JAX also refuses, under no_tracing,
    a signature traced outside it after an attempt under it failed: its dispatch cache
    remembers the failure; refjax runs the traced program.)"""
    assert _guards(jax) == _guards(JAX)


def test_state_values_and_config_names():
    for name in ("enable_checks", "log_compiles", "explain_cache_misses", "no_tracing",
                 "no_execution", "thread_guard"):
        state = getattr(jax, name)
        assert state.value is False and getattr(jax.config, f"jax_{name}") is False
        with state(True):
            assert state.value is True and getattr(jax.config, f"jax_{name}") is True
        assert state.value is False


def test_config_update_no_execution_reaches_the_fast_path():
    f = jax.jit(lambda x: x + 2)
    x = jnp.ones(3)
    f(x)
    f(x)  # the fast path now holds a runner
    jax.config.update("jax_no_execution", True)
    try:
        with pytest.raises(RuntimeError, match=r"execute function jit\(<lambda>\)"):
            f(x)
    finally:
        jax.config.update("jax_no_execution", False)
    np.testing.assert_array_equal(f(x), np.full(3, 3.0))


def test_enable_checks_typechecks_staged_jaxprs(monkeypatch):
    """Under enable_checks a jaxpr jit stages is type-checked: a primitive whose abstract eval
    disagrees with what it staged is caught (simulated by a broken typecheck input)."""
    from refjax.core import jaxpr as jaxpr_mod
    from refjax.core.transforms import jit as jit_mod
    seen = []
    monkeypatch.setattr(jit_mod, "typecheck_jaxpr", lambda j: seen.append(j) or
                        jaxpr_mod.typecheck_jaxpr(j))
    with jax.enable_checks():
        jax.jit(lambda x: jnp.sin(x) * 2)(1.0)
    jax.jit(lambda x: jnp.cos(x))(1.0)
    assert len(seen) == 1 and "sin" in str(seen[0])


# ---------------------------------------------------------------- lax.broadcast_like, index_take

from refjax import lax  # noqa: E402

_ARR = np.arange(12, dtype=np.float32).reshape(3, 4)
BROADCAST_LIKE = [
    (np.arange(4, dtype=np.int32), np.zeros((3, 4))),
    (np.ones((1, 4), np.int8), np.zeros((2, 3, 4), np.float32)),
    (2.0, np.zeros((2, 3))),
    (np.float32(1), np.zeros((2,), np.int32)),
    (_ARR, _ARR),
    (np.ones(2), np.zeros((2, 3))),
    (np.ones((2, 3)), np.zeros(3)),
]


def _same(ours, theirs, name, same_text=True):
    """Equal results (value, dtype, weak type), or errors of one class, refjax's naming the
    function (with JAX's text after it, unless `same_text` is False)."""
    def outcome(lib, fn):
        try:
            return "ok", repr(fn(lib))
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    (kind, got), (want_kind, want) = outcome(jax, ours), outcome(JAX, theirs)
    assert kind == want_kind
    if kind == "ok" or same_text:
        assert got == (want if kind == "ok" else f"lax.{name}: {want}")
    else:
        assert got.startswith(f"lax.{name}: ")


@pytest.mark.parametrize("case", range(len(BROADCAST_LIKE)))
def test_broadcast_like_matches_jax(case):
    arr, like = BROADCAST_LIKE[case]
    f = lambda lib: lib.lax.broadcast_like(arr, like)  # noqa: E731
    _same(f, f, "broadcast_like")
    g = lambda lib: str(lib.make_jaxpr(lib.lax.broadcast_like)(arr, like))  # noqa: E731
    _same(g, g, "broadcast_like")


INDEX_TAKE = [
    ((np.array([0, 2]), np.array([1, 3])), (0, 1)),
    ((np.array([0, -1]),), (1,)),
    ((np.array([[2, -3], [1, 0]]),), (0,)),
    ((np.array([5, 1]), np.array([-5, 0])), (1, 0)),
]


@pytest.mark.parametrize("case", range(len(INDEX_TAKE)))
def test_index_take_matches_jax(case):
    idxs, axes = INDEX_TAKE[case]
    f = lambda lib: lib.lax.index_take(lib.numpy.asarray(_ARR), idxs, axes)  # noqa: E731
    # JAX refuses cases 2 and 3 in its gather's words (TypeError); refjax's differ
    _same(f, f, "index_take", same_text=case < 2)


def test_index_take_gradient_matches_a_loop():
    idxs = (np.array([0, 2, 2]), np.array([1, -1, 1]))
    g = jax.grad(lambda x: lax.index_take(x, idxs, (0, 1)).sum())(_ARR)
    want = np.zeros_like(_ARR)
    for i, j in zip(*idxs):
        want[i, j] += 1
    np.testing.assert_array_equal(g, want)


# ---------------------------------------------------------------- Compiled's shardings

def _compiled_shardings(lib):
    """The input and output shardings of five compiled programs, printed."""
    mesh = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Auto,))
    s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
    ones = np.ones((8, 2), np.float32)
    a = lib.device_put(ones, s)
    programs = [
        lib.jit(lambda x, y: (x + y, x.sum())).lower(ones, 1.0),
        lib.jit(lambda x, y: (x * 2, x.sum()), in_shardings=(s, None)).lower(ones, 1.0),
        lib.jit(lambda x: {"a": x * 2, "b": x.T}).lower(a),
        lib.jit(lambda x: x * 2, out_shardings=lib.sharding.NamedSharding(
            mesh, lib.sharding.PartitionSpec(None, None))).lower(a),
        lib.jit(lambda x: x * 2).lower(lib.ShapeDtypeStruct((8, 2), np.float32, sharding=s)),
    ]
    return [(repr(c.input_shardings), repr(c.output_shardings))
            for c in (p.compile() for p in programs)]


@pytest.mark.backends("numpy_ref", "xla")
def test_compiled_input_and_output_shardings_match_jax():
    assert _compiled_shardings(jax) == _compiled_shardings(JAX)


# ---------------------------------------------------------------- custom_vjp(symbolic_zeros)

def _symbolic_zeros(lib):
    """A custom_vjp with symbolic_zeros: what fwd and bwd see (CustomVJPPrimal's perturbed
    flags, SymbolicZero cotangents) and the gradients, under grad, jit and vmap."""
    cd, jnp, seen = lib.custom_derivatives, lib.numpy, []

    @lib.custom_vjp
    def f(x, y):
        return x * y, jnp.sin(x)

    def fwd(x, y):
        seen.append(("fwd", type(x).__name__, x.perturbed, y.perturbed))
        xv, yv = cd.custom_vjp_primal_tree_values((x, y))
        return f(xv, yv), (xv, yv)

    def bwd(res, cts):
        (x, y), (a, b) = res, cts
        za, zb = isinstance(a, cd.SymbolicZero), isinstance(b, cd.SymbolicZero)
        seen.append(("bwd", za, zb, tuple(b.shape), str(b.dtype)))
        gx = (0 if za else (a * y).sum()) + (0 if zb else b * jnp.cos(x))
        return gx, cd.SymbolicZero.from_primal_value(y) if za else a * x

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    x, y = np.float32(0.5), np.arange(3, dtype=np.float32)
    out = [lib.grad(lambda x: f(x, y)[0].sum())(x),
           lib.grad(lambda x, y: f(x, y)[1], argnums=(0, 1))(x, y),
           lib.grad(lambda y: f(x, y)[0].sum())(y),
           lib.jit(lib.grad(lambda x: (f(x, y)[0] * 2).sum() + f(x, y)[1]))(x),
           lib.vmap(lib.grad(lambda x: f(x, y)[0].sum()))(np.ones(2, np.float32))]
    with pytest.raises(TypeError, match="unexpected leaf type <class 'float'>"):
        cd.custom_vjp_primal_tree_values((1.0,))
    return [repr(o) for o in out], seen


@pytest.mark.backends("numpy_ref", "xla")
def test_custom_vjp_symbolic_zeros_match_jax():
    assert _symbolic_zeros(jax) == _symbolic_zeros(JAX)


# ---------------------------------------------------------------- linear_call

def _scale(r, x):
    return {"a": x["a"] * r, "b": x["b"] * (2 * r)}


def _scale_t(r, ct):  # deliberately not fun's transpose: shows which one differentiation uses
    return {"a": ct["a"] * r + 1 * 0, "b": ct["b"] * (3 * r)}


def _linear_call_results(lib):
    lc = lib.custom_derivatives.linear_call
    r, x = np.float32(1.5), {"a": np.arange(3, dtype=np.float32), "b": np.float32(2.0)}
    g = lambda x: lc(_scale, _scale_t, r, x)  # noqa: E731
    loss = lambda x: g(x)["a"].sum() + g(x)["b"]  # noqa: E731
    jaxpr = re.sub(r"0x[0-9a-f]+", "0x", str(lib.make_jaxpr(lambda r, b: lc(
        lambda r, b: b * r, lambda r, ct: ct * r, r, b))(1.0, 2.0)))
    return [repr(g(x)), repr(lib.grad(loss)(x)), repr(lib.jit(lib.grad(loss))(x)),
            repr(lib.jvp(g, (x,), (x,))), repr(lib.linear_transpose(g, x)(g(x))),
            repr(lib.grad(lambda x: lib.grad(loss)(x)["b"] * x["b"])(x)), jaxpr]


def test_linear_call_matches_jax():
    assert _linear_call_results(jax) == _linear_call_results(JAX)


def test_linear_call_under_vmap_where_jax_refuses():
    """JAX has no batching rule (NotImplementedError); refjax's agrees with a Python loop,
    for values and for the transpose (an unbatched linear argument's cotangent summed)."""
    lc = jax.custom_derivatives.linear_call
    rs, x = np.array([1.0, 2.0, -1.0], np.float32), np.arange(4, dtype=np.float32)
    f = lambda r, x: lc(lambda r, x: x * r, lambda r, ct: ct * (r + 1), r, x)  # noqa: E731
    with pytest.raises(NotImplementedError):
        JAX.vmap(lambda r, x: JAX.custom_derivatives.linear_call(
            lambda r, x: x * r, lambda r, ct: ct * (r + 1), r, x), (0, None))(rs, x)
    np.testing.assert_array_equal(jax.vmap(f, (0, None))(rs, x), rs[:, None] * x)
    g = jax.grad(lambda x: jax.vmap(f, (0, None))(rs, x).sum())(x)
    np.testing.assert_allclose(g, np.full(4, sum(r + 1 for r in rs)), rtol=1e-6)


def test_linear_call_errors():
    lc = jax.custom_derivatives.linear_call
    f = lambda r, x: lc(lambda r, x: x * r, lambda r, ct: ct * r, r, x)  # noqa: E731
    with pytest.raises(AssertionError):  # JAX's, bare
        JAX.grad(lambda r: JAX.custom_derivatives.linear_call(
            lambda r, x: x * r, lambda r, ct: ct * r, r, 2.0))(3.0)
    with pytest.raises(ValueError, match="with respect to residual_args is not supported"):
        jax.grad(f)(3.0, 2.0)
    bad = lambda x: lc(lambda r, x: x * r, lambda r, ct: (ct, ct), 2.0, x)  # noqa: E731
    with pytest.raises(TypeError, match="transpose output pytree structure must match"):
        jax.grad(bad)(1.0)


# ---------------------------------------------------------------- lax.scatter_apply

def _scatter_apply_results(lib):
    slax, snp = lib.lax, lib.numpy
    x, m = snp.arange(5.0), snp.arange(12.0).reshape(3, 4)
    dn = slax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    rows = slax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    idx = snp.array([[1], [3], [1], [7]])  # 1 twice: func applied twice; 7 out of bounds
    out = [slax.scatter_apply(x, idx, lambda v: v * 2 + 1, dn, update_shape=(4,)),
           slax.scatter_apply(x, idx, lambda v: v * 2 + 1, dn, update_shape=(4,), mode="clip"),
           slax.scatter_apply(x, idx, snp.sin, dn, mode="fill", update_shape=(4,)),
           slax.scatter_apply(m, snp.array([[2], [0], [2]]), lambda v: -v, rows,
                              update_shape=(3, 4)),
           slax.scatter_apply(snp.arange(5), idx, lambda v: v * 2 + 1, dn, update_shape=(4,)),
           lib.jit(lambda x: slax.scatter_apply(x, idx, snp.cos, dn, update_shape=(4,)))(x),
           lib.vmap(lambda x: slax.scatter_apply(x, idx, snp.sin, dn, update_shape=(4,)))(
               snp.ones((2, 5)))]
    return [repr(o) for o in out]


@pytest.mark.backends("numpy_ref", "xla")
def test_scatter_apply_matches_jax():
    assert _scatter_apply_results(jax) == _scatter_apply_results(JAX)


def test_scatter_apply_gradient_where_jax_refuses():
    """JAX: NotImplementedError ('scatter_apply JVP not implemented'); refjax's gradient is
    the chain rule through func applied once per hit (checked against it by hand)."""
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    idx = np.array([[1], [3], [1]])
    x = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        JAX.grad(lambda x: JAX.lax.scatter_apply(x, idx, JAX.numpy.sin, dn,
                                                 update_shape=(3,)).sum())(x)
    g = jax.grad(lambda x: lax.scatter_apply(x, idx, jnp.sin, dn, update_shape=(3,)).sum())(x)
    want = [1.0, np.cos(np.sin(0.2)) * np.cos(0.2), 1.0, np.cos(0.4)]
    np.testing.assert_allclose(g, want, rtol=1e-6)


# ---------------------------------------------------------------- lax.empty

def _empty_results(lib):
    slax = lib.lax
    mesh = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Explicit,))
    auto = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Auto,))
    s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
    out = [slax.empty((2, 3), np.float32), slax.empty(3, np.bool_), slax.empty((), "int8"),
           lib.jit(lambda: slax.empty((8, 2), np.complex64))()]
    with lib.set_mesh(mesh):
        sharded = slax.empty((8, 2), np.float32, out_sharding=s)
    with pytest.raises(ValueError, match="cannot contain axis names that are of type Auto"):
        slax.empty((8,), np.float32, out_sharding=lib.sharding.NamedSharding(
            auto, lib.sharding.PartitionSpec("x")))
    jaxpr = str(lib.make_jaxpr(lambda: slax.empty((2, 3), "float32"))())
    return [repr(o) for o in out] + [repr(sharded.sharding), jaxpr]


@pytest.mark.backends("numpy_ref", "xla")
def test_empty_matches_jax():
    """Unspecified values: XLA's on CPU are zeros, which refjax gives on both backends."""
    assert _empty_results(jax) == _empty_results(JAX)


def test_empty_negative_dimension():
    """JAX fails in MLIR (MLIRError: invalid tensor dimension size); refjax's TypeError is
    iota's and full's."""
    with pytest.raises(TypeError, match="empty shape must have every element be nonnegative"):
        lax.empty((2, -1), np.float32)


def test_finfo_attributes_have_jaxs_types_and_values():
    """JAX 0.10.2's finfo gives NumPy scalars of the dtype (not Python floats) and ints."""
    names = ("eps", "max", "min", "tiny", "resolution", "epsneg", "smallest_normal",
             "smallest_subnormal", "bits", "nmant", "precision", "dtype")
    for dt in ("float16", "bfloat16", "float32", "complex64"):
        ours, theirs = jnp.finfo(getattr(jnp, dt)), JAX.numpy.finfo(getattr(JAX.numpy, dt))
        for name in names:
            a, b = getattr(ours, name), getattr(theirs, name)
            assert (type(a), repr(a)) == (type(b), repr(b)), (dt, name)


def test_explain_cache_misses_names_the_option_that_changed(caplog):
    """Each part of jit's signature key is named by its own name (the key grew options that
    shifted the names once): toggling jax_debug_key_reuse is reported as that option."""
    f = jax.jit(lambda x: x + 1)
    f(1.0)
    caplog.clear()
    with caplog.at_level(logging.WARNING), jax.explain_cache_misses(True), \
            jax.debug_key_reuse(True):
        f(1.0)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "* jax_debug_key_reuse differs: now True and before False" in text, text
