"""Type promotion as JAX's, entry by entry: the jnp and lax tables of JAX's type-promotion
note (every pair of JAX's types, strong and weak, Python scalars, x64 on and off), the
inexact dtypes of float functions of integer inputs under x64, strict promotion, and lax's
broadcasting of size-1 dimensions."""
import contextlib
import itertools
import warnings

import jax as real_jax
import ml_dtypes
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax

NAMES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]


def _np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _operands(jnp):
    ops = {n: (lambda n=n: jnp.zeros((), _np_dtype(n))) for n in NAMES}
    ops.update({"int": lambda: 1, "float": lambda: 1.0, "complex": lambda: 1j,
                "int*": lambda: jnp.asarray(1) * 1, "float*": lambda: jnp.asarray(1.0) * 1,
                "complex*": lambda: jnp.asarray(1j) * 1})
    return ops


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # the error class is part of the table
        return type(e).__name__
    return f"{r.dtype}{'*' if getattr(r, 'weak_type', False) else ''}"


@contextlib.contextmanager
def _x64(module, on):
    previous = module.config.read("jax_enable_x64") if module is refjax else \
        module.config.jax_enable_x64
    module.config.update("jax_enable_x64", on)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        module.config.update("jax_enable_x64", previous)


def _table(module, op_name, x64):
    """{(type, type): result dtype (* if weak) or error class}. refjax computes eagerly; JAX
    abstractly (eval_shape: the same promotion rules, without compiling ~900 programs)."""
    op = getattr(module.numpy, "add") if op_name == "jnp" else module.lax.add
    with _x64(module, x64):
        ops = _operands(module.numpy) if module is refjax else _abstract_operands()
        run = op if module is refjax else (lambda a, b: real_jax.eval_shape(op, a, b))
        return {(a, b): _outcome(lambda: run(fa(), fb()))
                for (a, fa), (b, fb) in itertools.product(ops.items(), repeat=2)}


def _abstract_operands():
    sds = real_jax.ShapeDtypeStruct
    ops = {n: (lambda n=n: sds((), real_jax.dtypes.canonicalize_dtype(_np_dtype(n))))
           for n in NAMES}
    ops.update({"int": lambda: 1, "float": lambda: 1.0, "complex": lambda: 1j})
    ops.update({f"{k}*": (lambda k=k: sds((), real_jax.dtypes.canonicalize_dtype(k),
                                          weak_type=True)) for k in ("int", "float", "complex")})
    return ops


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("table", ["jnp", "lax"])
def test_promotion_table_equals_jax(table, x64):
    ours, theirs = _table(refjax, table, x64), _table(real_jax, table, x64)
    assert len(ours) == 21 * 21
    assert {k: v for k, v in ours.items() if v != theirs[k]} == {}


@pytest.mark.parametrize("fn", ["sqrt", "sin", "exp", "log1p", "arctan", "true_divide", "mean",
                                "arctan2", "exp2", "float_power", "var", "hypot"])
def test_float_functions_of_integers_under_x64(fn):
    """JAX 0.10 computes integers of up to 32 bits in float32 even under x64."""
    def dtypes(module):
        f = getattr(module.numpy, fn)
        with _x64(module, True):
            return [_outcome(lambda: f(*[module.numpy.ones(2, _np_dtype(n))] * _arity(fn)))
                    for n in NAMES]
    assert dtypes(refjax) == on_jax(dtypes)


def _arity(fn):
    return 2 if fn in ("true_divide", "arctan2", "float_power", "hypot") else 1


STRICT = ["modf", "sqrt", "add", "multiply", "maximum", "power", "divide", "floor_divide",
          "clip_int_bounds", "where_gt_int", "isclose", "mean", "cumsum", "polyval",
          "bool_plus_int", "int8_plus_float", "int8_plus_int16", "float16_plus_int"]


def _strict_case(jnp, name, dtype):
    x = jnp.array([1, 2, 3], dtype=dtype)
    return {"clip_int_bounds": lambda: jnp.clip(x, 0, 2),
            "where_gt_int": lambda: jnp.where(x > 1, x, x),
            "bool_plus_int": lambda: jnp.array([True]) + 1,
            "int8_plus_float": lambda: jnp.array([1], "int8") + 1.0,
            "int8_plus_int16": lambda: jnp.array([1], "int8") + jnp.array([1], "int16"),
            "float16_plus_int": lambda: jnp.array([1], "float16") + 1,
            }.get(name, lambda: getattr(jnp, name)(*[x] * (2 if name in (
                "add", "multiply", "maximum", "power", "divide", "floor_divide", "isclose",
                "polyval") else 1)))


@pytest.mark.parametrize("name", STRICT)
def test_strict_promotion_as_jax(name):
    def outcomes(module):
        with module.numpy_dtype_promotion("strict"):
            return [_outcome(lambda: _first(_strict_case(module.numpy, name, d)()))
                    for d in ("bool", "int8", "uint8", "int32", "float16", "float32")]
    assert outcomes(refjax) == on_jax(outcomes)


def _first(r):
    return r[0] if isinstance(r, tuple) else r


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("shapes", [((3, 4), (3, 1)), ((1, 4), (3, 1)), ((3, 4), ()),
                                    ((2, 1, 4), (2, 3, 1)), ((0, 1), (0, 5)), ((3, 4), (4,)),
                                    ((3, 4), (2, 4))])
@pytest.mark.parametrize("op", ["add", "mul", "max", "atan2", "pow", "div", "lt"])
def test_lax_broadcasts_size_one_dimensions_as_jax(op, shapes):
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in shapes]

    def run(module):
        try:
            return np.asarray(getattr(module.lax, op)(*args))
        except TypeError as e:
            return str(e)
    ours, theirs = run(refjax), on_jax(run)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.backends("numpy_ref", "xla")
def test_size_one_broadcasting_under_transformations():
    a = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1.0, 2.0, 3, dtype=np.float32).reshape(3, 1)
    for module in (refjax, real_jax):
        lax = module.lax
        g = module.grad(lambda a, b: (lax.pow(a, b) * lax.atan2(a, b)).sum(), argnums=(0, 1))
        v = module.vmap(lambda a, b: lax.max(a, b), in_axes=(0, None))
        results = [g(a, b), v(np.stack([a, a * 2]), b)]
        if module is refjax:
            ours = results
    real_jax.tree_util.tree_map(lambda x, y: np.testing.assert_allclose(
        np.asarray(x), np.asarray(y), rtol=2e-6), ours, results)


# ---------------------------------------------------------------- weak types of derivatives

_DERIVATIVES = {
    "sin": lambda j: j.numpy.sin,
    "abs": lambda j: j.numpy.abs,
    "hypot": lambda j: lambda x: j.numpy.hypot(x, 0.0),
    "relu": lambda j: j.nn.relu,
    "where": lambda j: lambda x: j.numpy.where(x > 0, x, 0.0),
    "maximum": lambda j: lambda x: j.numpy.maximum(x, 0.0),
    "clip": lambda j: lambda x: j.numpy.clip(x, -1.0, 1.0),
    "array_in": lambda j: lambda x: j.numpy.sum(j.numpy.abs(x)),
}


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("name", sorted(_DERIVATIVES))
@pytest.mark.parametrize("point", [0.0, 0.5, -2.0])
def test_gradients_keep_jax_weak_types(name, point):
    """grad of a function of a Python float is weakly typed where JAX's is (the zeros and
    ones the JVP rules make are weak like the values they stand beside)."""
    arg = (lambda j: j.numpy.ones(2) * point) if name == "array_in" else (lambda j: point)
    ours = refjax.grad(_DERIVATIVES[name](refjax))(arg(refjax))
    theirs = real_jax.grad(_DERIVATIVES[name](real_jax))(arg(real_jax))
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
