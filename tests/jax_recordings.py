"""Recorded outputs of real JAX: the default test run compares refjax against them instead of
running JAX (whose compiling is most of the run's time); the thorough run runs JAX and checks
each recording still equals what it gives; `--record-jax` (or REFJAX_RECORD_JAX=1) records.

A recording is one JSON file per test module (tests/recordings/<module>.json), stamped with
the JAX version and jax_num_cpu_devices it was made with, holding per test name and case a
fingerprint of what the case computes from (its inputs: a page's text, a scenario's
arguments; the code computing JAX's side, what it closes over and the test helpers it calls,
transitively) and the JAX side's value, tagged so tuples, arrays (values, dtype, shape), NumPy
scalars and non-finite floats read back as they were, and test-file lines quoted in JAX's
messages relative to their function. The default run uses live JAX for a case with no
recording, another fingerprint, or a recording of another JAX version or device count (it
never compares with the wrong JAX), says at the end how many such cases ran live, and fails
when more than --max-live-jax did (conftest)."""
import ast
import contextlib
import functools
import hashlib
import json
import math
import os
import pathlib
import re
import sys
import types

import jax
import numpy as np

_TESTS = pathlib.Path(__file__).resolve().parent
DIRECTORY = _TESTS / "recordings"
# JAX's messages name the test files' paths: recorded relative to the checkout, so that a
# recording made in one clone reads back in another
_ROOT, _MARK = f"{pathlib.Path(__file__).resolve().parent.parent}/", "<checkout>/"
RECORD_ENV = "REFJAX_RECORD_JAX"

# replay (the default run), verify (thorough) or record; set by conftest
_mode = "replay"
_files = {}  # module name -> its recording (as read, then as recorded)
_recorded = set()  # (module, test) recorded in this session
_current = []  # [(module, test name, {case: calls so far})] of the running test
live_cases = []  # (module, test, case) run on live JAX in replay mode for lack of a recording
# How many may run live in a run reading recordings before it fails (--max-live-jax): none,
# so that a recording made stale by a change is re-recorded with it
MAX_LIVE = 0


def set_mode(mode):
    """Select how JAX's side is produced: 'replay', 'verify' or 'record'."""
    global _mode
    assert mode in ("replay", "verify", "record"), mode
    _mode = mode


def recording():
    """Whether this session records JAX's outputs."""
    return _mode == "record"


_MACHINERY = {"jax_recordings", "side_by_side", "doc_cells"}


@functools.lru_cache(maxsize=None)
def uses_recordings(module):
    """Whether a test module compares with recordings (imports this module, or the helpers
    built on it)."""
    return any(isinstance(v, types.FunctionType) and v.__module__ in _MACHINERY or
               isinstance(v, types.ModuleType) and v.__name__ in _MACHINERY
               for v in vars(module).values())


def stamp():
    """What a recording must have been made with to stand in for the installed JAX."""
    return {"jax_version": jax.__version__,
            "jax_num_cpu_devices": jax.config.jax_num_cpu_devices}


@contextlib.contextmanager
def running(module, test):
    """The test whose JAX side `recorded` keys by (set by conftest's autouse fixture)."""
    _current.append((module, test, {}))
    try:
        yield
    finally:
        _current.pop()


def test_key(node):
    """A test's name without the refjax backend it runs on (JAX's side is the same on each)."""
    callspec = getattr(node, "callspec", None)
    backend = callspec.params.get("refjax_backend") if callspec else None
    if not backend:
        return node.name
    return re.sub(rf"(?<=[\[-]){re.escape(backend)}(-|(?=\]))", "", node.name).replace("[]", "")


def fingerprint(*parts):
    """A short digest of a case's inputs (arrays by dtype, shape and bytes): a recording made
    from other inputs is not used."""
    return hashlib.sha256(repr([_part(p) for p in parts]).encode()).hexdigest()[:16]


def of_function(fn):
    """What a function computes from, for a fingerprint: its name, its code (bytecode, names,
    constants: not its line numbers, comments or docstring), the values it closes over
    (functions among them alike) and the test helpers it names (`helpers`). A function not
    defined in tests/ (a library's, which its version fixes) counts by its name and the
    functions it closes over only: its other captured values are the library's state (JAX's
    shard_map wrapper notes the axes it found on its first call), and the inputs that made
    them are the test's to fingerprint."""
    return _of_function(fn, set())


def _of_function(fn, seen):
    seen.add(fn.__code__)
    if not _ours(fn):  # a library's (jax.shard_map's wrapper): see `of_function`
        cells = (cell.cell_contents for cell in fn.__closure__ or ())
        return [f"{fn.__module__}.{fn.__qualname__}",
                *(_part(cell, seen) for cell in cells if isinstance(cell, types.FunctionType))]
    return [fn.__qualname__, *_body(fn, seen), helpers(fn)]


def _body(fn, seen):
    """A test function's code and closure (`seen`: the functions met so far; None: each
    closed-over function on its own)."""
    cells = (cell.cell_contents for cell in fn.__closure__ or ())
    return [_code(fn.__code__, fn.__doc__), *(_part(cell, seen) for cell in cells)]


def _code(code, doc=None):
    consts = code.co_consts[1:] if doc is not None and code.co_consts[:1] == (doc,) \
        else code.co_consts
    return [code.co_code.hex(), code.co_names,
            *(_code(c) if isinstance(c, types.CodeType) else _text(c) for c in consts)]


def helpers(fn):
    """The test helpers `fn` names, transitively: {qualified name: code and closures} of the
    functions defined in tests/ it calls (and those call: through lru_cache, functools.wraps
    and partial, test modules' attributes and classes' methods), and the immutable constants
    (numbers, strings, tuples) it names. Not mutable module state (dicts, lists: tests fill
    caches in an order that depends on what ran before) nor jax_recordings' own functions
    (the machinery, not what JAX computes)."""
    key = (fn.__code__, id(fn.__globals__))
    if key not in _HELPERS:
        found = {}
        _collect(fn, found)
        _HELPERS[key] = fn.__globals__, fingerprint(*sorted(found.items()))
    return _HELPERS[key][1]


# (code, globals' id) -> (the globals, kept so that their id is not another's, the digest of
# its helpers): computed once a session
_HELPERS = {}


def _collect(fn, found):
    """Add the helpers `fn`'s code names (its globals', and attributes of test modules)."""
    names = _names(fn.__code__)
    for name in names & fn.__globals__.keys():
        for value in _named(fn.__globals__[name], names):
            _add(value, found)


def _names(code):
    nested = (_names(c) for c in code.co_consts if isinstance(c, types.CodeType))
    return set(code.co_names).union(*nested)


def _named(value, names):
    """What a global stands for: a test module's attributes among `names`, a class's
    methods, a wrapped function's original, a partial's function and arguments."""
    if isinstance(value, types.ModuleType):
        return [getattr(value, n) for n in names if _ours(value) and hasattr(value, n)]
    if isinstance(value, type):
        return list(vars(value).values()) if _ours(value) else []
    if isinstance(value, functools.partial):
        return [value.func, *value.args, *value.keywords.values()]
    return [getattr(value, "__wrapped__", value)]


def _add(value, found):
    value = getattr(value, "__func__", value)  # a class's staticmethods and classmethods
    if isinstance(value, types.FunctionType) and _ours(value):
        name = f"{value.__module__}.{value.__qualname__}"
        if name not in found:
            found[name] = None  # before its own helpers: recursion ends here
            found[name] = _body(value, None)
            _collect(value, found)
    elif _constant(value):
        found.setdefault(f"= {_text(value)}", None)


def _ours(value):
    """Whether a function, class or module is the tests' own (not jax_recordings)."""
    if isinstance(value, types.FunctionType):
        return _in_tests(value.__code__.co_filename)
    module = value if isinstance(value, types.ModuleType) else sys.modules.get(value.__module__)
    return _in_tests(getattr(module, "__file__", None))


@functools.lru_cache(maxsize=None)
def _in_tests(path):
    # not a relative name: dataclasses' generated methods are compiled from "<string>"
    return path is not None and os.path.isabs(path) and \
        pathlib.Path(path).resolve().parent == _TESTS and \
        pathlib.Path(path).stem != __name__


def _constant(value):
    if isinstance(value, (tuple, frozenset)):
        return all(map(_constant, value))
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def _text(value):
    """repr without objects' addresses (the same on every run; sets' elements sorted, as
    their order follows the process' string hashing)."""
    if isinstance(value, types.ModuleType):  # not its file: the same in every checkout
        return f"<module {value.__name__}>"
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}({sorted(map(_text, value))})"
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


def _part(value, seen=None):
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, hashlib.sha256(value.tobytes()).hexdigest()
    if isinstance(value, types.FunctionType):
        seen = set() if seen is None else seen
        return value.__qualname__ if value.__code__ in seen else _of_function(value, seen)
    return _text(value)


def recorded(case, compute, inputs="", same=None):
    """JAX's side of a comparison: `compute()` on live JAX, or its recording for this test and
    `case` (made from the same `inputs` fingerprint, and the same `compute`: its code, what it
    closes over and the test helpers it calls, `of_function`). Under the thorough profile
    both: a recording that `same(recorded, live)` (default: equal) rejects fails as stale."""
    if not _current:
        return compute()
    module, test, calls = _current[-1]
    # keyed by the inputs too: hypothesis may draw other examples, in another order, when
    # other modules ran first; a case it did not draw when recording runs live
    key = _numbered(f"{case} {inputs}" if inputs else case, calls)
    made_from = fingerprint(inputs, _part(compute))
    entry = _usable(module, test, key, made_from)
    if _mode == "replay" and entry is not None:
        return decode(entry["value"])
    if _mode == "replay":
        live_cases.append((module, test, key))
    value = compute()
    if _mode == "record":
        _store(module, test, key, made_from, value)
    elif _mode == "verify" and entry is not None and not (same or _equal)(
            decode(entry["value"]), value):
        raise AssertionError(f"the recording of JAX's output for {test} [{key}] in "
                             f"{_path(module)} differs from what JAX {jax.__version__} gives: "
                             f"re-record with `{refresh_command([module])}`")
    return value


def _usable(module, test, key, made_from):
    """The recorded entry for the case, if it was made from these inputs by this JAX."""
    entry = _entries(module).get(test, {}).get(key)
    return entry if entry is not None and entry["inputs"] == made_from and _stamped(module) \
        else None


def on_jax(fn, *args):
    """`fn(jax, *args)` on real JAX with its arrays as NumPy arrays, or its recording (the
    case named by `fn`, made from the same `args`)."""
    return recorded(fn.__name__, lambda: as_numpy(fn(jax, *args)),
                    fingerprint(*args, *of_function(fn)))


def as_numpy(value):
    """`value` with JAX arrays as NumPy arrays (in lists, tuples and dicts)."""
    if isinstance(value, jax.Array):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(as_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: as_numpy(v) for k, v in value.items()}
    return value


def _numbered(case, calls):
    """A test may compare the same case several times: each call its own key."""
    calls[case] = calls.get(case, -1) + 1
    return case if calls[case] == 0 else f"{case}#{calls[case]}"


def _path(module):
    return DIRECTORY / f"{module}.json"


def _load(module):
    if module not in _files:
        path = _path(module)
        _files[module] = json.loads(path.read_text()) if path.exists() else {"entries": {}}
    return _files[module]


def _entries(module):
    return _load(module)["entries"]


def _stamped(module):
    data = _load(module)
    return {k: data.get(k) for k in stamp()} == stamp()


def _store(module, test, key, made_from, value):
    data = _load(module)
    if not _stamped(module):  # another JAX's recording: start this one afresh
        data.clear()
        data.update(stamp(), entries={})
    encoded = encode(value)
    assert _equal(decode(encoded), value), f"{test} [{key}]: {value!r} does not record exactly"
    if (module, test) not in _recorded:  # a test recorded again: its old cases go
        data["entries"][test] = {}
    data["entries"][test][key] = {"inputs": made_from, "value": encoded}
    _recorded.add((module, test))


def save():
    """Write the recordings made in this session (deterministic: sorted keys, one file per
    test module)."""
    modules = sorted({module for module, _ in _recorded})
    if modules:
        DIRECTORY.mkdir(exist_ok=True)
    for module in modules:
        text = json.dumps(_files[module], sort_keys=True, indent=1, ensure_ascii=False)
        _path(module).write_text(text + "\n")
    return modules


# ---------------------------------------------------------------- values as JSON


def encode(value):
    """`value` as JSON: lists, str (paths in this checkout relative to it), int/bool/None and
    finite floats as themselves; tuples, dicts, arrays, NumPy scalars, complex and non-finite
    floats tagged."""
    if isinstance(value, str):
        return _LINE.sub(_relative_line, value.replace(_ROOT, _MARK))
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": [encode(value.real), encode(value.imag)]}
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        return items if isinstance(value, list) else {"tuple": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, dict):  # other keys: its items, in order
        return {"items": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (np.ndarray, np.generic)):
        return {"array": encode(value.tolist()), "dtype": str(value.dtype),
                "shape": list(value.shape), "scalar": isinstance(value, np.generic)}
    raise TypeError(f"cannot record a {type(value).__name__}: {value!r}")


def decode(data):
    """The value `encode` made `data` from."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, str):
        return _RELATIVE.sub(_absolute_line, data).replace(_MARK, _ROOT)
    if not isinstance(data, dict):
        return data
    tag = "array" if "array" in data else next(iter(data))
    return _DECODERS[tag](data)


# JAX's messages quote lines of the test files (`file.py:LINE:COLUMN (function)` in source
# info, warnings, tracebacks): recorded relative to the first line of the module-level
# function or class holding them, `file.py:@name+OFFSET`, and read back as the line that is
# now there, so code moving above it does not make the recording stale while a change inside
# the function still shows.
_LINE = re.compile(rf"({re.escape(_MARK)}[\w/.-]+\.py)(:|\", line )(\d+)")
_RELATIVE = re.compile(rf"({re.escape(_MARK)}[\w/.-]+\.py)(:|\", line )@(\w+)\+(\d+)")


def _relative_line(match):
    path, sep, line = match[1], match[2], int(match[3])
    holders = [(name, first) for name, (first, last) in _definitions(path).items()
               if first <= line <= last]
    return f"{path}{sep}@{holders[0][0]}+{line - holders[0][1]}" if holders else match[0]


def _absolute_line(match):
    path, sep, name, offset = match.groups()
    first = _definitions(path).get(name, (None,))[0]
    return match[0] if first is None else f"{path}{sep}{first + int(offset)}"


@functools.lru_cache(maxsize=None)
def _definitions(path):
    """{name: (first line, last line)} of a file's module-level functions and classes (none
    for a file that is not there)."""
    file = pathlib.Path(path.replace(_MARK, _ROOT))
    if not file.is_file():
        return {}
    return {node.name: (node.lineno, node.end_lineno) for node in ast.parse(file.read_text()).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _array(data):
    array = np.asarray(decode(data["array"]), dtype=_dtype(data["dtype"]))
    array = array.reshape(data["shape"])
    return array[()] if data["scalar"] else array


def _dtype(name):
    try:
        return np.dtype(name)
    except TypeError:  # bfloat16, float8_*: ml_dtypes' (which JAX imports)
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))


_DECODERS = {
    "float": lambda d: float(d["float"]),
    "complex": lambda d: complex(*d["complex"]),
    "tuple": lambda d: tuple(decode(v) for v in d["tuple"]),
    "dict": lambda d: {k: decode(v) for k, v in d["dict"].items()},
    "items": lambda d: {decode(k): decode(v) for k, v in d["items"]},
    "array": _array,
}


def _equal(a, b):
    """Equality of decoded values: same types, arrays equal in dtype, shape and values (NaN
    equal to NaN)."""
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and _same_elements(a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _same_elements(a, b):
    """NaN equal to NaN where the dtype has NaN (bfloat16 and float8 too, as floats)."""
    if a.dtype.kind in "biuSUO":
        return np.array_equal(a, b)
    if a.dtype.kind not in "fc":  # ml_dtypes' floats
        a, b = a.astype(np.float32), b.astype(np.float32)
    return np.array_equal(a, b, equal_nan=True)


def refresh_command(modules):
    """The command that re-records JAX's side of `modules` (only theirs: other modules'
    recordings, and the tests of theirs not run, stay as they are)."""
    paths = " ".join(f"tests/{m}.py" for m in modules)
    return f"python -m pytest -q {paths} --record-jax -p no:cacheprovider"


def too_many_live(limit):
    """Whether more JAX comparisons than `limit` ran live in a run reading recordings."""
    return _mode == "replay" and len(live_cases) > limit


def summary(limit=None):
    """The end-of-run lines on the default run's live JAX cases (none when all were recorded;
    one more when more than `limit` ran live, failing the run)."""
    if _mode != "replay" or not live_cases:
        return []
    modules = sorted({m for m, _, _ in live_cases})
    lines = [f"{len(live_cases)} JAX comparisons ran on live JAX for lack of a usable "
             f"recording (in {', '.join(modules)}): `{refresh_command(modules)}` records them"]
    if limit is not None and too_many_live(limit):
        lines.append(f"FAILED: more than {limit} JAX comparisons ran live (--max-live-jax): "
                     f"the default run reads JAX's side from tests/recordings/")
    return lines
