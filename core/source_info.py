"""Source information of staged equations: the user's line that bound each primitive (the
first frame outside refjax), as JAX records it for print_saved_residuals and errors.
Re-binding an equation (partial evaluation, transformation of a jaxpr) keeps its source."""
import contextlib
import functools
import os
import sys
import threading
from typing import NamedTuple

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Transform(NamedTuple):
    """A transformation in a name stack (jvp, transpose): it wraps the name after it, as
    JAX's (`jvp(outer)`, `transpose(jvp())`)."""

    name: str


class SourceInfo:
    """The user's frame that bound a primitive, resolved to file:line:column (function) only
    when asked (capturing it is on every staged equation's path). Its name stack: the
    jax.named_scope names and transformations open when it was bound, from where the jaxpr
    holding it began (JAX's relative name stack). An internal trace's equation may have a name
    stack and no frame (`code` None: falsy, summarized as unknown)."""

    __slots__ = ("code", "lasti", "line", "name_stack")

    def __init__(self, code, lasti, line, name_stack=()):
        self.code, self.lasti, self.line = code, lasti, line
        self.name_stack = name_stack

    def __bool__(self):
        return self.code is not None

    @property
    def file(self):
        return self.code.co_filename

    @property
    def function(self):
        return getattr(self.code, "co_qualname", self.code.co_name)

    @property
    def column(self):
        for start, _, col, _ in _positions(self.code, self.lasti):
            return col or 0
        return 0

    def summarize(self):
        if self.code is None:
            return "<unknown>"
        return f"{self.file}:{self.line}:{self.column} ({self.function})"

    def __repr__(self):
        return f"SourceInfo({self.summarize()})"


class _Override(threading.local):
    info = None
    name_stack = ()


_override = _Override()
_internal = {}  # code object -> whether it is refjax's own (frames to look past)


def _classify(code):
    path = code.co_filename
    hit = _internal[code] = internal_file(path) or path.startswith("<frozen")
    return hit


def internal_file(path):
    """Whether `path` is refjax's own source (its tests aside): the frames jax.debug.breakpoint
    hides, as JAX hides its own."""
    return path.startswith(_ROOT) and _TESTS not in path[len(_ROOT) - 1:]


_TESTS = os.sep + "tests" + os.sep


def current(base=()):
    """The source of the primitive being bound: the equation being re-bound, or the first
    frame outside refjax (None if there is none), with the name stack beyond `base` (the
    stack when the jaxpr being staged began)."""
    info = _override.info
    if info is not None:
        return info
    frame, internal = sys._getframe(1), _internal
    while frame is not None:
        code = frame.f_code
        hit = internal.get(code)
        if not (_classify(code) if hit is None else hit):
            return SourceInfo(code, frame.f_lasti, frame.f_lineno, _relative(base))
        frame = frame.f_back
    return None


def user_stacklevel():
    """The stacklevel for warnings.warn, called from the function calling this one, that names
    the first frame outside refjax: the user's line, as JAX's warnings name it."""
    frame, level, internal = sys._getframe(1), 1, _internal
    while frame is not None:
        hit = internal.get(frame.f_code)
        if not (_classify(frame.f_code) if hit is None else hit):
            return level
        frame, level = frame.f_back, level + 1
    return 1


def rebound(base=()):
    """The source of an equation being re-bound, if any (no look-up of the user's line); else
    only the name stack beyond `base`, when there is one."""
    info = _override.info
    if info is not None:
        return info
    stack = _relative(base)
    return SourceInfo(None, 0, 0, stack) if stack else None


def _relative(base):
    stack = _override.name_stack
    return stack[len(base):] if stack[:len(base)] == base else stack


def name_stack():
    """The name stack open now (named scopes and transformations)."""
    return _override.name_stack


@contextlib.contextmanager
def _pushed(entries):
    previous = _override.name_stack
    _override.name_stack = previous + entries
    try:
        yield
    finally:
        _override.name_stack = previous


def stack_of(info, transform=None):
    """Context: bind an equation's transposition under the names it was staged in: the
    current stack, then `transform` (a top-level transpose's), then the equation's."""
    extra = () if transform is None else (Transform(transform),)
    return _pushed(extra + (info.name_stack if info is not None else ()))


def transformed(name):
    """Context: stage the equations of a transformation of the user's function (jvp) under
    Transform(name) in their name stack, as JAX's."""
    return _pushed((Transform(name),))


def render(stack):
    """A name stack's names as JAX prints them: a transformation wraps the name after it."""
    names = []
    for elem in reversed(stack):
        if type(elem) is not Transform:
            names.append(elem)
        elif names:
            names[-1] = f"{elem.name}({names[-1]})"
        else:
            names.append(f"{elem.name}()")
    return names[::-1]


_positions_of = {}  # code object -> its instructions' (line, end line, column, end column)


def _positions(code, lasti):
    positions = _positions_of.get(code)
    if positions is None:
        positions = _positions_of[code] = list(getattr(code, "co_positions", lambda: [])())
    return positions[lasti // 2:lasti // 2 + 1]


def set_rebinding(info):
    """Make primitives bound from now on take `info` as their source (re-binding an equation
    keeps the user's line it came from); returns the previous setting, to restore."""
    previous = _override.info
    if info is not None:
        _override.info = info
    return previous


def restore(previous):
    _override.info = previous


@contextlib.contextmanager
def named_scope(name):
    """Context manager adding `name` to the name stack recorded with every equation staged
    inside it (jax.named_scope; `eqn.source_info.name_stack`)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    with _pushed((name,)):
        yield


def named_call(fun, *, name=None):
    """fun, with the equations it stages recorded under the name `name` (by default fun's
    name) in their name stack, as jax.named_call."""
    scope = name if name is not None else getattr(fun, "__name__", "<unnamed>")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named
