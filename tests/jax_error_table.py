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

# lax_test.py:testGatherShapeCheckingRule's cases, verbatim (GatherDimensionNumbers as a dict):
# (name, operand shape, indices shape, dimension numbers, slice sizes, JAX's regex)
_GATHER_ROWS = [
    ("NonAscendingWindowIndices", (10, 9, 8, 7, 6), (5, 4, 3, 2, 1),
     dict(
         offset_dims=(4, 5, 6, 8, 7), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6), "offset_dims in gather op must be sorted"),
    ("RepeatedWindowIndices", (10, 9, 8, 7, 6), (5, 4, 3, 2, 1),
     dict(
         offset_dims=(4, 5, 6, 7, 7), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6), "offset_dims in gather op must not repeat"),
    ("WindowIndexOutOfBounds", (10, 9, 8, 7, 6), (5, 4, 3, 2, 1),
     dict(
         offset_dims=(4, 5, 100, 101, 102), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6), "Offset dimension 2 in gather op is out of bounds"),
    ("WindowIndexBarelyOutOfBounds", (10, 9, 8, 7, 6), (5, 4, 3, 2, 1),
     dict(
         offset_dims=(4, 5, 6, 7, 9), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6), "Offset dimension 4 in gather op is out of bounds"),
    ("MismatchingElidedWindowDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(4,),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6),
     ("All components of the offset index in a gather op must either be a "
      "offset dimension or explicitly collapsed/batching")),
    ("MismatchingElidedWindowDimsV2", (10, 9, 8, 7, 6, 5), (10, 4, 3, 2, 4),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(4,),
         start_index_map=(1, 2, 3, 4), operand_batching_dims=(0,),
         start_indices_batching_dims=(0,)),
     (10, 9, 8, 7, 6, 5),
     ("All components of the offset index in a gather op must either be a "
      "offset dimension or explicitly collapsed/batching")),
    ("OutOfBoundsWindowToInputMapping", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(0, 1, 2, 3, 19),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6),
     "Invalid collapsed_slice_dims set in gather op; valid range is"),
    ("RepeatedWindowToInputMapping", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(0, 1, 2, 3, 3),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6), "collapsed_slice_dims in gather op must not repeat"),
    ("MismatchingGatherToInputMapping", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3)),
     (10, 9, 8, 7, 6),
     ("Gather op has 4 elements in start_index_map and the bound of "
      "dimension index_vector_dim=4 of indices is 5. These two "
      "numbers must be equal.")),
    ("OutOfBoundsGatherToInputMapping", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 7)),
     (10, 9, 8, 7, 6), "Invalid start_index_map"),
    ("RepeatedGatherToInputMapping", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 3)),
     (10, 9, 8, 7, 6), "start_index_map in gather op must not repeat"),
    ("NonAscendingElidedWindowDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(2, 1),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6),
     "collapsed_slice_dims in gather op must be sorted"),
    ("WindowBoundsTooLarge", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7), collapsed_slice_dims=(2,),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 100, 6),
     "Slice size at index 3 in gather op is out of range"),
    ("MismatchingNumberOfWindowBounds", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7), collapsed_slice_dims=(),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7),
     "Gather op must have one slice size for every input dimension"),
    ("WindowBoundsNot1ForElidedDim", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6, 7), collapsed_slice_dims=(1,),
         start_index_map=(0, 1, 2, 3, 4)),
     (10, 9, 8, 7, 6),
     ("Gather op can only collapse slice dims with bound 1, but bound "
      "is 9 for index 1 at position 0.")),
    ("RepeatedOperandBatchingDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 3),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 4), operand_batching_dims=(2, 3, 3)),
     (10, 9, 8, 7, 6),
     "operand_batching_dims in gather op must not repeat"),
    ("NonAscendingOperandBatchingDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 3),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 4), operand_batching_dims=(3, 2)),
     (10, 9, 8, 7, 6),
     "operand_batching_dims in gather op must be sorted"),
    ("OutOfBoundsOperandBatchingDims", (10, 9, 8, 7, 6),
     (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 2, 3, 4),
         operand_batching_dims=(0, 10)),
     (10, 9, 8, 7, 6),
     "Invalid operand_batching_dims set in gather op; valid range is"),
    ("NonDisjointCollapsedAndBatchingDims", (10, 9, 8, 7, 6),
     (5, 4, 3, 2, 3),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1, 2),
         start_index_map=(0, 1, 4), operand_batching_dims=(2, 3)),
     (10, 9, 8, 7, 6),
     ("collapsed_slice_dims and operand_batching_dims in gather op must be "
      "disjoint")),
    ("NonDisjointStartIndexMapAndBatchingDims", (10, 9, 8, 7, 6),
     (5, 4, 3, 2, 4),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 2, 4), operand_batching_dims=(2, 3)),
     (10, 9, 8, 7, 6),
     ("start_index_map and operand_batching_dims in gather op must be "
      "disjoint")),
    ("WindowBoundsNot1ForBatchingDim", (10, 9, 8, 7, 6), (9, 4, 3, 2, 4),
     dict(
         offset_dims=(4, 5, 6, 7), collapsed_slice_dims=(),
         start_index_map=(0, 2, 3, 4), operand_batching_dims=(1,),
         start_indices_batching_dims=(0,)),
     (10, 9, 8, 7, 6),
     ("Gather op can only have operand batching dims with bound 0/1, but "
      "bound is 9 for index 1 at position 0.")),
    ("RepeatedStartIndicesBatchingDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 2, 3, 4),
         start_indices_batching_dims=(0, 1, 0)),
     (10, 9, 8, 7, 6),
     "start_indices_batching_dims in gather op must not repeat"),
    ("OutOfBoundsStartIndicesBatchingDims", (10, 9, 8, 7, 6),
     (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 2, 3, 4),
         start_indices_batching_dims=(0, 5)),
     (10, 9, 8, 7, 6),
     "Invalid start_indices_batching_dims set in gather op; valid range"),
    ("IndexVectorDimInStartIndicesBatchingDims", (10, 9, 8, 7, 6),
     (5, 4, 3, 2, 5),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(0, 1),
         start_index_map=(0, 1, 2, 3, 4),
         start_indices_batching_dims=(0, 4)),
     (10, 9, 8, 7, 6),
     ("Gather op cannot have the index vector dimension as a batching "
      "dimension")),
    ("MismatchingNumberOfBatchingDims", (10, 9, 8, 7, 6), (5, 4, 3, 2, 4),
     dict(
         offset_dims=(4, 5, 6), collapsed_slice_dims=(1, 2),
         start_index_map=(1, 2, 3, 4), operand_batching_dims=(0,),
         start_indices_batching_dims=(0, 1)),
     (10, 9, 8, 7, 6),
     ("Gather op requires equal numbers of operand_batching_dims and "
      "start_indices_batching_dims")),
    ("MismatchingBatchingDimSizes", (10, 9, 8, 7, 6), (10, 9, 3, 2, 3),
     dict(
         offset_dims=(4, 5, 6, 7, 8), collapsed_slice_dims=(2, 3, 4),
         start_index_map=(2, 3, 4), operand_batching_dims=(0, 1),
         start_indices_batching_dims=(1, 0)),
     (10, 9, 8, 7, 6),
     ("Gather op requires operand batching dimensions and indices batching "
      "dimensions to have the same shape"))
  ]

# lax_test.py:testScatterShapeCheckingRule's cases, verbatim (ScatterDimensionNumbers as a dict):
# (name, operand shape, indices shape, updates shape, dimension numbers, JAX's regex)
_SCATTER_ROWS = [
          ("ScatterWithUpdatesBiggerThanInput", (64, 48), (32, 1), (65, 32),
           dict(
               update_window_dims=(0,), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(1,)),
           "Bounds of the window dimensions"),
          ("ScatterWithUpdatesBiggerThanInputV2", (64, 48), (32, 1),
           (32, 49), dict(
               update_window_dims=(1,), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(1,)),
           "Bounds of the window dimensions"),
          ("ScatterWithUpdatesNotMatchingIndices", (64, 48), (32, 1),
           (64, 31), dict(
               update_window_dims=(1,), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(1,)),
           "Bounds of the scatter dimensions"),
          ("ScatterWithUpdatesNotMatchingIndicesV2", (64, 48), (32, 1),
           (31, 48), dict(
               update_window_dims=(1,), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(1,)),
           "Bounds of the scatter dimensions"),
          ("ScatterNdWithUpdatesBiggerThanInput", (64, 48),
           (10, 9, 8, 7, 1), (10, 9, 8, 7, 65),
           dict(
               update_window_dims=(4,), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(1,)),
           "Bounds of the window dimensions"),
          ("ScatterNdWithUpdatesNotMatchingIndices", (64, 48),
           (10, 9, 8, 7, 1), (9, 9, 8, 7, 64),
           dict(
               update_window_dims=(4,), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(0,)),
           "Bounds of the scatter dimensions"),
          ("InvalidUpdates", (50, 49, 48, 47, 46), (10, 9, 8, 7, 5),
           (10, 9, 8, 7, 3, 2, 4, 1),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 2),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "Updates tensor must be of rank 7; got 8."),
          ("NonAscendingUpdateWindowDims", (6, 5, 4, 3, 2), (5, 4, 3, 2, 1),
           (10, 9, 8, 7, 6, 5, 4, 3, 2),
           dict(
               update_window_dims=(4, 5, 6, 8, 7), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "update_window_dims in scatter op must be sorted"),
          ("RepeatedUpdateWindowDims", (6, 5, 4, 3, 2), (5, 4, 3, 2, 1),
           (10, 9, 8, 7, 6, 5, 4, 3, 2),
           dict(
               update_window_dims=(4, 5, 6, 7, 7), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "update_window_dims in scatter op must not repeat"),
          ("OutOfBoundsUpdateWindowDims", (6, 5, 4, 3, 2), (5, 4, 3, 2, 1),
           (10, 9, 8, 7, 6, 5, 4, 3, 2),
           dict(
               update_window_dims=(4, 5, 6, 7, 9), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "Invalid update_window_dims set in scatter op"),
          ("NonAscendingInsertedWindowDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(2, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "inserted_window_dims in scatter op must be sorted"),
          ("RepeatedInsertedWindowDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "inserted_window_dims in scatter op must not repeat"),
          ("OutOfBoundsInsertedWindowDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 5),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4)),
           "Invalid inserted_window_dims set in scatter op"),
          ("MismatchingScatterDimsToOperandDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 2),
               scatter_dims_to_operand_dims=(0, 1, 2, 3)),
           ("Scatter op has 4 elements in scatter_dims_to_operand_dims and "
            "the bound of dimension index_vector_dim=4 of indices "
            "is 5. These two numbers must be equal")),
          ("OutOfBoundsScatterDimsToOperandDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 2),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 10)),
           "Invalid scatter_dims_to_operand_dims mapping"),
          ("RepeatedValuesInScatterDimsToOperandDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 2),
               scatter_dims_to_operand_dims=(0, 1, 2, 2, 3)),
           "scatter_dims_to_operand_dims in scatter op must not repeat"),
          ("InsufficientWindowDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 4), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(0, 1, 2, 3)),
           ("Scatter op has window of size 4; doesn't match operand of "
            "rank 5.")),
          ("InsufficientWindowDimsV2", (10, 49, 48, 47, 46, 45),
           (10, 9, 8, 7, 3), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(1, 2, 3),
               operand_batching_dims=(0,),
               scatter_indices_batching_dims=(0,)),
           ("Scatter op has window of size 5; doesn't match operand of "
            "rank 6.")),
          ("RepeatedOperandBatchingDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 4),
               operand_batching_dims=(2, 3, 3)),
           "operand_batching_dims in scatter op must not repeat"),
          ("NonAscendingOperandBatchingDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 4),
               operand_batching_dims=(3, 2)),
           "operand_batching_dims in scatter op must be sorted"),
           ("OutOfBoundsOperandBatchingDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4),
               operand_batching_dims=(0, 10)),
           ("Invalid operand_batching_dims set in scatter op; valid range "
            "is")),
          ("NonDisjointCollapsedAndBatchingDims", (50, 49, 48, 47, 46, 45),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 4),
               operand_batching_dims=(1, 2)),
           ("inserted_window_dims and operand_batching_dims in scatter op "
            "must be disjoint")),
          ("NonDisjointScatterDimsToOperandDimsAndBatchingDims",
           (50, 49, 48, 47, 46), (10, 9, 8, 7, 5),
           (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 4),
               operand_batching_dims=(2, 3)),
           ("scatter_dims_to_operand_dims and operand_batching_dims in "
            "scatter op must be disjoint")),
          ("RepeatedScatterIndicesBatchingDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4),
               scatter_indices_batching_dims=(0, 1, 0)),
           "scatter_indices_batching_dims in scatter op must not repeat"),
          ("OutOfBoundsScatterIndicesBatchingDims", (50, 49, 48, 47, 46),
           (10, 9, 8, 7, 5), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4),
               scatter_indices_batching_dims=(0, 5)),
           ("Invalid scatter_indices_batching_dims set in scatter op; "
            "valid range")),
          ("IndexVectorDimInScatterIndicesBatchingDims",
           (50, 49, 48, 47, 46), (10, 9, 8, 7, 5),
           (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1, 2, 3, 4),
               scatter_indices_batching_dims=(0, 4)),
           ("Scatter op cannot have the index vector dimension as a "
            "batching dimension")),
          ("MismatchingNumberOfBatchingDims", (50, 49, 48, 47, 46, 45),
           (10, 9, 8, 7, 4), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(1, 2),
               scatter_dims_to_operand_dims=(1, 2, 3, 4),
               operand_batching_dims=(0,),
               scatter_indices_batching_dims=(0, 1)),
           ("Scatter op requires equal numbers of operand_batching_dims "
            "and scatter_indices_batching_dims")),
          ("MismatchingBatchingDimSizes", (10, 9, 48, 47, 46, 45),
           (10, 9, 8, 7, 2), (10, 9, 8, 7, 3, 2, 4),
           dict(
               update_window_dims=(4, 5, 6), inserted_window_dims=(2,),
               scatter_dims_to_operand_dims=(2, 3),
               operand_batching_dims=(0, 1),
               scatter_indices_batching_dims=(1, 0)),
           ("Scatter op requires operand batching dimensions and indices "
            "batching dimensions to have the same shape"))
       ]


def _gather_check(name, operand_shape, indices_shape, dnums, slice_sizes, msg):
    return Check(f"lax_test.py:testGatherShapeCheckingRule_{name}", "TypeError", msg,
                 lambda j: j.lax.gather(np.ones(operand_shape, np.int32),
                                        np.ones(indices_shape, np.int32),
                                        j.lax.GatherDimensionNumbers(**dnums), slice_sizes))


def _scatter_check(name, operand_shape, indices_shape, update_shape, dnums, msg):
    def call(j):
        def f(x, y):
            operand = j.lax.broadcast(x, operand_shape)
            updates = j.lax.broadcast(y, update_shape)
            return j.lax.scatter(operand, np.zeros(indices_shape, np.int32), updates,
                                 j.lax.ScatterDimensionNumbers(**dnums))
        return j.jax.eval_shape(f, np.int32(1), np.int32(1))
    return Check(f"lax_test.py:testScatterShapeCheckingRule_{name}", "TypeError", msg, call)


CHECKS += [_gather_check(*row) for row in _GATHER_ROWS]
CHECKS += [_scatter_check(*row) for row in _SCATTER_ROWS]

