"""What JAX's new documentation pages (docs/new_docs/101-301) rely on, run on refjax and on
real JAX 0.10.2 side by side: the VJP object jax.vjp returns (args_res, opaque_residuals,
its pytree, with_refs and jax.ad's targets), custom_vjp rules writing plumbing references,
jax_remat3. (The pages themselves run cell by cell in test_jax_doc_pages.py.)"""
import contextlib
import io

import jax.ad_checkpoint  # noqa: F401 - makes jax.ad_checkpoint an attribute
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
import refjax.ad_checkpoint  # noqa: F401
from refjax.core.transforms.vjp_object import NotNeeded

pytestmark = pytest.mark.backends("numpy_ref")


def _layer(jax):
    return lambda W, x: jax.numpy.tanh(x @ W)


def _vjp_object(jax):
    """What a VJP object holds and how the vjp-objects page uses it."""
    jnp = jax.numpy
    W, x = jnp.ones((3, 3)), jnp.arange(6.0).reshape(2, 3) / 10
    y, f = jax.vjp(_layer(jax), W, x)
    shown = [len(f.args_res), f.args_res[0] is W, f.args_res[1] is x,
             [r.shape for r in f.opaque_residuals], str(f.in_tree), str(f.out_tree),
             str(f.jaxpr), len(jax.tree.leaves(f)), type(jax.tree.map(lambda a: a, f)) is type(f)]
    d = {"hi": jnp.ones((4, 5)), "bye": jnp.arange(12.0).reshape(3, 4)}
    _, g = jax.vjp(lambda d, s: d["bye"] @ d["hi"] * s, d, jnp.ones(5))
    shown.append(repr(jax.tree.map(jnp.shape, g.args_res)))
    _, h = jax.vjp(lambda d, s: jnp.sin(d["a"]) * 2 * d["b"] + s,
                   {"a": jnp.float32(1), "b": jnp.float32(3)}, jnp.float32(2))
    shown += [repr(h.args_res), repr(h.opaque_residuals)]  # scalar arrays stay residuals
    fwd = jax.jit(lambda W, x: jax.vjp(_layer(jax), W, x))
    bwd = jax.jit(lambda f, ct: f(ct))
    _, res = fwd(W, x)
    values = list(bwd(res, jnp.ones_like(y)))
    g.args_res = [d, g.args_res[1]]  # restored with the argument's own containers
    f.args_res[1] = 2 * x  # the backward pass reads the restored value
    return shown, values + list(jax.tree.leaves(g(jnp.ones((3, 5))))) + list(f(y))


def test_vjp_object_matches_jax():
    (ours, ours_v), (theirs, theirs_v) = _vjp_object(refjax), on_jax(_vjp_object)
    assert ours == theirs
    for a, b in zip(ours_v, theirs_v, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def _with_refs(jax):
    """with_refs: a cotangent accumulated into a reference, returned, or not computed."""
    jnp = jax.numpy
    acc = jax.new_ref(jnp.full(4, 100.0))
    take = jax.jit(lambda x, i: x[i])
    for i in [3, 1, 3]:
        _, t = jax.vjp(take, jnp.arange(4.0), i)
        out = t.with_refs(acc, jax.ad.GradValue())(1.0)
    _, p = jax.vjp(lambda W, x: W @ x, jnp.ones((4, 4)), jnp.arange(4.0))
    W_bar, x_bar = p.with_refs(jax.ad.GradValue(), jax.ad.DontWant())(jnp.ones(4))
    dots = [str(jax.make_jaxpr(lambda: fn(jnp.ones(4)))()).count("dot_general")
            for fn in (p, p.with_refs(jax.ad.GradValue(), jax.ad.DontWant()))]
    return [repr(out[0]), repr(x_bar), dots], [jax.freeze(acc), W_bar, out[1].shape]


def test_with_refs_matches_jax():
    (ours, ours_v), (theirs, theirs_v) = _with_refs(refjax), on_jax(_with_refs)
    assert ours == theirs and ours[2] == [2, 1]
    np.testing.assert_array_equal(ours_v[0], [100.0, 101.0, 100.0, 102.0])
    for a, b in zip(ours_v, theirs_v, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return f"{type(e).__module__}.{type(e).__qualname__}", str(e)
    return None


def _vjp_errors(jax):
    jnp = jax.numpy
    _, on_ref = jax.vjp(lambda r: r[...] ** 2, jax.new_ref(2.0))
    _, s = jax.vjp(jnp.sin, jnp.float32(1.0))
    _, f = jax.vjp(_layer(jax), jnp.ones((3, 3)), jnp.ones((2, 3)))
    return [
        lambda: on_ref(1.0),  # a reference's cotangent must go into a reference...
        lambda: on_ref.with_refs(jax.new_ref(0.0))(1.0),  # ...which JAX 0.10.2 cannot do
        lambda: s.with_refs(jax.new_ref(jnp.zeros(3)))(1.0),
        lambda: s.with_refs(jax.new_ref(1))(1.0),
        lambda: f(jnp.ones((2, 3)), 2.0),
    ]


def _errors(jax):
    return [_error(f) for f in _vjp_errors(jax)]


def test_vjp_errors_match_jax():
    ours, theirs = _errors(refjax), on_jax(_errors)
    for a, b in zip(ours, theirs, strict=True):  # the same class: a builtin, or JAX's own
        assert a is not None and a[0] == b[0], (a, b)
    assert ours[0][1] == theirs[0][1] == ours[1][1] == theirs[1][1] == (
        "Expected cotangent type Ref{float32[]} but got float32[]")
    assert ours[4] == theirs[4]  # JAX's message for a pullback given several arguments


def test_vjp_errors_where_jax_is_poor():
    """JAX applies a pullback to a non-reference target as if it were GradValue(), fails with
    a bare IndexError on an args_res with too few leaves and names dot_general's operand for
    a value left NotNeeded(); refjax says what is wrong."""
    jnp = refjax.numpy
    _, f = refjax.vjp(_layer(refjax), jnp.ones((3, 3)), jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="GradValue\\(\\), DontWant\\(\\) or a reference"):
        f.with_refs(3.0, refjax.ad.GradValue())
    f.args_res = [f.args_res[0]]
    with pytest.raises(ValueError, match="args_res has 1 leaves.*arguments have 2"):
        f(jnp.ones((2, 3)))
    f.args_res = [NotNeeded(), jnp.ones((2, 3))]
    with pytest.raises(TypeError, match="needs argument leaves \\[0\\]"):
        f(jnp.ones((2, 3)))


def _stash(jax):
    """A custom_vjp rule's bwd writing the gradient into a plumbing reference (refs page)."""
    @jax.custom_vjp
    def stash(ref, x):
        return x

    def bwd(ref, g):
        ref[...] = g
        return None, g
    stash.defvjp(lambda ref, x: (x, ref), bwd)
    ref = jax.new_ref(jax.numpy.float32(0.0))
    grads = [jax.grad(lambda x: jax.numpy.sin(stash(ref, x)))(1.0), ref[...]]
    grads.append(jax.jit(jax.grad(lambda x: jax.numpy.sin(stash(ref, x))))(2.0))
    return grads + [ref[...]]


def _typed_stash(jax):
    return [(a, a.weak_type) for a in _stash(jax)]


def test_custom_vjp_writes_a_plumbing_reference_as_jax():
    ours, theirs = _typed_stash(refjax), on_jax(_typed_stash)
    np.testing.assert_allclose(ours[1][0], np.cos(1.0), rtol=1e-6)
    for (a, a_weak), (b, b_weak) in zip(ours, theirs, strict=True):
        assert (a.dtype, a_weak) == (b.dtype, b_weak)
        np.testing.assert_allclose(a, b, rtol=1e-6)



def _saved_residuals(jax, remat3):
    """What print_saved_residuals shows for a function checkpointed under each policy, with
    jax_remat3 on or off: remat3 names a checkpointed function's arguments args[i] and
    consults only the name policies and everything_saveable on named values and a
    DotsSaveable policy on dots."""
    jnp, ckpt, name = jax.numpy, jax.checkpoint_policies, jax.ad_checkpoint.checkpoint_name

    def g(W, d):
        y = name(jnp.sin(W @ d["x"]), "y")
        return jnp.sin(W @ name(jnp.sin(W @ y), "z"))

    policies = [ckpt.save_only_these_names("y"), ckpt.save_any_names_but_these("y"),
                ckpt.everything_saveable, ckpt.dots_saveable,
                ckpt.save_anything_except_these_names("z"),
                ckpt.save_and_offload_only_these_names(
                    names_which_can_be_saved=["y"], names_which_can_be_offloaded=[],
                    offload_src="device", offload_dst="pinned_host")]
    out = io.StringIO()
    jax.config.update("jax_remat3", remat3)
    try:
        with contextlib.redirect_stdout(out):
            for p in policies:
                jax.ad_checkpoint.print_saved_residuals(
                    jax.checkpoint(g, policy=p), jnp.ones((3, 3)), {"x": jnp.ones(3)})
                print("--")
    finally:
        jax.config.update("jax_remat3", False)
    return out.getvalue()


@pytest.mark.parametrize("remat3", [True, False])
def test_saved_residuals_under_remat3_as_jax(remat3):
    ours, theirs = _saved_residuals(refjax, remat3), on_jax(_saved_residuals, remat3)
    assert ours == theirs
    assert ("args[1]['x']" in ours) is remat3 and ("named 'y'" in ours)


def _nan_messages(jax):
    """What jax_debug_nans prints on the way to its FloatingPointError, eagerly and under
    jit (the jitted call, then its de-optimized run's failing primitive)."""
    out = io.StringIO()
    f = lambda x: jax.numpy.log(-3 * x)  # noqa: E731
    errors = []
    with jax.debug_nans(True), contextlib.redirect_stdout(out):
        for g in (f, jax.jit(f)):
            with pytest.raises(FloatingPointError) as info:
                g(5.0)
            errors.append(str(info.value))
    return out.getvalue(), errors


def test_debug_nans_says_it_reruns_as_jax():
    (ours, our_errors), (theirs, their_errors) = _nan_messages(refjax), on_jax(_nan_messages)
    assert ours == theirs and ours.count("Calling the de-optimized version.") == 3
    assert our_errors == their_errors


def _jit_residuals(jax):
    """A jitted function's residuals that are its own inputs are forwarded, not returned by
    the jit (JAX's): the printed jaxpr, print_saved_residuals and the VJP object show it."""
    jnp = jax.numpy
    g = jax.jit(lambda W, x: jnp.sin(W @ x))
    W, x = jnp.ones((5, 4)), jnp.arange(4.0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        jax.ad_checkpoint.print_saved_residuals(g, W, x)
    _, f = jax.vjp(g, W, x)
    return [str(jax.make_jaxpr(lambda W: jax.grad(lambda W: g(W, x).sum())(W))(W)),
            out.getvalue(), f.args_res[0] is W, len(f.opaque_residuals)]


def test_jit_forwards_input_residuals_as_jax():
    ours, theirs = _jit_residuals(refjax), on_jax(_jit_residuals)
    assert ours == theirs and "from the argument W" in ours[1] and ours[2:] == [True, 1]
