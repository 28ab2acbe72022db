"""Bad calls of the public API, run on real JAX and on refjax side by side (tests/test_errors.py
and the fuzz test share them).

A case names the operation its error message must name (`op`) and either expects the class
real JAX raises (`better=None`) or, where JAX leaks an internal error, gives a wrong answer
or none, the clearer class refjax raises instead (`better`, with the reason in `why` and, in
`jax_says`, a piece of JAX's leaked message, or None where JAX raises nothing)."""
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Optional

import numpy as np


def namespaces():
    """(real JAX, refjax) as namespaces with the same attribute names."""
    import jax as real_jax
    from jax import lax as real_lax, nn as real_nn, random as real_random
    import jax.numpy as real_jnp
    import refjax
    from refjax import lax, nn, random
    import refjax.numpy as jnp
    real = SimpleNamespace(jax=real_jax, jnp=real_jnp, lax=real_lax, nn=real_nn,
                           random=real_random, ref=False)
    ours = SimpleNamespace(jax=refjax, jnp=jnp, lax=lax, nn=nn, random=random, ref=True)
    return real, ours


@dataclass
class Case:
    name: str
    op: str                       # the operation the message must name
    fn: Callable                  # fn(ns) makes the bad call
    better: Optional[type] = None  # refjax's class where JAX's is a leak (or JAX is silent)
    why: str = ""
    jax_says: Optional[str] = None


def _x(j):
    return j.jnp.arange(6.0).reshape(2, 3)


def _ints(j):
    return j.jnp.arange(3)


def _leaked(name, op, fn, cls, why, jax_says=None):
    return Case(name, op, fn, cls, why, jax_says)


CASES = [
    # ------------------------------------------------------------ item 6: validation
    Case("dynamic_slice: too few start indices", "dynamic_slice",
         lambda j: j.lax.dynamic_slice(_x(j), (0,), (1, 2))),
    _leaked("dynamic_slice: too few slice sizes", "dynamic_slice",
            lambda j: j.lax.dynamic_slice(_x(j), (0, 0), (1,)), ValueError,
            "JAX leaks safe_map's 'argument 2 is shorter than argument 1' (a ValueError)",
            "safe_map() argument 2 is shorter"),
    Case("dynamic_update_slice: too few start indices", "dynamic_update_slice",
         lambda j: j.lax.dynamic_update_slice(_x(j), j.jnp.ones((1, 2)), (0,))),
    Case("concatenate: dimension out of range", "concatenate",
         lambda j: j.lax.concatenate([_x(j), _x(j)], 2)),
    Case("pad: int padding value for float operand", "pad",
         lambda j: j.lax.pad(_x(j), 0, [(1, 1, 0), (0, 0, 0)])),
    Case("pad: int32 array padding value", "pad",
         lambda j: j.lax.pad(_x(j), j.jnp.int32(0), [(1, 1, 0), (0, 0, 0)])),
    Case("slice: float start", "slice", lambda j: j.lax.slice(_x(j), (0.5, 0), (1, 2))),
    Case("slice: float limit", "slice", lambda j: j.lax.slice(_x(j), (0, 0), (1.0, 2))),
    Case("iota: float size", "iota", lambda j: j.lax.iota(np.int32, 3.0)),
    # (an odd shape: JAX's own jit cache would accept (2.0,) after a call with (2,) on one)
    Case("rev: float dimension", "rev", lambda j: j.lax.rev(j.jnp.ones((3, 1, 5)), (2.0,))),
    Case("transpose: float permutation", "transpose",
         lambda j: j.lax.transpose(_x(j), (1.0, 0))),
    Case("squeeze: float dimension", "squeeze",
         lambda j: j.lax.squeeze(j.jnp.ones((1, 3)), (0.0,))),
    Case("expand_dims: float dimension", "expand_dims",
         lambda j: j.lax.expand_dims(_x(j), (0.0,))),
    Case("jnp.squeeze: float axis", "squeeze", lambda j: j.jnp.squeeze(j.jnp.ones((1, 3)), 0.0)),
    Case("jnp.expand_dims: float axis", "expand_dims", lambda j: j.jnp.expand_dims(_x(j), 0.0)),
    Case("jnp.transpose: float axes", "transpose", lambda j: j.jnp.transpose(_x(j), (1.0, 0))),
    _leaked("integer_pow: non-integral exponent", "integer_pow",
            lambda j: j.lax.integer_pow(_x(j), 2.5), TypeError,
            "JAX leaks `unsupported operand type(s) for &` (refjax used to compute x**2)",
            "unsupported operand type(s) for &"),
    Case("convert_element_type: dtype None", "convert_element_type",
         lambda j: j.lax.convert_element_type(_x(j), None)),
    Case("nn.sigmoid of bool", "logistic", lambda j: j.nn.sigmoid(j.jnp.array([True, False]))),
    Case("nn.sigmoid of int", "logistic", lambda j: j.nn.sigmoid(_ints(j))),
    Case("nn.silu of int", "logistic", lambda j: j.nn.silu(_ints(j))),
    Case("nn.swish of bool", "logistic", lambda j: j.nn.swish(j.jnp.array([True]))),
    Case("nn.log_sigmoid of bool", "log_sigmoid",
         lambda j: j.nn.log_sigmoid(j.jnp.array([True]))),
    Case("nn.softmax of bool", "softmax", lambda j: j.nn.softmax(j.jnp.array([True, False]))),
    Case("nn.log_softmax of bool", "log_softmax", lambda j: j.nn.log_softmax(j.jnp.array([True]))),
    Case("checkpoint: static_argnums out of range", "static_argnums",
         lambda j: j.jax.checkpoint(lambda a: a, static_argnums=3)(_x(j))),
    Case("device_put: an int as device", "device_put", lambda j: j.jax.device_put(_x(j), 3)),
    Case("make_mesh: negative axis sizes", "make_mesh",
         lambda j: j.jax.make_mesh((-2, -4), ("a", "b"))),
    Case("jnp.reshape: order='X'", "order", lambda j: j.jnp.reshape(_x(j), (3, 2), order="X")),
    Case("x.reshape: order='X'", "order", lambda j: _x(j).reshape((3, 2), order="X")),
    Case("x.mean: string axis", "mean", lambda j: _x(j).mean(axis="a")),
    _leaked("jnp.array: ragged list", "array", lambda j: j.jnp.array([[1, 2], [3]]), ValueError,
            "JAX leaks NumPy's 'setting an array element with a sequence'",
            "setting an array element with a sequence"),
    Case("jnp.nonzero: negative size", "nonzero", lambda j: j.jnp.nonzero(_ints(j), size=-1)),
    Case("nn.one_hot: negative num_classes", "one_hot", lambda j: j.nn.one_hot(_ints(j), -1)),
    Case("jnp.lexsort: 0-d keys", "lexsort", lambda j: j.jnp.lexsort(j.jnp.array(1))),
    Case("jnp.tri: float N", "tri", lambda j: j.jnp.tri(2.5)),
    Case("x.at[].apply: not a function", "apply", lambda j: _x(j).at[0].apply(3)),
    _leaked("jacfwd: has_aux without a pair", "has_aux",
            lambda j: j.jax.jacfwd(lambda a: a, has_aux=True)(1.0), TypeError,
            "JAX leaks NumPy's 'iteration over a 0-d array'",
            "iteration over a 0-d array"),
    Case("jacrev: has_aux without a pair", "has_aux",
         lambda j: j.jax.jacrev(lambda a: a, has_aux=True)(1.0)),
    # ------------------------------------------------------------ item 7: classes, messages
    Case("lax.add: shapes do not broadcast", "add",
         lambda j: j.lax.add(j.jnp.ones(3), j.jnp.ones(4))),
    Case("jnp.add: shapes do not broadcast", "add",
         lambda j: j.jnp.add(j.jnp.ones(3), j.jnp.ones(4))),
    Case("jnp.where: shapes do not broadcast", "where",
         lambda j: j.jnp.where(j.jnp.ones(3) > 0, j.jnp.ones(4), 0.0)),
    Case("jnp.reshape: size mismatch", "reshape", lambda j: j.jnp.reshape(_x(j), (4, 2))),
    _leaked("lax.reshape: size mismatch", "reshape", lambda j: j.lax.reshape(_x(j), (4, 2)),
            ValueError, "JAX leaks an MLIR verifier error (ValueError) from the lowering",
            "verifier errors"),
    Case("jnp.sum: traced axis", "axis",
         lambda j: j.jax.jit(lambda a, ax: j.jnp.sum(a, axis=ax))(_x(j), 0)),
    Case("jnp.sum: out=", "sum", lambda j: j.jnp.sum(_x(j), out=_x(j))),
    Case("jnp.exp: out=", "exp", lambda j: j.jnp.exp(_x(j), out=_x(j))),
    Case("jnp.exp: a string", "exp", lambda j: j.jnp.exp("a")),
    Case("jnp.exp: an object", "exp", lambda j: j.jnp.exp(object())),
    Case("jnp.add: a string", "add", lambda j: j.jnp.add(_x(j), "a")),
    Case("jnp.cos: two arguments", "cos", lambda j: j.jnp.cos(1.0, 2.0)),
    Case("jnp.cos: no argument", "cos", lambda j: j.jnp.cos()),
    Case("jnp.add: one argument", "add", lambda j: j.jnp.add(1.0)),
    Case("lax.cos: two arguments", "cos", lambda j: j.lax.cos(1.0, 2.0)),
    Case("lax.add: one argument", "add", lambda j: j.lax.add(1.0)),
    _leaked("jnp.sum: float axis", "sum", lambda j: j.jnp.sum(_x(j), axis=1.0), TypeError,
            "JAX leaks Python's \"'float' object is not iterable\"", "is not iterable"),
    _leaked("jnp.max: float axis", "max", lambda j: j.jnp.max(_x(j), axis=1.0), TypeError,
            "JAX leaks Python's \"'float' object is not iterable\"", "is not iterable"),
    _leaked("lax.cond: branch arity", "cond",
            lambda j: j.lax.cond(True, lambda a, b: a, lambda a: a, 1.0), TypeError,
            "JAX leaks the branch's own 'missing 1 required positional argument'",
            "missing 1 required positional argument"),
    _leaked("lax.switch: branch arity", "switch",
            lambda j: j.lax.switch(0, [lambda a, b: a, lambda a: a], 1.0), TypeError,
            "JAX leaks the branch's own 'missing 1 required positional argument'",
            "missing 1 required positional argument"),
    _leaked("lax.cond: operands for nullary branches", "cond",
            lambda j: j.lax.cond(True, lambda: 1.0, lambda: 2.0, 1.0), TypeError,
            "JAX leaks the branch's own 'takes 0 positional arguments but 1 was given'",
            "takes 0 positional arguments"),
    # ------------------------------------------------------------ item 1: wrong results
    Case("jacrev: complex output", "jacrev", lambda j: j.jax.jacrev(lambda v: v * 1j)(_x(j))),
    Case("hessian: complex output", "jacrev",
         lambda j: j.jax.hessian(lambda v: j.jnp.sum(v * 1j))(_x(j))),
    Case("jacfwd: complex input", "jacfwd",
         lambda j: j.jax.jacfwd(lambda v: v)(_x(j).astype(np.complex64))),
    Case("grad: complex output", "grad", lambda j: j.jax.grad(lambda v: v * 1j)(1.0)),
    _leaked("grad: argnums=(0, 0)", "argnums",
            lambda j: j.jax.grad(lambda a, b: a * a * b, argnums=(0, 0))(2.0, 3.0), TypeError,
            "JAX leaks `unsupported operand type(s) for *: 'NoneType'` (refjax gave 0 for the "
            "first entry)", "unsupported operand type(s) for *"),
    _leaked("grad: argnums=()", "argnums",
            lambda j: j.jax.grad(lambda a: a, argnums=())(2.0), ValueError,
            "JAX leaks `max() arg is an empty sequence`", "max() arg is an empty sequence"),
    Case("jnp.cos: Python int beyond int32", "cos", lambda j: j.jnp.cos(2 ** 70)),
    Case("jnp.add: Python int beyond int32", "add", lambda j: j.jnp.add(_x(j), 2 ** 40)),
    Case("lax.add: Python int beyond int32", "add", lambda j: j.lax.add(_x(j), 2 ** 40)),
    _leaked("jnp.full: Python int beyond int32", "full", lambda j: j.jnp.full(2, 2 ** 40),
            OverflowError, "JAX silently wraps it (an array of zeros)"),
    Case("vjp: cotangent of another dtype", "VJP",
         lambda j: j.jax.vjp(lambda v: v * 2, _x(j))[1](j.jnp.ones((2, 3), np.float16))),
    Case("vjp: cotangent of another shape", "VJP",
         lambda j: j.jax.vjp(lambda v: v * 2, _x(j))[1](j.jnp.ones(4))),
    Case("vjp: cotangent of another structure", "VJP",
         lambda j: j.jax.vjp(lambda v: v * 2, _x(j))[1]((j.jnp.ones((2, 3)),))),
]
