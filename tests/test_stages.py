"""jax.stages against real JAX 0.10.2: jit(f).trace / .lower / .compile, their trees, argument
and output info, the compiled program's argument checks (JAX's TypeErrors), and the xla
backend's cost analysis and StableHLO text (numpy_ref has no cost model: None)."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_compare import assert_same_error

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _f(jax):
    jnp = jax.numpy
    return lambda x, y: {"s": jnp.sin(x) @ y, "n": x.sum()}


def _stages(jax):
    jnp = jax.numpy
    traced = jax.jit(_f(jax)).trace(jnp.ones((2, 3)), jnp.ones((3,)))
    lowered = traced.lower()
    return traced, lowered, lowered.compile()


def test_stage_classes_and_info_as_jax():
    ours, theirs = _stages(refjax), _stages(real_jax)
    for mine, jax_stage, cls in zip(ours, theirs, ("Traced", "Lowered", "Compiled")):
        assert isinstance(mine, getattr(refjax.stages, cls))
        assert type(mine).__name__ == type(jax_stage).__name__
        for attr in ("in_tree", "out_tree", "args_info", "donate_argnums"):
            assert repr(getattr(mine, attr)) == repr(getattr(jax_stage, attr)), attr
        # JAX's Compiled.out_info also holds each output's sharding and memory layout
        assert refjax.tree.map(lambda s: (s.shape, s.dtype), mine.out_info) == \
            real_jax.tree.map(lambda s: (s.shape, s.dtype), jax_stage.out_info)
    assert repr(ours[1].out_info) == repr(theirs[1].out_info)
    assert ours[0].fun_name == theirs[0].fun_name == "<lambda>"
    assert str(ours[0].jaxpr) == str(refjax.make_jaxpr(_f(refjax))(np.ones((2, 3), np.float32),
                                                                   np.ones(3, np.float32)))


@pytest.mark.parametrize("args", [
    lambda jnp: (jnp.ones((2, 3)), jnp.ones((3,))),
    lambda jnp: (np.ones((2, 3)), np.ones(3)),  # float64 NumPy canonicalised, as JAX
])
def test_compiled_runs_as_jax(args):
    got = _stages(refjax)[2](*args(refjax.numpy))
    want = _stages(real_jax)[2](*args(real_jax.numpy))
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6)


@pytest.mark.parametrize("args", [
    lambda jnp: (jnp.ones((2, 4)), jnp.ones((3,))),
    lambda jnp: (jnp.ones((2, 3), jnp.int32), jnp.ones((3,))),
    lambda jnp: (jnp.ones((2, 3)), jnp.ones((2,))),
])
def test_compiled_rejects_other_types_as_jax(args):
    assert_same_error(lambda jax: _stages(jax)[2](*args(jax.numpy)), refjax, real_jax,
                      TypeError)


def test_compiled_names_nested_and_keyword_arguments_as_jax():
    def run(jax):
        compiled = jax.jit(lambda a, b: a["k"] * b).lower({"k": jax.numpy.ones(2)},
                                                           b=2.0).compile()
        outs = [np.asarray(compiled({"k": jax.numpy.ones(2)}, b=3.0)).tolist()]
        for args, kwargs in [(({"k": jax.numpy.ones(3)},), {"b": 3.0}),
                             (({"k": jax.numpy.ones(2)},), {"b": jax.numpy.ones(2)})]:
            try:
                compiled(*args, **kwargs)
            except TypeError as e:
                outs.append(str(e))
        return outs
    assert run(refjax) == run(real_jax)


def test_compiled_rejects_another_structure():
    """JAX lists the structural mismatches; refjax names both trees."""
    compiled = _stages(refjax)[2]
    with pytest.raises(TypeError, match="does not match the input pytree it was called with. "
                                        r"It was compiled for the arguments PyTreeDef\(\(\(\*, "
                                        r"\*\), \{\}\)\) and called with PyTreeDef"):
        compiled(refjax.numpy.ones((2, 3)))
    with pytest.raises(TypeError, match="does not match the input pytree"):
        _stages(real_jax)[2](real_jax.numpy.ones((2, 3)))


def test_lower_from_shape_dtype_structs():
    spec = refjax.ShapeDtypeStruct((2,), np.float32)
    compiled = refjax.jit(lambda x: x + 1).lower(spec).compile()
    np.testing.assert_array_equal(compiled(refjax.numpy.zeros(2)), [1.0, 1.0])


def test_cost_analysis_and_text():
    """xla: XLA's cost estimate of the same program (the flop and transcendental counts JAX
    gives) and JAX's StableHLO; numpy_ref: no estimate, and a ValueError for StableHLO."""
    lowered, theirs = _stages(refjax)[1], _stages(real_jax)[1]
    assert "sin" in lowered.as_text() and lowered.as_text() == str(_stages(refjax)[0].jaxpr)
    if refjax.current_backend_name() == "numpy_ref":
        assert lowered.cost_analysis() is None and lowered.compile().cost_analysis() is None
        with pytest.raises(ValueError, match="numpy_ref backend has no 'stablehlo' text"):
            lowered.as_text("stablehlo")
        return
    for ours in (lowered.cost_analysis(), lowered.compile().cost_analysis()):
        for key in ("flops", "transcendentals"):
            assert ours[key] == theirs.cost_analysis()[key]
    assert "stablehlo.sine" in lowered.as_text("stablehlo")
