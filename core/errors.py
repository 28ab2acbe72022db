"""The exceptions refjax raises where JAX raises its own classes."""


class JAXTypeError(TypeError):
    """Base of refjax's tracer errors: they are TypeErrors, as in JAX."""


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where a concrete Python value is required."""

    def __init__(self, tracer, context=""):
        msg = (f"Abstract tracer value encountered where concrete value is expected: {tracer}\n"
               f"{context}\n"
               "The problem arose with a value computed from the arguments of a traced function. "
               "If it must be known at trace time, mark that argument static with "
               "`static_argnums` / `static_argnames` of jax.jit, or use jax.lax control flow "
               "(lax.cond, lax.while_loop) instead of Python control flow.")
        super().__init__(msg)


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a traced value: Python control flow on a traced value."""

    def __init__(self, tracer):
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of traced array with shape {tracer.aval.str_short()}.\n"
            "Python control flow (`if`, `while`, `and`, `or`, `not`) cannot depend on a traced value. "
            "Use jax.lax.cond / jax.numpy.where, or mark the argument static with "
            "`static_argnums` / `static_argnames` of jax.jit.")


class TracerIntegerConversionError(ConcretizationTypeError):
    """int()/index of a traced value, e.g. a traced value used as a shape or an index."""

    def __init__(self, tracer):
        JAXTypeError.__init__(
            self,
            f"Attempted to convert a traced array with shape {tracer.aval.str_short()} to a Python "
            "integer (e.g. used as a shape, a size or a Python index). Shapes must be static: "
            "pass the value as a static argument with `static_argnums` / `static_argnames`, "
            "or compute it from `x.shape`.")


class TracerArrayConversionError(JAXTypeError):
    """np.asarray of a traced value."""

    def __init__(self, tracer):
        JAXTypeError.__init__(
            self,
            f"The numpy.ndarray conversion method __array__() was called on a traced array "
            f"with shape {tracer.aval.str_short()}. Use jax.numpy functions inside traced code "
            "instead of numpy ones.")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""


class TypePromotionError(ValueError):
    """Raised under jax_numpy_dtype_promotion='strict' for implicit promotion."""


class KeyReuseError(RuntimeError):
    """Reserved: random keys used twice (not checked by default, as in JAX)."""
