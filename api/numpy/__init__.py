"""refjax.numpy: jax.numpy's functions, built on the lax primitives with NumPy's promotion."""
# The implementation is split by topic into modules, each building on those before it:
#   promotion <- type_predicates, ufuncs <- creation <- indexing <- reductions <- quantiles
#   <- manipulation <- sorting, products <- maths
# (exceptions, imported inside the function: two ufuncs' creation.zeros_like, nonzero's
# reductions and argwhere's manipulation.vstack). This file
# re-exports exactly jnp's public names: the helpers the modules share stay in them.

from .promotion import (  # noqa: F401
    array, asarray, astype, atleast_1d, atleast_2d, atleast_3d, bfloat16, bool_,
    broadcast_arrays, broadcast_shapes, broadcast_to, cdouble, complex128, complex64, complex_,
    complexfloating, csingle, double, dtype, e, euler_gamma, finfo, float0, float16, float32,
    float64, float_, floating, generic, iinfo, inexact, inf, int16, int32, int64, int8, int_,
    integer, issubdtype, moveaxis, nan, ndarray, ndim, newaxis, number, pi, promote_types,
    ravel, reshape, result_type, shape, signedinteger, single, size, squeeze, stack, transpose,
    uint, uint16, uint32, uint64, uint8, unsignedinteger)
from .type_predicates import can_cast, iscomplexobj, isdtype, isrealobj, isscalar  # noqa: F401
from .ufuncs import (  # noqa: F401
    abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around,
    bitwise_and, bitwise_invert, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, conj, conjugate,
    cos, cosh, deg2rad, degrees, divide, equal, exp, exp2, expm1, fix, float_power, floor,
    floor_divide, fmod, greater, greater_equal, imag, invert, isfinite, isinf, isnan, isneginf,
    isposinf, left_shift, less, less_equal, log, log10, log1p, log2, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter, not_equal,
    positive, pow, power, rad2deg, radians, real, reciprocal, remainder, right_shift, rint, round,
    sign, signbit, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc)
from .creation import (  # noqa: F401
    arange, copy, diag, diag_indices, diagflat, diagonal, empty, empty_like, eye, full, full_like,
    geomspace, identity, indices, linspace, logspace, meshgrid, mgrid, ogrid, ones, ones_like, tri,
    tril, tril_indices, triu, triu_indices, zeros, zeros_like)
from .indexing import (  # noqa: F401
    argwhere, clip, compress, extract, flatnonzero, nonzero, piecewise, ravel_multi_index, select,
    take, take_along_axis, unravel_index, where)
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumproduct, cumsum,
    cumulative_prod, cumulative_sum, max, mean, min, nanargmax, nanargmin, nancumprod,
    nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
    nansum, nanvar, prod, ptp, std, sum, var)
from .quantiles import (  # noqa: F401
    median, nanmedian, nanpercentile, nanquantile, percentile, quantile)
from .manipulation import (  # noqa: F401
    append, array_split, column_stack, concat, concatenate, delete, dsplit, dstack, expand_dims,
    fill_diagonal, flip, fliplr, flipud, hsplit, hstack, matrix_transpose, pad, permute_dims,
    repeat, resize, roll, rollaxis, rot90, row_stack, split, swapaxes, tile, unstack, vsplit,
    vstack)
from .sorting import (  # noqa: F401
    argsort, bincount, digitize, isin, lexsort, msort, searchsorted, sort, sort_complex)
from .setops import (  # noqa: F401
    intersect1d, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts, unique_inverse,
    unique_values)
from .products import (  # noqa: F401
    cross, dot, einsum, inner, kron, matmul, matvec, outer, tensordot, trace, vdot, vecdot,
    vecmat)
from .maths import (  # noqa: F401
    allclose, angle, array_equal, array_equiv, convolve, copysign, corrcoef, correlate, cov, diff,
    divmod, ediff1d, fmax, fmin, heaviside, hypot, interp, isclose, iscomplex, isreal, logaddexp,
    logaddexp2, modf, nan_to_num, polyval, sinc, trapezoid)
from .numbers import (  # noqa: F401
    acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_count, bitwise_left_shift,
    bitwise_right_shift, fabs, frexp, gcd, i0, lcm, ldexp, spacing)
from .index_tricks import (  # noqa: F401
    c_, diag_indices_from, fromfunction, index_exp, ix_, mask_indices, r_, s_, tril_indices_from,
    triu_indices_from, vectorize)
from .polynomial import (  # noqa: F401
    bartlett, blackman, hamming, hanning, kaiser, poly, polyadd, polyder, polydiv, polyint, polymul,
    polysub, trim_zeros, vander)
from .editing import (  # noqa: F401
    apply_along_axis, apply_over_axes, argpartition, block, choose, insert, partition, place, put,
    put_along_axis)
from .differences import gradient, packbits, unpackbits, unwrap  # noqa: F401
from .histograms import (  # noqa: F401
    histogram, histogram2d, histogram_bin_edges, histogramdd)
from .extras import (  # noqa: F401
    ComplexWarning, array_repr, array_str, bool, character, einsum_path, flexible, float4_e2m1fn,
    float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn,
    float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, from_dlpack, frombuffer, fromfile,
    fromiter, fromstring, get_printoptions, int1, int2, int4, iterable, load, object_, printoptions,
    save, savez, set_printoptions, uint1, uint2, uint4)
# The binary ufuncs JAX exposes as jnp.ufunc objects (with reduce, accumulate, at, outer).
from .ufunc_objects import (  # noqa: F401,F811
    add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp, logaddexp2, logical_and,
    logical_or, logical_xor, maximum, minimum, multiply, negative, subtract, ufunc)
from .array_api import __array_api_version__, __array_namespace_info__  # noqa: F401
from . import linalg  # noqa: F401,E402  (jnp.linalg, a submodule as in JAX)
from .polyfit import polyfit, roots  # noqa: F401,E402

# Names the single-module refjax.numpy had at module level (its own imports); kept so the
# namespace is unchanged.
import builtins  # noqa: F401
import operator  # noqa: F401

import numpy as np  # noqa: F401

from ...core.array import BaseArray as Array  # noqa: F401
from ...core.avals import ShapedArray  # noqa: F401
from ...core.errors import ConcretizationTypeError  # noqa: F401
from ...core.trace import Tracer, get_aval  # noqa: F401
from ...core.primitives import elementwise as ew  # noqa: F401
from ...core.primitives import structural as st  # noqa: F401
from .. import lax  # noqa: F401

# The submodules are the implementation, not part of jnp: out of the namespace (they stay
# importable, e.g. `from refjax.api.numpy.indexing import getitem`).
del promotion, ufuncs, creation, indexing, reductions  # noqa: F821
del manipulation, sorting, products, maths, numbers, index_tricks, setops, polynomial  # noqa: F821
del editing, differences, histograms, extras, array_api, ufunc_objects  # noqa: F821

from . import fft  # noqa: E402  (jnp.fft: a submodule, as in JAX)

from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "jnp")  # errors raised below a public function name it
