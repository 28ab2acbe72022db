"""LeadingAxis: len() and iteration over the leading axis, shared by Array, Tracer and keys."""


class LeadingAxis:
    """len(x) and iter(x) along the first dimension; 0-d values raise TypeError, as in JAX.
    Subclasses provide `shape` and `__getitem__`; `_kind` names them in the message."""

    __slots__ = ()
    _kind = "array"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError(f"iteration over a 0-d {self._kind}")
        return (self[i] for i in range(self.shape[0]))
