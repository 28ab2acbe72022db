"""lax.DotAlgorithmPreset and lax.DotAlgorithm as dot_general's precision (JAX's precision
page, new_docs/201/precision.md), against JAX 0.10.2 on CPU: the operand and accumulation
types each preset computes in, the presets a CPU refuses, the printed jaxprs and errors."""
import jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax
import refjax.numpy as jnp
from refjax import lax

_X = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 3 + 1 / 7


def _outcome(jnp_module, precision, dtype, **kw):
    try:
        x = jnp_module.asarray(_X.astype(dtype))
        out = jnp_module.dot(x, x, precision=precision, **kw)
        return str(out.dtype), np.asarray(out, np.float64)
    except ValueError as e:
        return "ValueError", str(e)


def _agree(ours, theirs):
    assert ours[0] == theirs[0]
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
    else:  # BLAS and XLA sum in different orders: a float32 ulp or two
        np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-7 if ours[0] == "float32" else 0)


def _jax_dots(precisions, dtype):
    """JAX's products in one compiled program (a compilation per preset takes seconds)."""
    x = _X.astype(dtype)
    outs = jax.jit(lambda x: [real_jnp.dot(x, x, precision=p) for p in precisions])(x)
    return [(str(o.dtype), np.asarray(o, np.float64)) for o in outs]


def _jax_refuses(precision):
    try:  # JAX checks a CPU's algorithms when it lowers
        jax.jit(lambda x: real_jnp.dot(x, x, precision=precision)).lower(_X)
    except ValueError as e:
        return "ValueError", str(e)


@pytest.mark.backends("numpy_ref")  # the xla backend hands presets to JAX itself
def test_each_preset_rounds_and_accumulates_as_jax_on_cpu():
    names = [p.name for p in lax.DotAlgorithmPreset]
    refused = {n: _jax_refuses(n) for n in names}
    for name in names:
        if refused[name]:
            _agree(_outcome(jnp, name, np.float32), refused[name])
    runs = [n for n in names if not refused[n]]
    assert len(runs) == 7
    for dtype in (np.float32, np.float16):  # float16 operands are converted by most
        for name, theirs in zip(runs, _jax_dots(runs, dtype)):
            _agree(_outcome(jnp, name, dtype), theirs)
    custom = (np.float16, np.float16, np.float32)
    _agree(_outcome(jnp, lax.DotAlgorithm(*custom), np.float32),
           _outcome(real_jnp, jax.lax.DotAlgorithm(*custom), np.float32))
    _agree(_outcome(jnp, "F32_F32_F32", np.float32, preferred_element_type=np.float16),
           _outcome(real_jnp, "F32_F32_F32", np.float32, preferred_element_type=np.float16))


def test_presets_print_and_compare_as_jax():
    assert repr(lax.DotAlgorithmPreset.TF32_TF32_F32) == "DotAlgorithmPreset.TF32_TF32_F32"
    assert [p.name for p in lax.DotAlgorithmPreset] == \
        [p.name for p in jax.lax.DotAlgorithmPreset]
    for p in lax.DotAlgorithmPreset:
        theirs = jax.lax.DotAlgorithmPreset[p.name]
        assert p.accumulation_type == theirs.accumulation_type
        assert p.supported_lhs_types == theirs.supported_lhs_types
        assert (p.supported_output_types(np.float16, np.float16)
                == theirs.supported_output_types(np.float16, np.float16))
    custom = (np.float16, np.float16, np.float32)
    assert repr(lax.DotAlgorithm(*custom)) == repr(jax.lax.DotAlgorithm(*custom))


def _jaxpr(jax_module, jnp_module, precision, grad=False):
    def f(x):
        return jnp_module.dot(x, x, precision=precision).sum()
    return str(jax_module.make_jaxpr(jax_module.grad(f) if grad else f)(_X))


def test_jaxprs_name_the_algorithm_and_transformations_keep_it():
    # staged, even the presets a CPU refuses: JAX checks when it compiles
    for precision in ("TF32_TF32_F32", "BF16_BF16_F32_X3"):
        assert _jaxpr(refjax, jnp, precision, True) == _jaxpr(jax, real_jnp, precision, True)
    custom = (np.float16, np.float16, np.float32)
    assert (_jaxpr(refjax, jnp, lax.DotAlgorithm(*custom))
            == _jaxpr(jax, real_jnp, jax.lax.DotAlgorithm(*custom)))
    with refjax.default_matmul_precision("BF16_BF16_F32"), \
            jax.default_matmul_precision("BF16_BF16_F32"):
        assert _jaxpr(refjax, jnp, None) == _jaxpr(jax, real_jnp, None)


def test_precision_errors_are_jaxs():
    for bad in ("bogus", 3):
        with pytest.raises(ValueError) as ours:
            jnp.dot(_X, _X, precision=bad)
        with pytest.raises(ValueError) as theirs:
            real_jnp.dot(_X, _X, precision=bad)
        assert str(ours.value).endswith(str(theirs.value))  # refjax's names the function
    # JAX takes a pair's second string for a preset and fails subscripting it (TypeError)
    with pytest.raises(TypeError):
        real_jnp.dot(_X, _X, precision=("highest", "F32_F32_F32"))
    with pytest.raises(ValueError, match="a tuple of two lax.Precision values or strings"):
        jnp.dot(_X, _X, precision=("highest", "F32_F32_F32"))
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        refjax.jit(lambda x: jnp.dot(x, x, precision="TF32_TF32_F32"))(_X)


def _ragged_and_conv(lax_module, jnp_module, precision):
    try:
        lhs, rhs = jnp_module.asarray(_X[:, :3]), jnp_module.asarray(_X[:2, :3, None] / 7)
        out = lax_module.ragged_dot(lhs, jnp_module.tile(rhs, (1, 1, 2)),
                                    jnp_module.array([1, 3]), precision=precision)
    except ValueError as e:
        return str(e)
    # JAX's convolution takes any algorithm and computes as by default
    conv = lax_module.conv_general_dilated(lhs[None, :1], rhs[:1].transpose(0, 2, 1), (1,),
                                           "VALID", precision=precision)
    return np.asarray(out).tolist(), np.asarray(conv).tolist()


def test_ragged_dot_runs_the_algorithm_and_convolutions_take_one():
    for precision in ("F16_F16_F16", "TF32_TF32_F32"):
        ours, theirs = (_ragged_and_conv(refjax.lax, jnp, precision),
                        _ragged_and_conv(jax.lax, real_jnp, precision))
        if isinstance(theirs, str):
            assert ours.endswith(theirs)
        else:
            np.testing.assert_allclose(ours[0], theirs[0], rtol=0)
            np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-7)
