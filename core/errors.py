"""The exceptions refjax raises where JAX raises its own classes (same names, same bases), and
the naming of errors at the API boundary."""
import functools
import inspect
import types


def describe(x):
    """'traced array with shape float32[3]', as JAX's tracer errors describe a value (with its
    varying manual axes inside shard_map: `float32[3]{V:x}`)."""
    aval = getattr(x, "aval", None)
    if aval is None:
        return repr(x)
    return f"traced array with shape {aval.str_short(short_dtypes=False)}"


def ambiguous_truth(size):
    """JAX's message for bool() of an array without exactly one element."""
    if size == 0:
        return ("The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                "that an array is not empty.")
    return ("The truth value of an array with more than one element is ambiguous. Use a.any() "
            f"or a.all() (it has {size} elements)")


class JAXTypeError(TypeError):
    """Base of refjax's tracer errors: they are TypeErrors, as in JAX."""


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where a concrete Python value is required."""

    def __init__(self, tracer, context=""):
        msg = (f"Abstract tracer value encountered where concrete value is expected: "
               f"{describe(tracer)}\n{context}\n"
               "The problem arose with a value computed from the arguments of a traced function. "
               "If it must be known at trace time, mark that argument static with "
               "`static_argnums` / `static_argnames` of jax.jit, or use jax.lax control flow "
               "(lax.cond, lax.while_loop) instead of Python control flow.")
        super().__init__(msg)


def conversion_context(fname):
    """The context ConcretizationTypeError gives for float()/int()/complex() of a tracer."""
    return (f"The problem arose with the `{fname}` function. If trying to convert the data type "
            f"of a value, try using `x.astype({fname})` or `jnp.array(x, {fname})` instead.")


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a traced value: Python control flow on a traced value."""

    def __init__(self, tracer):
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of {describe(tracer)}.\n"
            "Python control flow (`if`, `while`, `and`, `or`, `not`) cannot depend on a traced value. "
            "Use jax.lax.cond / jax.numpy.where, or mark the argument static with "
            "`static_argnums` / `static_argnames` of jax.jit.")


class TracerIntegerConversionError(JAXTypeError):
    """A traced value used as a Python index (operator.index), as in JAX not a subclass of
    ConcretizationTypeError."""

    def __init__(self, tracer):
        super().__init__(
            f"The __index__() method was called on {describe(tracer)}: a traced value cannot be "
            "used as a Python index, shape or size. Shapes must be static: pass the value as a "
            "static argument with `static_argnums` / `static_argnames`, or compute it from "
            "`x.shape`.")


class TracerArrayConversionError(JAXTypeError):
    """np.asarray (or any NumPy function) of a traced value."""

    def __init__(self, tracer):
        super().__init__(
            f"The numpy.ndarray conversion method __array__() was called on {describe(tracer)}. "
            "A traced value (under jit, grad, jvp, linearize, vmap, ...) cannot become a NumPy "
            "array: its dependency on the transformation would be lost. Use jax.numpy "
            "functions inside traced code instead of numpy ones.")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""


class JAXIndexError(IndexError):
    """An IndexError of JAX's own (jax.errors.JAXIndexError)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose value is traced: the result's shape would depend on it."""


class JaxprTypeError(TypeError):
    """An ill-typed jaxpr (jax.errors.JaxprTypeError): a bug in a rule or a transformation,
    reported with the jaxpr."""


class InconclusiveDimensionOperation(Exception):
    """JAX's error for a comparison of symbolic dimensions it cannot decide; refjax has no
    symbolic shapes, so it never raises it (the class is here for `except` clauses)."""


class ShardingTypeError(Exception):
    """A program whose sharding types (Explicit mesh axes) JAX rejects: conflicting or
    ambiguous operand shardings (as jax's core.ShardingTypeError, an Exception)."""


class JaxRuntimeError(RuntimeError):
    """A failure at run time of a computation (as jax.errors.JaxRuntimeError): a deleted
    or donated buffer used, a callback returning the wrong types."""


class TypePromotionError(ValueError):
    """Raised under jax_numpy_dtype_promotion='strict' for implicit promotion."""


class KeyReuseError(JAXTypeError):
    """A typed PRNG key used twice under jax_debug_key_reuse (core/key_reuse.py); its message
    ends, as JAX's, with the link to JAX's page on it."""

    def __init__(self, message):
        super().__init__(f"{message}\nSee https://docs.jax.dev/en/latest/errors.html"
                         "#jax.errors.KeyReuseError")


# ---------------------------------------------------------------- errors that name their operation

_NAMED = (TypeError, ValueError, IndexError, NameError, OverflowError, NotImplementedError)


def in_jax_words(error):
    """error marked to keep its message as it is (JAX's text, raised by a primitive another
    operation binds: naming_errors adds no name to it)."""
    error.jax_words = True
    return error


def naming_errors(fn, op):
    """fn, whose errors of the usual classes name `op` ("jnp.sum: axis 5 is out of bounds"):
    a message that does not mention the operation gets it as a prefix. The class, the other
    arguments and the traceback stay as they were."""
    short = op.rsplit(".", 1)[-1]

    @functools.wraps(fn)
    def named(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _NAMED as e:
            if hasattr(e, "unnamed_fails") and op.startswith("jnp."):
                # committed arguments on several devices, refused by a primitive: named by
                # this function's arguments, as JAX's jitted jnp functions name them
                from .sharding.device_sets import renamed
                raise renamed(e, short, _named_leaves(fn, args, kwargs)) from None
            if hasattr(e, "incompatible_devices") or hasattr(e, "jax_words"):
                raise
            # KeyReuseError names the operation consuming the key, in JAX's words.
            if e.args and isinstance(e.args[0], str) and short not in e.args[0] and \
                    not isinstance(e, KeyReuseError):
                e.args = (f"{op}: {e.args[0]}",) + e.args[1:]
            raise
    return named


def _named_leaves(fn, args, kwargs):
    """(name, value) of fn's array arguments passed as themselves: JAX's jnp functions taking
    sequences of arrays are no jits over them (their primitives name what they refuse)."""
    from . import pytree
    names = [n.removeprefix("argument ") for n in arg_names(fn, args, kwargs)]
    leaves = pytree.tree_leaves(tuple(args)) + pytree.tree_leaves(kwargs)
    return [(n, x) for n, x in zip(names, leaves) if "[" not in n]


def name_errors_in(namespace, prefix):
    """Wrap every public function of a module namespace (a dict) with naming_errors, as
    `prefix.name`: called once at the end of the API modules (jnp, lax, nn, random)."""
    for name, value in list(namespace.items()):
        if not name.startswith("_") and type(value) is types.FunctionType:
            namespace[name] = naming_errors(value, f"{prefix}.{name}")


def arg_names(fun, args, kwargs) -> list[str]:
    """How JAX names each leaf of (args, kwargs) in its errors: "argument b[0]" by fun's
    parameter names where the call binds to its signature, else "args[1][0]"; "kwargs['y']"."""
    from . import pytree  # core.pytree imports this module
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for path, _ in pytree.tree_flatten_with_path(tuple(args))[0]:
        i = path[0].idx
        names.append(f"argument {params[i]}{pytree.keystr(path[1:])}" if i < len(params)
                     else f"args{pytree.keystr(path)}")
    return names + [f"kwargs{pytree.keystr(p)}" for p, _ in pytree.tree_flatten_with_path(kwargs)[0]]


def bad_to_iterable(out):
    """JAX's message for a custom pytree node's to_iterable returning `out`."""
    what = "The to_iterable function for a custom PyTree node should return a (children, " \
        "aux_data) tuple"
    if isinstance(out, tuple) and len(out) == 2:
        return f"{what} where 'children' is iterable, got {out!r}"
    return f"{what}, got {out!r}"


def prefix_mismatch(what, prefix, tree, kind, path, detail):
    """JAX's message for a specification (in_axes, a sharding...) that is not a tree prefix of
    its value: the first mismatch, its kind ("different types") and key path."""
    return (f"{what} specification must be a tree prefix of the corresponding value; got "
            f"specification {prefix} for value tree {tree}.\n  Mismatch details (1 found):\n"
            f"  pytree structure error: {kind} at key path\n    {what}{path}\n  {detail}")
