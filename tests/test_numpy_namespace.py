"""refjax.numpy's public namespace, recorded when numpy.py became the package api/numpy/:
every name it had must still be there."""
import refjax.numpy as rnp

# sorted(n for n in dir(refjax.numpy) if not n.startswith("_")) before the split.
NAMES = [
    "Array", "ConcretizationTypeError", "ShapedArray", "Tracer", "abs", "absolute", "add",
    "all", "allclose", "amax", "amin", "angle", "any", "append", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argsort",
    "argwhere", "around", "array", "array_equal", "array_equiv", "array_split", "asarray",
    "astype", "atleast_1d", "atleast_2d", "atleast_3d", "average", "bfloat16", "bincount",
    "bitwise_and", "bitwise_invert", "bitwise_not", "bitwise_or", "bitwise_xor", "bool_",
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "builtins", "can_cast", "cbrt",
    "cdouble", "ceil", "clip", "column_stack", "complex128", "complex64", "complex_",
    "complexfloating", "compress", "concat", "concatenate", "conj", "conjugate", "convolve",
    "copy", "copysign", "corrcoef", "correlate", "cos", "cosh", "count_nonzero", "cov", "cross",
    "csingle", "cumprod", "cumproduct", "cumsum", "cumulative_prod", "cumulative_sum",
    "deg2rad", "degrees", "delete", "diag", "diag_indices", "diagflat", "diagonal", "diff",
    "digitize", "divide", "divmod", "dot", "double", "dsplit", "dstack", "dtype", "e",
    "ediff1d", "einsum", "empty", "empty_like", "equal", "euler_gamma", "ew", "exp", "exp2",
    "expand_dims", "expm1", "extract", "eye", "fill_diagonal", "finfo", "fix", "flatnonzero",
    "flip", "fliplr", "flipud", "float0", "float16", "float32", "float64", "float_",
    "float_power", "floating", "floor", "floor_divide", "fmax", "fmin", "fmod", "full",
    "full_like", "generic", "geomspace", "get_aval", "greater", "greater_equal", "heaviside",
    "hsplit", "hstack", "hypot", "identity", "iinfo", "imag", "indices", "inexact", "inf",
    "inner", "int16", "int32", "int64", "int8", "int_", "integer", "interp", "invert",
    "isclose", "iscomplex", "iscomplexobj", "isdtype", "isfinite", "isin", "isinf", "isnan",
    "isneginf", "isposinf", "isreal", "isrealobj", "isscalar", "issubdtype", "kron", "lax",
    "left_shift", "less", "less_equal", "lexsort", "linalg", "linspace", "log", "log10",
    "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logspace", "matmul", "matrix_transpose", "matvec", "max", "maximum", "mean",
    "median", "meshgrid", "mgrid", "min", "minimum", "mod", "modf", "moveaxis", "msort",
    "multiply", "nan", "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum",
    "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile",
    "nanstd", "nansum", "nanvar", "ndarray", "ndim", "negative", "newaxis", "nextafter",
    "nonzero", "not_equal", "np", "number", "ogrid", "ones", "ones_like", "operator", "outer",
    "pad", "percentile", "permute_dims", "pi", "piecewise", "polyval", "positive", "pow",
    "power", "prod", "promote_types", "ptp", "quantile", "rad2deg", "radians", "ravel",
    "ravel_multi_index", "real", "reciprocal", "remainder", "repeat", "reshape", "resize",
    "result_type", "right_shift", "rint", "roll", "rollaxis", "rot90", "round", "row_stack",
    "searchsorted", "select", "shape", "sign", "signbit", "signedinteger", "sin", "sinc",
    "single", "sinh", "size", "sort", "sort_complex", "split", "sqrt", "square", "squeeze",
    "st", "stack", "std", "subtract", "sum", "swapaxes", "take", "take_along_axis", "tan",
    "tanh", "tensordot", "tile", "trace", "transpose", "trapezoid", "tri", "tril",
    "tril_indices", "triu", "triu_indices", "true_divide", "trunc", "uint", "uint16", "uint32",
    "uint64", "uint8", "unique", "unique_values", "unravel_index", "unsignedinteger", "unstack",
    "var", "vdot", "vecdot", "vecmat", "vsplit", "vstack", "where", "zeros", "zeros_like",
]


def test_every_recorded_name_is_in_refjax_numpy():
    missing = [n for n in NAMES if not hasattr(rnp, n)]
    assert not missing, f"refjax.numpy lost: {missing}"
