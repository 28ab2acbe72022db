"""Spec entries of the reference primitives (core/primitives/state.py). They are effects on
a reference, which the generic suite cannot pass in or get back, so each sample makes a
reference from its operand, applies the primitive and returns what the reference holds
(and the value read or replaced): a pure function the suite runs eagerly against JAX, under
jit, jvp, transposition, vjp and vmap, on both backends. The effects themselves (writes
seen after a jit, references closed over, loops, errors) are tested by hand against JAX in
tests/test_refs.py."""
from hypothesis import strategies as st

from .base import ALL, COMPLEX, NUM, UNCHECKED, Arg, PrimitiveSpec, Signature, all_args, kind, shapes, weak_flag
from .elementwise import SMOOTH


def _elements(dtype, diff):
    return SMOOTH(dtype) if diff and kind(dtype) in "fc" else None


@st.composite
def _index_entry(draw, side):
    if side and draw(st.booleans()):
        return draw(st.integers(-side, side - 1))
    start = draw(st.one_of(st.none(), st.integers(-side - 1, side + 1)))
    stop = draw(st.one_of(st.none(), st.integers(-side - 1, side + 1)))
    if slice(start, stop).indices(side)[0] >= max(side, 1):
        start = None  # JAX refuses a slice starting past the end
    if not len(range(*slice(start, stop).indices(side))):
        return slice(start, stop)  # JAX fails on empty strided ones (refjax does not)
    return slice(start, stop, draw(st.sampled_from((None, 1, 2))))


@st.composite
def _index(draw, shape):
    """`...`, or integers and slices for a prefix of the dimensions (an ellipsis sometimes
    standing for the rest)."""
    if draw(st.integers(0, 4)) == 0:
        return ...
    n = draw(st.integers(0, len(shape)))
    entries = tuple(draw(_index_entry(side)) for side in shape[:n])
    return entries + (..., ) if draw(st.booleans()) else entries


def _indexed_shape(shape, index):
    from refjax.core.state import indexed_shape, make_indexer
    return indexed_shape(make_indexer(index, shape)[0], shape)


def _signature(with_value):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            shape = draw(shapes())
            index = draw(_index(shape))
            args = [Arg(shape, dtype, draw(weak_flag(dtype)), _elements(dtype, diff))]
            if with_value:
                args.append(Arg(_indexed_shape(shape, index), dtype, False,
                                _elements(dtype, diff)))
            return Signature(tuple(args), {"index": index})
        return sig()
    return signature


def _plain_signature(dtype, diff, weak=True):
    @st.composite
    def sig(draw):
        return Signature((Arg(draw(shapes()), dtype, weak and draw(weak_flag(dtype)),
                              _elements(dtype, diff)),), {})
    return sig()


def _strong_signature(dtype, diff):
    """Strongly typed operands: JAX's jit gives a value written to a reference and read back
    the weak type of the jit's input (it forwards it), refjax the reference's type."""
    return _plain_signature(dtype, diff, weak=False)


# ---------------------------------------------------------------- the samples, on refjax or JAX

def _new_ref(jax, x):
    return jax.freeze(jax.new_ref(x))


def _get(jax, x, index):
    return jax.new_ref(x)[index]


def _swap(jax, x, v, index):
    ref = jax.new_ref(x)
    old = jax.ref.swap(ref, index, v)
    return [old, jax.freeze(ref)]


def _addupdate(jax, x, v, index):
    ref = jax.new_ref(x)
    jax.ref.addupdate(ref, index, v)
    return [ref[...], jax.freeze(ref)]


def _freeze(jax, x):
    ref = jax.new_ref(x)
    ref[...] = x
    return jax.freeze(ref)


def _empty_ref(jax, x):
    ref = jax.empty_ref(jax.ShapeDtypeStruct(x.shape, x.dtype))
    ref[...] = x
    out = ref[...]
    jax.free_ref(ref)
    return out


def _on_refjax(sample):
    def apply(*args, **params):
        import refjax
        return sample(refjax, *args, **params)
    return apply


def _in_jax_jit(sample):
    """JAX's reference, under its jit: JAX evaluates no empty_ref eagerly."""
    def reference(jax, *args):
        return jax.jit(lambda *a: sample(jax, *a))(*args)
    return reference


def _spec(name, signature, sample, reference=None, notes="", dtypes=ALL + COMPLEX, **kw):
    return PrimitiveSpec(
        name=name, dtypes=dtypes, **kw, family="state", signature=signature,
        reference=reference or sample, apply=_on_refjax(sample), exact=True,
        diff_args=all_args, linear_args=all_args,
        notes=notes or "effects on a reference: the sample makes one from its operand and "
        "returns what it holds")


SPECS = [
    _spec("new_ref", _plain_signature, _new_ref),
    _spec("freeze", _plain_signature, _freeze),
    _spec("get", _signature(False), _get),
    _spec("swap", _signature(True), _swap),
    # JAX adds booleans with some indexers (`...`) and refuses them with others (a strided
    # slice: "add does not accept dtype bool"); refjax refuses them always
    _spec("addupdate", _signature(True), _addupdate, dtypes=NUM + COMPLEX,
          jax_dtype_errors={"bool": UNCHECKED}),
    _spec("empty_ref", _strong_signature, _empty_ref, _in_jax_jit(_empty_ref),
          notes="written before it is read: an empty reference's contents are unspecified"),
    _spec("free_ref", _strong_signature, _empty_ref, _in_jax_jit(_empty_ref),
          notes="the sample frees the reference after its last read"),
]
