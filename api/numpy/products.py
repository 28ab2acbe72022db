"""Products (matmul, dot, tensordot, einsum, ...), and trace."""
import builtins
import functools
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from ...core.primitives.reductions import constrain
from ...core.sharding_types import out_type
from .. import lax
from ..sharding import auto_axes
from .promotion import (array, astype, broadcast_to, moveaxis, promote_dtypes,
                        ravel, reshape, result_type, _arrays, _axis,
                        _move_to_end, _no_out,
                        _user_dtype, staged_as)
from .ufuncs import multiply, subtract
from .creation import diagonal, eye, zeros_like
from .indexing import where
from .reductions import sum


# ---------------------------------------------------------------- products

def matmul(a, b, /, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy matmul: 1-d operands are promoted, leading dims broadcast as batch dims. As in
    JAX, one dot_general on the operands (size-1 batch dims squeezed, not broadcast) whose
    result is transposed into place; the operands are not converted first."""
    a, b = _arrays("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {x.ndim}")
    k_a, k_b = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:  # JAX's error comes from dot_general, without the operands' shapes
        raise TypeError(f"matmul: contracting dimensions must agree, got shapes {a.shape} and "
                        f"{b.shape} (dimension {k_a} != {k_b})")
    dtype, weak = _product_dtype("matmul", (a, b), preferred_element_type)
    plan = _matmul_plan(a, b)
    a, b = st.squeeze(a, plan["a_squeeze"]), st.squeeze(b, plan["b_squeeze"])
    dims = (((a.ndim - 1,), (b.ndim - 1 - plan["b_is_mat"],)), (plan["a_batch"], plan["b_batch"]))
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=dtype,
                          out_sharding=out_sharding)  # before the permutation, as JAX's
    out = st.transpose(out, plan["perm"])
    if plan["both_squeeze"]:
        out = st.expand_dims(out, plan["both_squeeze"])
    return _as_product_dtype(out, dtype, weak)


def _matmul_plan(a, b):
    """How matmul lays its batch dimensions out (JAX's): a dimension only one operand has,
    or of size 1 in one operand, is a free dimension of the other; equal ones are batch
    dimensions of dot_general; `perm` puts the result's dimensions back in order."""
    a_mat, b_mat = a.ndim > 1, b.ndim > 1
    a_dims = a.shape[:-2] if a_mat else ()
    b_dims = b.shape[:-2] if b_mat else ()
    n = builtins.max(len(a_dims), len(b_dims))
    a_dims = (None,) * (n - len(a_dims)) + a_dims
    b_dims = (None,) * (n - len(b_dims)) + b_dims
    plan = dict(a_squeeze=[], b_squeeze=[], both_squeeze=[], a_batch=[], b_batch=[])
    idx_batch, idx_a, idx_b = [], [], []
    for i, (da, db) in enumerate(zip(a_dims, b_dims)):
        if da is None:
            idx_b.append(i)
        elif db is None:
            idx_a.append(i)
        elif da == 1 and db == 1:
            plan["a_squeeze"].append(len(idx_batch) + len(idx_a) + len(plan["a_squeeze"]))
            plan["b_squeeze"].append(len(idx_batch) + len(idx_b) + len(plan["b_squeeze"]))
            plan["both_squeeze"].append(i)
        elif da == 1:
            idx_b.append(i)
            plan["a_squeeze"].append(len(idx_batch) + len(idx_a) + len(plan["a_squeeze"]))
        elif db == 1:
            idx_a.append(i)
            plan["b_squeeze"].append(len(idx_batch) + len(idx_b) + len(plan["b_squeeze"]))
        elif da == db:
            plan["a_batch"].append(len(idx_batch) + len(idx_a))
            plan["b_batch"].append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {a.aval} and {b.aval}")
    idx_a += [n] if a_mat else []
    idx_b += [n + a_mat] if b_mat else []
    plan["perm"] = tuple(int(p) for p in np.argsort(idx_batch + idx_a + idx_b))
    plan.update(b_is_mat=b_mat, a_batch=tuple(plan["a_batch"]), b_batch=tuple(plan["b_batch"]))
    return plan


def _product_dtype(name, arrays, preferred_element_type):
    """The output dtype of a product and its weak type (as jnp.dot): the operands' promoted
    type, or the preferred one."""
    if preferred_element_type is None:
        return result_type(*arrays, return_weak_type_flag=True)
    return _user_dtype(preferred_element_type, name), False


def _as_product_dtype(out, dtype, weak):
    if (out.dtype, out.weak_type) == (dtype, weak):
        return out
    return ew.convert_element_type(out, dtype, weak_type=weak)


def _dot_general(a, b, dims, precision, dtype, weak, out_sharding=None):
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=dtype,
                          out_sharding=out_sharding)
    return _as_product_dtype(out, dtype, weak)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy dot: contracts a's last axis with b's second-to-last (or only) axis."""
    a, b = _arrays("dot", a, b)
    dtype, weak = _product_dtype("dot", (a, b), preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract = ((), ())
    else:
        contract = ((a.ndim - 1,), (builtins.max(b.ndim - 2, 0),))
    return _dot_general(a, b, (contract, ((), ())), precision, dtype, weak, out_sharding)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating a."""
    a, b = _arrays("vdot", a, b)
    if _dt.kind(a.dtype) == "c":
        a = ew.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot product along axis, broadcasting the other axes."""
    x1, x2 = _arrays("vecdot", x1, x2)
    if x1.shape[_axis(axis, x1.ndim)] != x2.shape[_axis(axis, x2.ndim)]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    x1, x2 = _move_to_end(x1, axis), _move_to_end(x2, axis)
    if _dt.kind(x1.dtype) == "c":
        x1 = ew.conj(x1)
    if preferred_element_type is not None:  # warned of as JAX's: by the dot it runs
        preferred_element_type = _user_dtype(preferred_element_type, "dot")
    return einsum("...i,...i->...", x1, x2, precision=precision,
                  preferred_element_type=preferred_element_type)


@staged_as("matvec")
def matvec(x1, x2, /):
    """Matrix-vector products, batched over leading axes."""
    x1, x2 = _arrays("matvec", x1, x2)
    return einsum("...ij,...j->...i", x1, x2)


@staged_as("vecmat")
def vecmat(x1, x2, /):
    """Vector-matrix products (conjugating the vector), batched over leading axes."""
    x1, x2 = _arrays("vecmat", x1, x2)
    if _dt.kind(x1.dtype) == "c":
        x1 = ew.conj(x1)
    return einsum("...i,...ij->...j", x1, x2)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contraction over the last axes of a and b."""
    a, b = _arrays("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a, b = astype(a, preferred_element_type), astype(b, preferred_element_type)
        return multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    """The outer product of the flattened arrays."""
    _no_out("outer", out)
    a, b = promote_dtypes(*_arrays("outer", a, b))
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Contraction of the last `axes` axes of a with the first of b, or of explicit axis
    lists ((a_axes), (b_axes))."""
    a, b = _arrays("tensordot", a, b)
    dtype, weak = _product_dtype("tensordot", (a, b), preferred_element_type)
    contract = _tensordot_axes(a, b, axes)
    return _dot_general(a, b, (contract, ((), ())), precision, dtype, weak, out_sharding)


def _tensordot_axes(a, b, axes):
    if type(axes) is int:
        if axes > builtins.min(a.ndim, b.ndim) or axes < 0:
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        return tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            return (_axis(ax1, a.ndim),), (_axis(ax2, b.ndim),)
        if isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(f"tensordot requires axes lists to have equal length, got "
                                f"{ax1} and {ax2}.")
            return tuple(_axis(i, a.ndim) for i in ax1), tuple(_axis(i, b.ndim) for i in ax2)
        raise TypeError(f"tensordot requires both axes lists to be either ints, tuples or "
                        f"lists, got {ax1} and {ax2}")
    raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                    "lists/tuples of ints.")


@staged_as("kron")
def kron(a, b):
    """The Kronecker product."""
    a, b = promote_dtypes(*_arrays("kron", a, b))
    if a.dtype == np.bool_:  # JAX multiplies with lax.mul, which refuses booleans
        raise TypeError("mul does not accept dtype bool at position 0. Accepted dtypes at "
                        "position 0 are subtypes of integer, floating, complexfloating.")
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_e = st.expand_dims(a, tuple(range(1, 2 * nd, 2)))
    b_e = st.expand_dims(b, tuple(range(0, 2 * nd, 2)))
    return reshape(multiply(a_e, b_e), tuple(x * y for x, y in zip(a.shape, b.shape)))


@staged_as("cross", static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors along the given axes."""
    a, b = promote_dtypes(*_arrays("cross", a, b))
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _move_to_end(a, axisa), _move_to_end(b, axisb)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return subtract(multiply(a[..., 0], b[..., 1]), multiply(a[..., 1], b[..., 0]))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2] if a.shape[-1] == 3 else zeros_like(a[..., 0])
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2] if b.shape[-1] == 3 else zeros_like(b[..., 0])
    c = array([subtract(multiply(a1, b2), multiply(a2, b1)),
               subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))])  # as JAX's
    return moveaxis(c, 0, axisc)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the offset diagonal (integers accumulate in the default int type, as sum)."""
    _no_out("trace", out)
    a, = _arrays("trace", a)
    if a.ndim >= 2 and _axis(axis1, a.ndim) == _axis(axis2, a.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    dtype = None if dtype is None else _user_dtype(dtype, "trace")
    if a.ndim < 2:
        return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)  # its error
    return _trace(a, operator.index(offset), _axis(axis1, a.ndim), _axis(axis2, a.ndim), dtype)


@staged_as("trace", static_argnums=(1, 2, 3, 4))
def _trace(a, offset, axis1, axis2, dtype):
    """trace's jit, as JAX's: the entries off the diagonal masked to zero, then summed."""
    shape = a.shape
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    on = eye(shape[axis1], shape[axis2], k=offset, dtype=_dt.bool_)
    return sum(where(on, a, zeros_like(a)), axis=(-2, -1), dtype=dtype)


# ---------------------------------------------------------------- einsum

def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation: repeated labels within an operand take diagonals, labels absent
    from the output are summed (reduce_sum) or contracted (dot_general, pairwise, smallest
    intermediate first), '...' broadcasts, and the implicit output is the sorted labels
    that appear once."""
    _no_out("einsum", out)
    if out_sharding is not None:
        return _einsum_laid_out(subscripts, operands, out_sharding, optimize=optimize,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_from_sublists(subscripts, operands)
    if not operands:
        raise ValueError("einsum: no operands were given")
    arrays = _arrays("einsum", *operands)
    dtype, weak = _product_dtype("einsum", arrays, preferred_element_type)
    arrays = [astype(x, dtype) for x in arrays]
    terms, output = _parse_einsum(subscripts, [x.ndim for x in arrays])
    sizes = _label_sizes(terms, arrays)
    ops = [_einsum_prepare(x, t, sizes) for x, t in zip(arrays, terms)]
    op = _einsum_contract(ops, output, sizes, precision, dtype)
    result = st.transpose(op.array, [op.labels.index(c) for c in output])
    return _as_product_dtype(result, dtype, weak)


def _einsum_laid_out(subscripts, operands, out_sharding, **options):
    """einsum with out_sharding=, as JAX's: computed with the mesh's Explicit axes made Auto
    (so no contraction is ambiguous), the result typed and laid out as asked; on Auto axes
    a constraint on the result."""
    run = functools.partial(einsum, subscripts, **options)
    direct = _single_contraction(subscripts, len(operands))
    if direct is not None and getattr(out_sharding, "spec", out_sharding).unreduced:
        return _einsum_unreduced(direct, operands, out_sharding, **options)
    if out_type(out_sharding, "einsum") is None:
        return constrain(run(*operands), out_sharding)
    return auto_axes(run, out_sharding=out_sharding)(*operands)


def _single_contraction(subscripts, count):
    """dot_general's dimension numbers when `subscripts` is one contraction of two operands
    with distinct labels whose result labels are in dot_general's order, else None."""
    if count != 2 or not isinstance(subscripts, str) or "." in subscripts or \
            "->" not in subscripts:
        return None
    ins, out = subscripts.replace(" ", "").split("->")
    lhs, _, rhs = ins.partition(",")
    if any(len(set(t)) != len(t) for t in (lhs, rhs, out)) or (set(lhs) ^ set(rhs)) - set(out):
        return None
    batch = [c for c in lhs if c in rhs and c in out]
    contract = [c for c in lhs if c in rhs and c not in out]
    if batch + [c for c in lhs if c not in rhs] + [c for c in rhs if c not in lhs] != list(out):
        return None
    pos = lambda t, labels: tuple(t.index(c) for c in labels)  # noqa: E731
    return (pos(lhs, contract), pos(rhs, contract)), (pos(lhs, batch), pos(rhs, batch))


def _einsum_unreduced(dims, operands, out_sharding, *, optimize, precision,
                      preferred_element_type):
    """A single contraction with an unreduced out_sharding=: JAX hands it to its
    dot_general, whose result on each device is that device's partial sum."""
    arrays = _arrays("einsum", *operands)
    dtype, weak = _product_dtype("einsum", arrays, preferred_element_type)
    a, b = [astype(x, dtype) for x in arrays]
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=dtype,
                          out_sharding=out_sharding)
    return _as_product_dtype(out, dtype, weak)


class _Labeled:
    """An einsum operand with one label per axis."""

    def __init__(self, array, labels):
        self.array, self.labels = array, list(labels)


_ELLIPSIS_LABELS = [chr(c) for c in range(0x3b1, 0x3c9)]  # Greek letters, never subscripts


def _parse_einsum(subscripts, ndims):
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"Number of einsum subscripts, {len(terms)}, must be equal to the "
                         f"number of operands, {len(ndims)}.")
    n_ell = builtins.max([nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims)
                          if "..." in t], default=0)
    ell = _ELLIPSIS_LABELS[:builtins.max(n_ell, 0)]
    terms = [_expand_term(t, nd, ell, i) for i, (t, nd) in enumerate(zip(terms, ndims))]
    if arrow:
        output = _expand_output(rhs, ell, terms)
    else:
        counts = {c: builtins.sum(t.count(c) for t in terms) for t in terms for c in t}
        output = [c for c in ell if c in counts] + sorted(
            c for c, k in counts.items() if k == 1 and c not in ell)
    return terms, output


def _expand_term(term, ndim, ell, i):
    if "..." in term:
        before, _, after = term.partition("...")
        k = ndim - len(before) - len(after)
        if k < 0 or "." in before + after:
            raise ValueError(f"Einstein sum subscript '{term}' does not contain the correct "
                             f"number of indices for operand {i}.")
        labels = list(before) + ell[len(ell) - k:] + list(after)
    else:
        labels = list(term)
    if len(labels) != ndim:
        raise ValueError(f"Einstein sum subscript '{term}' does not contain the correct "
                         f"number of indices for operand {i}.")
    for c in labels:
        if c not in ell and not c.isalpha():
            raise ValueError(f"Character '{c}' is not a valid symbol in einsum subscripts.")
    return labels


def _expand_output(rhs, ell, terms):
    before, dots, after = rhs.partition("...")
    output = list(before) + (ell if dots else []) + list(after)
    seen = {c for t in terms for c in t}
    for c in output:
        if c not in seen:
            raise ValueError(f"Output character '{c}' did not appear in the input")
    if len(set(output)) != len(output):
        raise ValueError(f"Output subscripts '{rhs}' contain a repeated label")
    return [c for c in output if c not in ell or c in seen]


def _label_sizes(terms, arrays):
    sizes = {}
    for i, (t, x) in enumerate(zip(terms, arrays)):
        for c, d in zip(t, x.shape):
            prev = sizes.get(c, 1)
            if d != 1 and prev != 1 and d != prev:
                raise ValueError(f"Size of label '{c}' for operand {i} ({d}) does not match "
                                 f"previous terms ({prev}).")
            sizes[c] = builtins.max(prev, d) if prev != 0 and d != 0 else 0
    return sizes


def _einsum_prepare(x, labels, sizes):
    """Diagonals for repeated labels, then size-1 axes broadcast to the label's size."""
    labels = list(labels)
    for c in list(dict.fromkeys(labels)):
        while labels.count(c) > 1:
            i = labels.index(c)
            j = labels.index(c, i + 1)
            x = diagonal(x, 0, i, j)
            labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [c]
    target = tuple(sizes[c] for c in labels)
    if x.shape != target:
        x = broadcast_to(x, target)
    return _Labeled(x, labels)


def _sum_labels(op, keep):
    """op with the axes whose labels are not in `keep` summed out."""
    axes = tuple(i for i, c in enumerate(op.labels) if c not in keep)
    if not axes:
        return op
    reducer = lax.reduce_or if op.array.dtype == _dt.bool_ else lax.reduce_sum
    return _Labeled(reducer(op.array, axes), [c for c in op.labels if c in keep])


def _einsum_contract(ops, output, sizes, precision, dtype):
    while len(ops) > 1:
        i, j = _cheapest_pair(ops, output, sizes)
        rest = [op for k, op in enumerate(ops) if k not in (i, j)]
        ops = rest + [_contract_pair(ops[i], ops[j], rest, output, precision, dtype)]
    return _sum_labels(ops[0], set(output))


def _needed(rest, output):
    return set(output).union(*(op.labels for op in rest))


def _cheapest_pair(ops, output, sizes):
    best = None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            rest = [op for k, op in enumerate(ops) if k not in (i, j)]
            keep = _needed(rest, output)
            labels = set(ops[i].labels) ^ set(ops[j].labels) | (
                set(ops[i].labels) & set(ops[j].labels) & keep)
            cost = int(np.prod([sizes[c] for c in labels if c in keep], dtype=np.int64))
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return best[1], best[2]


def _contract_pair(a, b, rest, output, precision, dtype):
    keep = _needed(rest, output)
    a = _sum_labels(a, keep | set(b.labels))
    b = _sum_labels(b, keep | set(a.labels))
    shared = [c for c in a.labels if c in b.labels]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    positions = lambda op, labels: tuple(op.labels.index(c) for c in labels)  # noqa: E731
    dims = ((positions(a, contract), positions(b, contract)),
            (positions(a, batch), positions(b, batch)))
    out = lax.dot_general(a.array, b.array, dims, precision=precision, preferred_element_type=dtype)
    labels = batch + [c for c in a.labels if c not in shared] + \
        [c for c in b.labels if c not in shared]
    return _Labeled(out, labels)


def _einsum_from_sublists(first, rest):
    """The interleaved form einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])."""
    args = (first,) + tuple(rest)
    out = args[-1] if len(args) % 2 else None
    args = args[:-1] if len(args) % 2 else args
    to_str = lambda sub: "".join("..." if s is Ellipsis else _sublist_char(s) for s in sub)
    spec = ",".join(map(to_str, args[1::2])) + ("" if out is None else "->" + to_str(out))
    return spec, args[0::2]


def _sublist_char(s):
    s = operator.index(s)
    if not 0 <= s < 52:
        raise ValueError(f"einsum sublist entries must be in [0, 52), got {s}")
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[s]
