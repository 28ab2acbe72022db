"""Array.traceback: the Python stack where a concrete Array was made, recorded as JAX's
jaxlib Traceback records it (code objects and instruction offsets, resolved when read)."""
import sys


class Frame:
    """One frame of a Traceback, as jaxlib's: its file, function, the function's first line
    and the line running; printed `function;file:line`."""

    __slots__ = ("file_name", "function_name", "function_start_line", "line_num")

    def __init__(self, code, lasti):
        self.file_name, self.function_start_line = code.co_filename, code.co_firstlineno
        self.function_name = getattr(code, "co_qualname", code.co_name)
        self.line_num = _line(code, lasti)

    def __repr__(self):
        return f"{self.function_name};{self.file_name}:{self.line_num}"


def _line(code, lasti):
    """The line of the instruction at offset lasti (co_lines: (start, end, line) ranges)."""
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line if line is not None else code.co_firstlineno
    return code.co_firstlineno


class Traceback:
    """The stack a value was made under, innermost frame first (jax.Array.traceback):
    `frames` resolves it, str() prints one `file:line (function)` per frame as JAX's."""

    __slots__ = ("_codes", "_lastis")

    def __init__(self, codes, lastis):
        self._codes, self._lastis = tuple(codes), tuple(lastis)

    @property
    def frames(self):
        """The frames, innermost first."""
        return [Frame(c, i) for c, i in zip(self._codes, self._lastis)]

    def raw_frames(self):
        """(code objects, instruction offsets), innermost first, as jaxlib's raw_frames()."""
        return list(self._codes), list(self._lastis)

    def __str__(self):
        return "\n".join(f"{f.file_name}:{f.line_num} ({f.function_name})" for f in self.frames)

    def __eq__(self, other):
        return isinstance(other, Traceback) and (self._codes, self._lastis) == \
            (other._codes, other._lastis)

    def __hash__(self):
        return hash((self._codes, self._lastis))


def capture(skip=2):
    """The current stack as a Traceback, leaving out this function and the `skip` - 1 frames
    under it (the constructor recording it). On every concrete Array's creation: one walk."""
    frame, codes, lastis = sys._getframe(skip), [], []
    while frame is not None:
        codes.append(frame.f_code)
        lastis.append(frame.f_lasti)
        frame = frame.f_back
    return Traceback(codes, lastis)
