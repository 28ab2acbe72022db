"""What the lax.linalg primitives share: the builder of a batched matrix primitive (rank,
batch and dtype checks as JAX's linalg_primitive, weak types, batching, layouts) and the
matrix helpers their lax functions and derivative rules are written with."""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms.batching import bdim_at_front
from . import elementwise as ew
from . import structural as st
from .gather import GatherDimensionNumbers, gather
from .linalg import Precision, dot_general
from .reductions import reduce_sum

# ---------------------------------------------------------------- accepted dtypes

# JAX names each accepted class by its NumPy type name in errors ("subtypes of floating,
# complexfloating"); each entry here is that name and the test of membership.
_CLASSES = {
    "floating": dtypes.is_float,
    "complexfloating": lambda d: dtypes.kind(d) == "c",
    "int32": lambda d: np.dtype(d) == np.int32,
}
FC = ("floating", "complexfloating")
F = ("floating",)
I32 = ("int32",)


def _check_dtypes(name, avals, accepted, require_same):
    for i, (aval, classes) in enumerate(zip(avals, accepted)):
        if aval.dtype == dtypes.float0 or not any(_CLASSES[c](aval.dtype) for c in classes):
            raise TypeError(f"{name} does not accept dtype {np.dtype(aval.dtype).name} at "
                            f"position {i}. Accepted dtypes at position {i} are subtypes of "
                            f"{', '.join(classes)}.")
    if require_same and len({a.dtype for a in avals}) > 1:
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(np.dtype(a.dtype).name for a in avals)}.")


# ---------------------------------------------------------------- shapes

def _split_batch(name, avals, ranks, supports_batching):
    """(batch shape, [core shape per operand]): each operand's last `rank` dims are its
    matrix (or vector) dims; the leading ones, the same for every operand, are the batch."""
    batches, cores = [], []
    for i, (aval, rank) in enumerate(zip(avals, ranks)):
        shape = tuple(aval.shape)
        if len(shape) < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={shape}")
        if not supports_batching and len(shape) != rank:
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                            f"shape={shape}")
        batches.append(shape[:len(shape) - rank])
        cores.append(shape[len(shape) - rank:])
    if len({len(b) for b in batches}) > 1:
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                        f"but got {[len(b) for b in batches]} batch dimensions for the inputs.")
    if len(set(batches)) > 1:
        # JAX says "Batching dimension 0_0 corresponds to two sizes" here (a ValueError).
        raise ValueError(f"All inputs to {name} must have the same batch dimensions, but got "
                         f"batch dimensions {batches} for inputs of shapes "
                         f"{[tuple(a.shape) for a in avals]}.")
    return batches[0], cores


# ---------------------------------------------------------------- the builder

def linalg_primitive(name, accepted, ranks, shape_rule, dtype_rule, multiple_results=False,
                     supports_batching=True, require_same=True):
    """A primitive on batches of matrices, as JAX's linalg_primitive: operand i has
    ranks[i] core dims after common leading batch dims. shape_rule(*core_shapes, **params)
    gives the core output shape (a list of them for multiple results), dtype_rule(*dtypes,
    **params) the output dtype(s); outputs are weak when every operand is. Batching moves
    the vmapped dims to the front; layouts keep the operands' batch entries."""
    prim = make_primitive(name, multiple_results)

    def abstract_eval(*avals, **params):
        batch, cores = _split_batch(name, avals, ranks, supports_batching)
        _check_dtypes(name, avals, accepted, require_same)
        weak = all(a.weak_type for a in avals)
        shapes, out_dtypes = shape_rule(*cores, **params), dtype_rule(*(a.dtype for a in avals),
                                                                      **params)
        if not multiple_results:
            return ShapedArray(batch + tuple(shapes), out_dtypes, weak_type=weak)
        return [ShapedArray(batch + tuple(s), d, weak_type=weak)
                for s, d in zip(shapes, out_dtypes)]

    prim.def_abstract_eval(abstract_eval)
    prim.def_sharding(_batch_sharding(ranks))
    if supports_batching:
        prim.def_batch(leading_batcher(prim))
    return prim


def leading_batcher(prim):
    """Batching for primitives with leading batch dims: every operand's vmapped dim goes to
    the front (unbatched operands are broadcast), the output's is at 0."""
    def rule(axis_data, vals, dims, **params):
        moved = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _batch_sharding(ranks):
    """Outputs keep the batch entries the operands agree on; matrix dims are replicated."""
    def rule(in_specs, in_avals, out_avals, **_):
        batch = {tuple(s[:len(s) - r]) for s, r in zip(in_specs, ranks)}
        nb = len(in_avals[0].shape) - ranks[0]
        entries = batch.pop() if len(batch) == 1 else (None,) * nb
        return [tuple(entries) + (None,) * (len(a.shape) - nb) for a in out_avals]
    return rule


# ---------------------------------------------------------------- dtypes

def real_dtype(dtype):
    """The real dtype of a complex one (others unchanged)."""
    return {np.dtype(np.complex64): dtypes.float32,
            np.dtype(np.complex128): dtypes.float64}.get(np.dtype(dtype), np.dtype(dtype))


def complex_dtype(dtype):
    """The complex dtype holding values of `dtype` (JAX's to_complex_dtype)."""
    wide = np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128), np.dtype(np.int64),
                               np.dtype(np.uint64))
    return dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64)


def inexact_dtype(dtype):
    """JAX's to_inexact_dtype: 64-bit integers to float64, other integers and bool to
    float32 (what `x / 2` gives for an integer x), inexact dtypes unchanged."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return dtype
    return dtypes.canonicalize_dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def cast(x, dtype):
    """x converted to `dtype` (nothing staged when it has it already)."""
    return x if get_aval(x).dtype == np.dtype(dtype) else ew.convert_element_type(x, dtype)


# ---------------------------------------------------------------- matrices

def shape(x):
    """x's shape (of any value refjax accepts)."""
    return tuple(get_aval(x).shape)


def rows(x, start, stop):
    """x[..., start:stop, :]."""
    return st.slice_in_dim(x, start, stop, axis=len(shape(x)) - 2)


def cols(x, start, stop):
    """x[..., start:stop]."""
    return st.slice_in_dim(x, start, stop, axis=len(shape(x)) - 1)


def mT(x):
    """x with its last two dims swapped."""
    n = len(shape(x))
    return st.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def is_complex(x):
    """Whether x has a complex dtype."""
    return dtypes.kind(get_aval(x).dtype) == "c"


def conj(x):
    """The complex conjugate (real values unchanged, without a conj)."""
    return ew.conj(x) if is_complex(x) else x


def mH(x):
    """The conjugate transpose of the last two dims."""
    return conj(mT(x))


def _tri_mask(x, k, lower):
    """rows + k >= cols (lower) or rows + k <= cols, broadcast to x's shape (staged in the
    order JAX stages it)."""
    n, m = shape(x)[-2:]
    rows = ew.add(st.broadcasted_iota(np.int32, (n, m), 0), np.int32(k))
    cols = st.broadcasted_iota(np.int32, (n, m), 1)
    mask = ew.ge(rows, cols) if lower else ew.le(rows, cols)
    nd = len(shape(x))
    return mask if nd == 2 else st.broadcast_in_dim(mask, shape(x), (nd - 2, nd - 1))


def pad_zeros(x, config):
    """x padded with zeros of its dtype (lax.pad keeps a Python scalar's own dtype)."""
    return st.pad(x, np.zeros((), get_aval(x).dtype), config)


def tril(x, k=0):
    """x with the entries above diagonal k zeroed."""
    return ew.select_n(_tri_mask(x, k, True), ew.full_like(x, 0), x)


def triu(x, k=0):
    """x with the entries below diagonal k zeroed."""
    return ew.select_n(_tri_mask(x, k, False), ew.full_like(x, 0), x)


def _diagonal_mask(n, m, batch=()):
    """True on the main diagonal of n x m matrices, broadcast over `batch`."""
    on = ew.eq(st.broadcasted_iota(np.int32, (n, m), 0), st.broadcasted_iota(np.int32, (n, m), 1))
    return st.broadcast_in_dim(on, tuple(batch) + (n, m), (len(batch), len(batch) + 1))


def eye(n, m, dtype, batch=()):
    """The identity (n x m, ones on the main diagonal), broadcast over `batch`."""
    return ew.convert_element_type(_diagonal_mask(n, m, batch), dtype)


def eye_like(x):
    """The identity of x's (batched, square) shape and dtype."""
    *batch, n, m = shape(x)
    return eye(n, m, get_aval(x).dtype, batch)


def matmul(a, b):
    """Batched a @ b over the last two dims (leading dims equal), at HIGHEST precision as
    JAX's derivative rules compute."""
    nb = len(shape(a)) - 2
    batch = tuple(range(nb))
    return dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)),
                       precision=Precision.HIGHEST)


def diagonal(x):
    """The main diagonal of the last two dims (length min(n, m))."""
    *batch, n, m = shape(x)
    k = min(n, m)
    square = st.slice(x, (0,) * len(shape(x)), tuple(batch) + (k, k))
    masked = ew.select_n(_diagonal_mask(k, k, batch), ew.full_like(square, 0), square)
    return reduce_sum(masked, (len(shape(x)) - 1,))


def diag_matrix(v):
    """The (batched) square matrix with diagonal v."""
    *batch, n = shape(v)
    spread = st.broadcast_in_dim(v, tuple(batch) + (n, n),
                                 tuple(range(len(batch))) + (len(batch) + 1,))
    return ew.select_n(_diagonal_mask(n, n, batch), ew.full_like(spread, 0), spread)


def symmetrize(x, name):
    """(x + x^H) / 2, with integer x then converted as JAX's `/` does; TypeError naming the
    operation `name` for a non-square x (JAX's add error there does not name it)."""
    if len(shape(x)) < 2 or shape(x)[-1] != shape(x)[-2]:
        raise TypeError(f"{name}: symmetrize_input=True needs a (batch of) square matrices, got "
                        f"shape {shape(x)}")
    s = ew.add(x, mH(x))
    s = cast(s, inexact_dtype(get_aval(s).dtype))
    return ew.div(s, 2)


def hermitian_from_triangle(t, lower):
    """The Hermitian matrix made of t's strictly `lower` (or upper) triangle and the real
    part of its diagonal: all that LAPACK's Hermitian routines read of a matrix, and so what
    they see of a tangent (t itself when t is Hermitian)."""
    strict = tril(t, -1) if lower else triu(t, 1)
    diag = diagonal(t)
    diag = cast(ew.real(diag), get_aval(diag).dtype) if is_complex(diag) else diag
    return ew.add(ew.add(strict, mH(strict)), diag_matrix(diag))


def take_rows(x, idx):
    """x[..., idx[..., i], :] for each i: rows of a batch of matrices picked by int indices."""
    *batch, m, k = shape(x)
    if m == 0:  # no rows to pick (and so no indices)
        return x
    nb = len(batch)
    idx = st.expand_dims(idx, (len(shape(idx)),))
    dnums = GatherDimensionNumbers(offset_dims=(nb + 1,), collapsed_slice_dims=(nb,),
                                   start_index_map=(nb,), operand_batching_dims=tuple(range(nb)),
                                   start_indices_batching_dims=tuple(range(nb)))
    return gather(x, idx, dnums, (1,) * (nb + 1) + (k,), mode="promise_in_bounds")
