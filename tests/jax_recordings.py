"""Recorded outputs of real JAX: the default test run compares refjax against them instead of
running JAX (whose compiling is most of the run's time); the thorough run runs JAX and checks
each recording still equals what it gives; `--record-jax` (or REFJAX_RECORD_JAX=1) records.

A recording is one JSON file per test module (tests/recordings/<module>.json), stamped with
the JAX version and jax_num_cpu_devices it was made with, holding per test name and case a
fingerprint of the case's inputs (a page's text, a scenario's arguments) and the JAX side's
value, tagged so tuples, arrays (values, dtype, shape), NumPy scalars and non-finite floats
read back as they were. The default run uses live JAX for a case with no recording, another
fingerprint, or a recording of another JAX version or device count (it never compares with
the wrong JAX), and says at the end how many such cases ran live."""
import contextlib
import hashlib
import json
import math
import pathlib
import re
import types

import jax
import numpy as np

DIRECTORY = pathlib.Path(__file__).parent / "recordings"
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


def set_mode(mode):
    """Select how JAX's side is produced: 'replay', 'verify' or 'record'."""
    global _mode
    assert mode in ("replay", "verify", "record"), mode
    _mode = mode


def recording():
    """Whether this session records JAX's outputs."""
    return _mode == "record"


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
    constants) and the values it closes over (functions among them alike)."""
    cells = [cell.cell_contents for cell in fn.__closure__ or ()]
    return [fn.__qualname__, _code(fn.__code__), *map(_part, cells)]


def _code(code):
    return [code.co_code.hex(), code.co_names,
            *(_code(c) if isinstance(c, types.CodeType) else _text(c) for c in code.co_consts)]


def _text(value):
    """repr without objects' addresses (the same on every run)."""
    if isinstance(value, types.ModuleType):  # not its file: the same in every checkout
        return f"<module {value.__name__}>"
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


def _part(value):
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, hashlib.sha256(value.tobytes()).hexdigest()
    return of_function(value) if isinstance(value, types.FunctionType) else _text(value)


def recorded(case, compute, inputs="", same=None):
    """JAX's side of a comparison: `compute()` on live JAX, or its recording for this test and
    `case` (made from the same `inputs` fingerprint). Under the thorough profile both: a
    recording that `same(recorded, live)` (default: equal) rejects fails as stale."""
    if not _current:
        return compute()
    module, test, calls = _current[-1]
    # keyed by the inputs too: hypothesis may draw other examples, in another order, when
    # other modules ran first; a case it did not draw when recording runs live
    key = _numbered(f"{case} {inputs}" if inputs else case, calls)
    entry = _usable(module, test, key, inputs)
    if _mode == "replay" and entry is not None:
        return decode(entry["value"])
    if _mode == "replay":
        live_cases.append((module, test, key))
    value = compute()
    if _mode == "record":
        _store(module, test, key, inputs, value)
    elif _mode == "verify" and entry is not None and not (same or _equal)(
            decode(entry["value"]), value):
        raise AssertionError(f"the recording of JAX's output for {test} [{key}] in "
                             f"{_path(module)} differs from what JAX {jax.__version__} gives: "
                             f"re-record with `python -m pytest tests/{module}.py --record-jax`")
    return value


def _usable(module, test, key, inputs):
    """The recorded entry for the case, if it was made from these inputs by this JAX."""
    entry = _entries(module).get(test, {}).get(key)
    return entry if entry is not None and entry["inputs"] == inputs and _stamped(module) \
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


def _store(module, test, key, inputs, value):
    data = _load(module)
    if not _stamped(module):  # another JAX's recording: start this one afresh
        data.clear()
        data.update(stamp(), entries={})
    encoded = encode(value)
    assert _equal(decode(encoded), value), f"{test} [{key}]: {value!r} does not record exactly"
    if (module, test) not in _recorded:  # a test recorded again: its old cases go
        data["entries"][test] = {}
    data["entries"][test][key] = {"inputs": inputs, "value": encoded}
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
        return value.replace(_ROOT, _MARK)
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
        return data.replace(_MARK, _ROOT)
    if not isinstance(data, dict):
        return data
    tag = "array" if "array" in data else next(iter(data))
    return _DECODERS[tag](data)


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


def summary():
    """The end-of-run line on the default run's live JAX cases (None when all were
    recorded)."""
    if _mode != "replay" or not live_cases:
        return None
    modules = sorted({m for m, _, _ in live_cases})
    return (f"{len(live_cases)} JAX comparisons ran on live JAX for lack of a usable recording "
            f"(in {', '.join(modules)}): `python -m pytest tests --record-jax` records them")
