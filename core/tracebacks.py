"""Array.traceback: the Python stack where a concrete Array was made, recorded as JAX's
jaxlib Traceback records it (code objects and instruction offsets, resolved when read), by a
walk in Python or by a native recorder a backend installs."""
import functools
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
    under it (the constructor recording it): one walk over the frames in Python."""
    frame, codes, lastis = sys._getframe(skip), [], []
    while frame is not None:
        codes.append(frame.f_code)
        lastis.append(frame.f_lasti)
        frame = frame.f_back
    return Traceback(codes, lastis)


# What an Array's constructor calls (no argument) to record where it is being made: the
# Python walk without its own frame and the constructor's, or a native recorder
# (`use_native`): each concrete Array's creation pays it, so it is a module attribute,
# read at each call.
record = functools.partial(capture, 2)


def use_native(get_traceback):
    """Record stacks with a native `get_traceback()` returning an object whose raw_frames()
    are the (code objects, offsets) of the stack from the constructor's frame outwards
    (jaxlib's Traceback.get_traceback, ~10x cheaper than the Python walk: the xla backend
    installs it); what `resolve` shows is the same."""
    global record
    record = get_traceback


def resolve(recorded):
    """The Traceback of what `record` gave (a native stack without the constructor's frame,
    read only now); None stays None."""
    if recorded is None or type(recorded) is Traceback:
        return recorded
    codes, lastis = recorded.raw_frames()
    return Traceback(codes[1:], lastis[1:])
