"""jax.ref: mutable array references (Ref, AbstractRef) and the functions reading and
writing them."""
from ..core.primitives.state import (addupdate, empty_ref, free_ref, freeze, get, new_ref,
                                     set, swap)
from ..core.state import AbstractRef, Ref

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]
