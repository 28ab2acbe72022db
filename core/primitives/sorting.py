"""The sort primitive (lexicographic over num_keys operands, NaNs last) with all its rules."""
import operator

from .. import dtypes
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front
from . import structural as st

sort_p = make_primitive("sort", multiple_results=True)


@sort_p.def_abstract_eval
def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
    if not avals:
        raise TypeError("sort requires at least one operand")
    if any(a.shape != avals[0].shape for a in avals):
        raise TypeError(f"Arguments to sort must have equal shapes, got: "
                        f"{' '.join(str(a.shape) for a in avals)}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands {len(avals)}")
    if not 0 <= dimension < avals[0].ndim:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape "
                         f"{avals[0].shape}")
    if any(a.dtype == dtypes.float0 for a in avals):
        raise TypeError("sort does not accept dtype float0 (the tangent type of integer values)")
    return list(avals)


def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"sort: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along `dimension`; NaNs go last and -0.0 equals 0.0. Given a tuple or list of
    arrays, sorts them all by the first num_keys (lexicographically) and returns a tuple."""
    if isinstance(operand, (tuple, list)):
        if not operand:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = _canonicalize_axis(dimension, len(get_aval(operand[0]).shape))
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable),
                                 num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = _canonicalize_axis(dimension, len(get_aval(operand).shape))
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension` and apply the same permutation to `values`."""
    dim = _canonicalize_axis(dimension, len(get_aval(keys).shape))
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


def _has_tangent(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """Tangents are sorted as extra non-key operands behind the keys, so they get the primals'
    permutation. A separate sort for the primals keeps them off the linear (tangent) side."""
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = sort_p.bind(*primals, **params)
    live = [i for i, t in enumerate(tangents) if _has_tangent(t)]
    sorted_tangents = sort_p.bind(*primals[:num_keys], *[tangents[i] for i in live],
                                  **params)[num_keys:]
    tangents_out = [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    for i, t in zip(live, sorted_tangents):
        tangents_out[i] = t
    return outs, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    if any(ad.is_undefined_primal(k) for k in operands[:num_keys]):
        raise ValueError("sort is not linear in its keys (the first num_keys operands); it can "
                         "only be transposed with respect to the other operands")
    keys = operands[:num_keys]
    iota = st.broadcasted_iota(dtypes.int32, get_aval(keys[0]).shape, dimension)
    perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)[-1]
    return [_unpermute(perm, ct, x, dimension) if ad.is_undefined_primal(x) else None
            for x, ct in zip(operands, cts)]


def _unpermute(perm, ct, x, dimension):
    """Apply the inverse of `perm` (out[j] = in[perm[j]]) to ct: sort ct by perm."""
    if type(ct) is Zero:
        return Zero(x.aval)
    return sort_p.bind(perm, ct, dimension=dimension, is_stable=True, num_keys=1)[1]


def _sort_batch(axis_data, vals, dims, *, dimension, **params):
    xs = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims)]
    outs = sort_p.bind(*xs, dimension=dimension + 1, **params)
    return outs, [0] * len(outs)


sort_p.def_jvp(_sort_jvp)
sort_p.def_transpose(_sort_transpose)
sort_p.def_batch(_sort_batch)
