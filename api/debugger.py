"""jax.debug.breakpoint: JAX's command-line debugger (jdb), entered when the program runs, on
the frames above the call with the runtime values of their traced locals."""
import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback

from ..core import pytree, source_info
from ..core.avals import ShapeDtypeStruct
from ..core.primitives.callbacks import pure_callback
from ..core.primitives.debugging import debug_callback
from ..core.trace import Tracer, get_aval
from ..core.transforms.jvp import stop_gradient


class _CantFlatten:
    """Stands for a local that is no pytree (a dict whose keys do not sort), shown as JAX's."""

    def __repr__(self):
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """A Python frame as the debugger shows it: its file and line, the source of its function
    (`offset`: the current line's index in it; None without source) and its locals."""
    filename: str
    locals: dict
    globals: dict
    code_context: list
    source: list
    lineno: int
    offset: int | None

    @classmethod
    def from_frame(cls, frame):
        """The DebuggerFrame of a live Python frame (its locals as they are now)."""
        info = inspect.getframeinfo(frame, context=1)
        source, offset = _source(frame, info.lineno)
        return cls(info.filename, dict(frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)


def _source(frame, lineno):
    """(the lines of the frame's function or module, the index of `lineno` in them), or
    ([], None) where Python has no source for it (eval'd code, the interactive prompt)."""
    try:
        lines, start = inspect.getsourcelines(frame)
    except OSError:
        return [], None
    source = "".join(lines).split("\n")
    offset = lineno - max(start, 1)  # start is 0 for a module, 1-based for a function
    return (source, offset) if offset < len(source) else ([], None)


def _frames(filter_frames, num_frames):
    """The frames of breakpoint's caller and above (refjax's own hidden if `filter_frames`),
    innermost first, the first `num_frames` of them."""
    frame, frames = sys._getframe(2), []
    while frame is not None:
        if not (filter_frames and source_info.internal_file(frame.f_code.co_filename)):
            frames.append(frame)
        frame = frame.f_back
    return [DebuggerFrame.from_frame(f) for f in frames[:num_frames]]


def _flattenable(value):
    try:
        pytree.tree_flatten(value)
        return value
    except Exception:  # any failure of a user's flatten rule: JAX shows the sentinel too
        return cant_flatten


def _split(frames):
    """(the traced leaves of the frames' locals, a function rebuilding the frames with their
    runtime values in place of those leaves); every other local is kept as it is."""
    leaves, tree = pytree.tree_flatten(
        [[_flattenable(v) for v in frame.locals.values()] for frame in frames])
    traced = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tracer)]

    def rebuild(values):
        runtime = dict(zip(traced, values))
        rows = pytree.tree_unflatten(tree, [runtime.get(i, leaf) for i, leaf in enumerate(leaves)])
        return [dataclasses.replace(frame, locals=dict(zip(frame.locals, row)))
                for frame, row in zip(frames, rows)]
    return [leaves[i] for i in traced], rebuild


_lock = threading.Lock()  # callbacks of programs running in several threads enter one by one


def _enter(frames, kwargs):
    with _lock:
        run_cli_debugger(frames, **kwargs)


def _types(token):
    """The token's leaves' types (JAX reads `.shape` of each, failing on Python scalars)."""
    def one(leaf):
        aval = get_aval(leaf)
        return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)
    return pytree.tree_map(one, token)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None,
               **kwargs):
    """Enter the debugger when the program reaches this point at run time (under jit, each
    time the compiled function runs; under vmap, once per batch element), on the frames above
    the call (refjax's own hidden if `filter_frames`; the first `num_frames` of them) with the
    runtime values of their traced locals. `kwargs` go to the debugger (`stdin=`, `stdout=`).
    `ordered=True` keeps it in program order with other ordered effects; `token=` (a pytree of
    arrays; exclusive with `ordered`) is returned unchanged once the debugger has run. Only
    the 'cli' debugger exists: as in JAX, any other `backend` name falls back to it."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    traced, rebuild = _split(_frames(filter_frames, num_frames))
    if token is None:
        debug_callback(lambda *values: _enter(rebuild(values), kwargs), *traced, ordered=ordered)
        return None

    def with_token(token, *values):
        _enter(rebuild(values), kwargs)
        return token
    token, traced = stop_gradient((token, traced))
    # sequential: under vmap, once per element as without a token (JAX refuses to vmap it)
    return pure_callback(with_token, _types(token), token, *traced, vmap_method="sequential")


# ---------------------------------------------------------------- the cli debugger

def _help(usage, *text):
    """Give a command the help text JAX's debugger prints for it (usage, then indented text)."""
    def document(method):
        method.__doc__ = "\n    ".join((usage, *text, ""))
        return method
    return document


class CliDebugger(cmd.Cmd):
    """jdb, the text debugger: reads commands from `stdin` (sys.stdin by default) and prints
    to `stdout`; evaluates expressions in the current frame's locals."""
    prompt = "(jdb) "

    def __init__(self, frames, stdin=None, stdout=None, completekey="tab"):
        super().__init__(completekey=completekey, stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.intro = frames, 0, "Entering jdb:"

    def evaluate(self, expr):
        """The value of `expr` in the current frame's locals (no globals, as in JAX)."""
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _show(self, expr, format):
        try:
            self._print(format(self.evaluate(expr)))
        except BaseException:  # anything the user's expression raises, exit() too, as JAX's
            self._print("*** " + traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip())

    def _print(self, text):
        print(text, file=self.stdout)

    def default(self, line):
        """A line that is no command: evaluate it and print its repr."""
        self._show(line, repr)

    @_help("p expression", "Evaluates and prints the value of an expression")
    def do_p(self, arg):
        self._show(arg, repr)

    @_help("pp expression", "Evaluates and pretty-prints the value of an expression")
    def do_pp(self, arg):
        self._show(arg, pprint.pformat)

    @_help("u(p)", "Move up a stack frame.")
    def do_up(self, arg):
        self._move(+1, len(self.frames) - 1, "At topmost frame.")

    @_help("d(own)", "Move down a stack frame.")
    def do_down(self, arg):
        self._move(-1, 0, "At bottommost frame.")

    def _move(self, step, last, at_last):
        if self.frame_index == last:
            self._print(at_last)
        else:
            self.frame_index += step
        self.print_context()

    @_help("l(ist)", "List source code for the current file.")
    def do_list(self, arg):
        self.print_context(num_lines=5)

    @_help("c(ont(inue))", "Continue the program's execution.")
    def do_continue(self, arg):
        return True

    @_help("q(uit)\n(exit)", "Quit the debugger. The program is given an exit command.")
    def do_quit(self, arg):
        sys.exit(0)

    @_help("w(here)", "Prints a stack trace with the most recent frame on the bottom.",
           "'bt' is an alias for this command.")
    def do_where(self, arg):
        self.print_backtrace()

    do_u, do_d, do_l = do_up, do_down, do_list
    do_c = do_cont = do_continue
    do_q = do_EOF = do_exit = do_quit
    do_w = do_bt = do_where

    def print_backtrace(self):
        """Every frame, outermost first, with its current line."""
        lines = ["Traceback:"]
        for frame in reversed(self.frames):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            current = "<no source>" if frame.offset is None else frame.source[frame.offset].strip()
            lines.append(f"    {current}")
        self._print("\n".join(lines))

    def print_context(self, num_lines=2):
        """The current frame's line with the lines around it (`num_lines` after it, one more
        before), marked `->`."""
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(("->  " if i == frame.offset else "    ") + line)
        self._print("\n".join(lines))

    def run(self):
        """Read and run commands until one continues (an interrupt restarts the loop)."""
        while True:
            try:
                return self.cmdloop()
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def run_cli_debugger(frames, **kwargs):
    """Run jdb on `frames` (innermost first); `kwargs`: CliDebugger's stdin, stdout,
    completekey."""
    CliDebugger(frames, **kwargs).run()
