"""jax.checkpoint (remat2) and jax.ad_checkpoint as JAX's: the residuals each policy saves
(print_saved_residuals, compared with real JAX's output line for line), checkpoint_name,
values and gradients unchanged, recomputation staged into the backward pass."""
import jax as real_jax
import jax.ad_checkpoint as real_ad_checkpoint
import numpy as np
import pytest

import refjax
import refjax.numpy as jnp
from refjax import ad_checkpoint

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _layers(jax, name=None):
    """Three dense+sin layers (the checkpointing docs' example); `name` tags dot outputs."""
    def g(W, x):
        y = jax.numpy.dot(W, x)
        if name is not None:
            y = jax.ad_checkpoint.checkpoint_name(y, name)
        return jax.numpy.sin(y)

    def f(W1, W2, W3, x):
        return g(W3, g(W2, g(W1, x)))
    return f


ARGS = (np.ones((5, 4), np.float32), np.ones((6, 5), np.float32) * 0.1,
        np.ones((7, 6), np.float32) * 0.2, np.linspace(0, 1, 4, dtype=np.float32))


def _policy(jax, which):
    p = jax.checkpoint_policies
    return {"none": None, "dots": p.dots_saveable, "everything": p.everything_saveable,
            "nothing": p.nothing_saveable, "no_batch_dots": p.dots_with_no_batch_dims_saveable,
            "names": p.save_only_these_names("y"), "any_names": p.save_any_names_but_these("z"),
            "both": p.save_from_both_policies(p.dots_saveable, p.save_only_these_names("y")),
            "offload": p.offload_dot_with_no_batch_dims("device", "pinned_host")}[which]


def _program(jax, case):
    if case == "plain":
        return _layers(jax)
    named = case in ("names", "any_names", "both")
    return jax.checkpoint(_layers(jax, "y" if named else None), policy=_policy(jax, case))


CASES = ["plain", "none", "dots", "everything", "nothing", "no_batch_dots", "names",
         "any_names", "both"]


def _printed(capsys, module, f, *args):
    capsys.readouterr()
    module.print_saved_residuals(f, *args)
    return capsys.readouterr().out


@pytest.mark.parametrize("case", CASES)
def test_saved_residuals_as_jax(case, capsys):
    expected = _printed(capsys, real_ad_checkpoint, _program(real_jax, case), *ARGS)
    actual = _printed(capsys, ad_checkpoint, _program(refjax, case), *ARGS)
    assert actual == expected
    assert actual.count("\n") >= 4


def test_offloaded_residuals_are_saved_in_place(capsys):
    """refjax has one memory: what JAX offloads to the host (a device_put) it saves as is."""
    offloaded = _printed(capsys, ad_checkpoint, _program(refjax, "offload"), *ARGS)
    saved = _printed(capsys, ad_checkpoint, _program(refjax, "no_batch_dots"), *ARGS)
    expected = _printed(capsys, real_ad_checkpoint, _program(real_jax, "offload"), *ARGS)
    assert offloaded == saved
    assert expected.count("output of device_put") == offloaded.count("output of dot_general") == 3


@pytest.mark.parametrize("case", CASES + ["offload"])
def test_values_and_gradients_unchanged(case):
    loss = lambda jax, f: lambda *a: jax.numpy.sum(f(*a) ** 2)  # noqa: E731
    ours = refjax.value_and_grad(loss(refjax, _program(refjax, case)), argnums=(0, 1, 2, 3))(*ARGS)
    theirs = real_jax.value_and_grad(loss(real_jax, _program(real_jax, case)),
                                     argnums=(0, 1, 2, 3))(*ARGS)
    real_jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(
        np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6), ours, theirs)


def test_backward_pass_recomputes_what_is_not_saved():
    """With nothing saved, the linear jaxpr holds one remat2 equation that recomputes sin and
    cos of each layer from the arguments; with everything saved it recomputes nothing."""
    def staged(policy):
        f = refjax.checkpoint(_layers(refjax), policy=policy)
        _, f_vjp = refjax.vjp(f, *ARGS)
        return [e for e in f_vjp.jaxpr.eqns if e.primitive.name == "remat2"]

    (remat,) = staged(None)
    inner = [e.primitive.name for e in remat.params["jaxpr"].eqns]
    assert inner.count("sin") >= 2 and inner.count("cos") == 3 and "dot_general" in inner
    (remat,) = staged(refjax.checkpoint_policies.everything_saveable)
    assert [e.primitive.name for e in remat.params["jaxpr"].eqns].count("sin") == 0


def test_checkpoint_name_stages_as_jax():
    ours = refjax.make_jaxpr(lambda x: ad_checkpoint.checkpoint_name(x * 2, "a"))(1.0)
    theirs = real_jax.make_jaxpr(lambda x: real_ad_checkpoint.checkpoint_name(x * 2, "a"))(1.0)
    assert [e.primitive.name for e in ours.eqns] == [e.primitive.name for e in theirs.eqns]
    assert ours.eqns[1].params == theirs.eqns[1].params == {"name": "a"}
    grad = refjax.make_jaxpr(refjax.grad(lambda x: ad_checkpoint.checkpoint_name(x * 2, "a")))
    assert [e.primitive.name for e in grad(1.0).eqns] == ["mul", "name", "mul"]


def test_checkpoint_stages_remat2_with_jax_params():
    f = lambda jax: jax.checkpoint(lambda x: jax.numpy.sin(x) * 2,  # noqa: E731
                                   policy=jax.checkpoint_policies.dots_saveable)
    (ours,) = refjax.make_jaxpr(f(refjax))(1.0).eqns
    (theirs,) = real_jax.make_jaxpr(f(real_jax))(1.0).eqns
    assert ours.primitive.name == theirs.primitive.name == "remat2"
    assert sorted(ours.params) == sorted(theirs.params)
    assert [e.primitive.name for e in ours.params["jaxpr"].eqns] == \
        [e.primitive.name for e in theirs.params["jaxpr"].eqns]
    assert repr(ours.params["policy"]) == repr(theirs.params["policy"])


def test_checkpoint_composes_with_jit_vmap_and_higher_order():
    f = refjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    rf = real_jax.checkpoint(lambda x: real_jax.numpy.sin(real_jax.numpy.sin(x)))
    x = np.linspace(0.1, 1.0, 3).astype(np.float32)
    for t_ours, t_theirs in [(refjax.jit(refjax.grad(lambda v: f(v).sum())),
                              real_jax.jit(real_jax.grad(lambda v: rf(v).sum()))),
                             (refjax.vmap(refjax.grad(f)), real_jax.vmap(real_jax.grad(rf))),
                             (refjax.grad(lambda v: refjax.grad(lambda u: f(u).sum())(v).sum()),
                              real_jax.grad(lambda v: real_jax.grad(
                                  lambda u: rf(u).sum())(v).sum())),
                             (refjax.jacfwd(f), real_jax.jacfwd(rf))]:
        np.testing.assert_allclose(np.asarray(t_ours(x)), np.asarray(t_theirs(x)), rtol=1e-5)


def test_static_argnums():
    f = refjax.checkpoint(lambda x, n: x * n if n > 1 else x, static_argnums=(1,))
    assert float(refjax.grad(f)(3.0, 2)) == 2.0
    with pytest.raises(refjax.errors.TracerBoolConversionError):
        refjax.grad(refjax.checkpoint(lambda x, n: x * n if n > 1 else x))(3.0, 2)
