"""JAX's own error-message checks (the regexes of `assertRaisesRegex` in JAX's tests), one entry
per check, run on real JAX and on refjax by tests/test_jax_error_messages.py and measured by
benchmarks/jax_error_messages.py.

Each entry cites JAX's test (`file:test`), copies its exception class and regex verbatim and
makes the same call as a function of a namespace `j` (j.jax, j.jnp, j.lax, j.random: real JAX
or refjax). Where JAX's message is poor, `ours` holds the regex refjax's clearer message
matches instead and `why` says what is wrong with JAX's."""
import re
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np


@dataclass
class Check:
    where: str                 # JAX's test: tests/<file>:<test name>
    cls: str                   # the exception class, a builtin or a jax.errors name
    regex: str                 # JAX's regex, verbatim
    fn: Callable               # fn(j) makes the call
    ours: Optional[str] = None  # refjax's regex where it keeps a clearer message
    why: str = ""

    @property
    def id(self):
        return f"{self.where}:{self.regex[:40]}"


def _esc(text):
    return re.escape(text)


def _f32(*shape):
    return np.ones(shape, np.float32)


def _not_callable():
    return 0


CHECKS = [
    # ------------------------------------------------------------------ lax_numpy_test.py
    Check("lax_numpy_test.py:testArgMinMaxEmpty", "ValueError",
          "attempt to get argmin of an empty sequence", lambda j: j.jnp.argmin(np.array([]))),
    Check("lax_numpy_test.py:testArgMinMaxEmpty", "ValueError",
          "attempt to get argmax of an empty sequence",
          lambda j: j.jnp.argmax(np.zeros((2, 0)), axis=1)),
    Check("lax_numpy_test.py:testArgMinMaxEmpty", "ValueError",
          "attempt to get argmin of an empty sequence", lambda j: j.jnp.nanargmin(np.array([]))),
    Check("lax_numpy_test.py:testTensordotErrors", "TypeError",
          "Number of tensordot axes.*exceeds input ranks.*",
          lambda j: j.jnp.tensordot(_f32(3), _f32(3, 4), axes=2)),
    Check("lax_numpy_test.py:testTensordotErrors", "TypeError",
          "tensordot requires axes lists to have equal length.*",
          lambda j: j.jnp.tensordot(_f32(3), _f32(3, 4), axes=([0], [0, 1]))),
    Check("lax_numpy_test.py:testTensordotErrors", "TypeError",
          "tensordot requires both axes lists to be either ints, tuples or lists.*",
          lambda j: j.jnp.tensordot(_f32(3), _f32(3, 4), axes=('bad', 'axes'))),
    Check("lax_numpy_test.py:testTensordotErrors", "TypeError",
          "tensordot axes argument must be an int, a pair of ints, or a pair of lists.*",
          lambda j: j.jnp.tensordot(_f32(3), _f32(3, 4), axes='badaxes')),
    Check("lax_numpy_test.py:testClipComplexInputError", "ValueError",
          ".*Complex values have no ordering and cannot be clipped.*",
          lambda j: j.jnp.clip(np.ones(5, np.complex64))),
    Check("lax_numpy_test.py:testClipComplexInputError", "ValueError",
          ".*Complex values have no ordering and cannot be clipped.*",
          lambda j: j.jnp.clip(np.ones(5, np.int32), min=-1 + 5j)),
    Check("lax_numpy_test.py:testHypotComplexInputError", "ValueError",
          "jnp.hypot is not well defined for complex-valued inputs.*",
          lambda j: j.jnp.hypot(np.ones(5, np.complex64), np.ones(5, np.complex64))),
    Check("lax_numpy_test.py:testPadErrors", "ValueError",
          "unsupported keyword arguments for mode 'constant'",
          lambda j: j.jnp.pad(_f32(3), 1, "constant", stat_length=2)),
    Check("lax_numpy_test.py:testPadErrors", "ValueError",
          "unsupported keyword arguments for mode 'edge'",
          lambda j: j.jnp.pad(_f32(3), 1, "edge", constant_values=2)),
    Check("lax_numpy_test.py:testPadErrors", "NotImplementedError",
          "Unimplemented padding mode 'foo' for np.pad.",
          lambda j: j.jnp.pad(_f32(3), 1, "foo")),
    Check("lax_numpy_test.py:testPadErrors", "NotImplementedError",
          "Unimplemented padding mode 'None' for np.pad.",
          lambda j: j.jnp.pad(_f32(3), 1, None)),
    Check("lax_numpy_test.py:testTriJit", "TypeError",
          'Shapes must be 1D sequences of concrete values of integer type',
          lambda j: j.jax.jit(j.jnp.tri)(3, M=3, k=0)),
    Check("lax_numpy_test.py:testInterpPeriod", "ValueError", "period must be a scalar; got",
          lambda j: j.jnp.interp(0.0, np.arange(3.0), np.arange(3.0), period=np.array([1.0]))),
    Check("lax_numpy_test.py:testTraceSameAxesError", "ValueError",
          r"axis1 and axis2 can not be same",
          lambda j: j.jnp.trace(_f32(2, 3, 4), axis1=1, axis2=-2)),
    Check("lax_numpy_test.py:testSplitTypeError", "TypeError",
          "Abstract tracer value encountered where concrete value is expected.",
          lambda j: j.jax.jit(lambda idx: j.jnp.split(j.jnp.zeros((12, 2)), idx))(2.)),
    Check("lax_numpy_test.py:testSplitTypeError", "TypeError",
          "Abstract tracer value encountered where concrete value is expected.",
          lambda j: j.jax.jit(lambda idx: j.jnp.split(j.jnp.zeros((12, 2)), [2, idx]))(2.)),
    Check("lax_numpy_test.py:testExpandDimsRepeatedAxisError", "ValueError", 'repeated axis.*',
          lambda j: j.jnp.expand_dims(_f32(3), [1, 1])),
    Check("lax_numpy_test.py:testExpandDimsRepeatedAxisError", "ValueError", 'repeated axis.*',
          lambda j: j.jnp.expand_dims(_f32(3, 4), [3, -1])),
    Check("lax_numpy_test.py:testArrayCopyAutodiff", "TypeError",
          "array\\(\\) got multiple values for argument 'copy'",
          lambda j: j.jnp.array(_f32(2), None, True, copy=False)),
    Check("lax_numpy_test.py:testArrayCopyAutodiff", "TypeError",
          "array\\(\\) takes at most 5 positional arguments",
          lambda j: j.jnp.array(_f32(2), None, True, "K", 0, "extra"),
          ours=r"array\(\) takes from 1 to 5 positional arguments but 6 were given",
          why="Python's own wording for a plain function, as clear as JAX's"),
    Check("lax_numpy_test.py:testArrayContainsErrors", "ValueError",
          "Array.__contains__: search array must be one-dimensional",
          lambda j: 1 in j.jnp.array(1)),
    Check("lax_numpy_test.py:testArrayContainsErrors", "ValueError",
          "Array.__contains__: query value must be a scalar",
          lambda j: j.jnp.arange(2) in j.jnp.arange(2)),
    Check("lax_numpy_test.py:testArrayContainsErrors", "TypeError",
          "Array.__contains__: unsupported operand type.*", lambda j: "abc" in j.jnp.arange(2)),
    Check("lax_numpy_test.py:testArrayContainsErrors", "TypeError",
          "Array.__contains__: unsupported operand type.*", lambda j: None in j.jnp.arange(2)),
    Check("lax_numpy_test.py:testArrayUnsupportedDtypeError", "TypeError",
          'JAX only supports number, bool, and string dtypes.*',
          lambda j: j.jnp.array(3, [('a', '<i4'), ('b', '<i4')]),
          ours="JAX only supports number and bool dtypes",
          why="refjax has no string dtypes: saying it supports them would mislead"),
    Check("lax_numpy_test.py:testArrayOutOfBoundsPythonInt", "OverflowError",
          "Python int 2147483648 too large to convert to int32",
          lambda j: j.jnp.array(2 ** 31)),
    Check("lax_numpy_test.py:testArrayNone", "ValueError",
          'None is not a valid value for jnp.array', lambda j: j.jnp.array([0.0, None])),
    Check("lax_numpy_test.py:testTakeEmpty", "IndexError", "non-empty jnp.take",
          lambda j: j.jnp.take(np.ones((2, 0, 4), np.float32), np.array([0], np.int32),
                               axis=1)),
    Check("lax_numpy_test.py:testTakeAlongAxisWithFloatIndices", "TypeError",
          "take_along_axis indices must be of integer type, got float32",
          lambda j: j.jnp.take_along_axis(_f32(3), np.zeros(3, np.float32), axis=0)),
    Check("lax_numpy_test.py:testArangeComplex", "ValueError",
          "Passing complex start/stop/step to jnp.arange is no longer supported",
          lambda j: j.jnp.arange(1 + 2j, 5 + 3j)),
    Check("lax_numpy_test.py:testArangeComplex", "ValueError",
          "Passing complex start/stop/step to jnp.arange is no longer supported",
          lambda j: j.jnp.arange(0, 5, 1 + 1j)),
    Check("lax_numpy_test.py:testCorrCoefDtype", "ValueError",
          "corrcoef: dtype must be a subclass of float or complex",
          lambda j: j.jnp.corrcoef(_f32(3), _f32(3), dtype=int)),
    Check("lax_numpy_test.py:testMgrid", "ConcretizationTypeError", "slice start of jnp.mgrid",
          lambda j: j.jax.jit(lambda a, b: j.jnp.mgrid[a:b])(0, 2)),
    Check("lax_numpy_test.py:testOgrid", "ConcretizationTypeError", "slice start of jnp.ogrid",
          lambda j: j.jax.jit(lambda a, b: j.jnp.ogrid[a:b])(0, 2)),
    Check("lax_numpy_test.py:testR_", "ValueError", "could not understand directive.*",
          lambda j: j.jnp.r_["asdfgh", [1, 2, 3]]),
    Check("lax_numpy_test.py:testR_", "ConcretizationTypeError", "slice start of jnp.r_",
          lambda j: j.jax.jit(lambda a, b: j.jnp.r_[a:b])(0, 2)),
    Check("lax_numpy_test.py:testC_", "ValueError", "could not understand directive.*",
          lambda j: j.jnp.c_["asdfgh", [1, 2, 3]]),
    Check("lax_numpy_test.py:testC_", "ConcretizationTypeError", "slice start of jnp.c_",
          lambda j: j.jax.jit(lambda a, b: j.jnp.c_[a:b])(0, 2)),
    Check("lax_numpy_test.py:testBroadcastToInvalidShape", "ValueError",
          "Cannot broadcast to shape with fewer dimensions",
          lambda j: j.jnp.broadcast_to(_f32(2, 3, 4), (4, 5))),
    Check("lax_numpy_test.py:testBroadcastToOnScalar", "ValueError",
          "Incompatible.*broadcasting: .*", lambda j: j.jnp.broadcast_to(np.ones((2, 3)), (1, 3))),
    Check("lax_numpy_test.py:testZerosShapeErrors", "TypeError",
          "Shapes must be 1D sequences of concrete values of integer type.*",
          lambda j: j.jnp.zeros(1.)),
    Check("lax_numpy_test.py:testZerosShapeErrors", "TypeError",
          r"Shapes must be 1D sequences of concrete values of integer type.*\n"
          "If using `jit`, try using `static_argnums` or applying `jit` to "
          "smaller subfunctions.", lambda j: j.jax.jit(j.jnp.zeros)(2)),
    Check("lax_numpy_test.py:testToBytesJitError", "ConcretizationTypeError",
          r".*The tobytes\(\) method was called on traced array",
          lambda j: j.jax.jit(lambda x: x.tobytes())(np.arange(12, dtype=np.int32))),
    Check("lax_numpy_test.py:testToListJitError", "ConcretizationTypeError",
          r".*The tolist\(\) method was called on traced array",
          lambda j: j.jax.jit(lambda x: x.tolist())(np.arange(12, dtype=np.int32))),
    Check("lax_numpy_test.py:testArangeConcretizationError", "ConcretizationTypeError",
          r"It arose in the jnp.arange argument 'stop'", lambda j: j.jax.jit(j.jnp.arange)(3)),
    Check("lax_numpy_test.py:testArangeConcretizationError", "ConcretizationTypeError",
          r"It arose in the jnp.arange argument 'start'",
          lambda j: j.jax.jit(lambda start: j.jnp.arange(start, 3))(0)),
    Check("lax_numpy_test.py:testArangeConcretizationError", "ConcretizationTypeError",
          r"It arose in the jnp.arange argument 'stop'",
          lambda j: j.jax.jit(lambda stop: j.jnp.arange(0, stop))(3)),
    Check("lax_numpy_test.py:testRot90Error", "ValueError",
          "rot90 requires its first argument to have ndim at least two, "
          "but got first argument of", lambda j: j.jnp.rot90(j.jnp.ones(2))),
    Check("lax_numpy_test.py:testZerosOnesEmptyShapeErrors", "TypeError",
          r"Did you accidentally write `jax\.numpy\..*?\(2, 3\)` "
          r"when you meant `jax\.numpy\..*?\(\(2, 3\)\)`", lambda j: j.jnp.zeros(2, 3)),
    Check("lax_numpy_test.py:testZerosOnesEmptyShapeErrors", "TypeError",
          r"Did you accidentally write `jax\.numpy\..*?\(2, 3\)` "
          r"when you meant `jax\.numpy\..*?\(\(2, 3\)\)`", lambda j: j.jnp.ones(2, 3)),
    Check("lax_numpy_test.py:testSizeAlongAxisDuplicate", "ValueError", "repeated axis",
          lambda j: j.jnp.size(j.jnp.zeros((2, 3, 4)), (1, -2))),
]
