"""tests/jax_recordings.py, the recorded outputs of real JAX the default run compares with:
values read back exactly as recorded, a recording replayed only for the same inputs and the
same JAX, a stale recording failing the thorough run's check against live JAX."""
import json
import math
import sys
import types

import jax
import jax_recordings as rec
import ml_dtypes
import numpy as np
import pytest


@pytest.fixture
def session(tmp_path, monkeypatch):
    """A recording session of its own, in a temporary directory."""
    monkeypatch.setattr(rec, "DIRECTORY", tmp_path)
    for name, empty in [("_files", {}), ("_recorded", set()), ("live_cases", [])]:
        monkeypatch.setattr(rec, name, empty)
    monkeypatch.setattr(rec, "_mode", rec._mode)
    return tmp_path


def _values():
    return [None, True, 3, "t", 1.5, math.inf, -math.inf, 2 - 1j, (1, [2, (3,)]),
            {"a": (1.0,), "b": []}, {(1, "x"): 2, 0: None}, np.arange(6, dtype=np.float32).reshape(2, 3),
            np.array([1.5, np.nan], dtype=ml_dtypes.bfloat16), np.zeros((0, 2), np.int8),
            np.array([1 + 2j], np.complex64), np.float16(2.5), np.bool_(True), np.int64(7)]


def test_values_read_back_exactly_as_recorded():
    for value in _values():
        back = rec.decode(json.loads(json.dumps(rec.encode(value), sort_keys=True)))
        assert rec._equal(back, value), (value, back)
        assert rec._equal(rec.decode(rec.encode(math.nan)), math.nan)
    assert not rec._equal(np.float32(1), np.float64(1))  # a dtype is part of the value
    assert not rec._equal((1,), [1]) and not rec._equal(1, 1.0)
    with pytest.raises(TypeError, match="cannot record a object"):
        rec.encode(object())
    with pytest.raises(TypeError, match="cannot record a set"):
        rec.encode({"a": {1}})


_JAX_GIVES = {}  # what the stand-in for JAX gives (module state: not part of a fingerprint)


def _replayed(compute_value, inputs="i", test="t", module="mod"):
    """(the value `recorded` gives, how many times it ran the stand-in for JAX)."""
    _JAX_GIVES.update(value=compute_value, calls=0)
    with rec.running(module, test):
        value = rec.recorded("case", _jax, inputs)
    return value, _JAX_GIVES["calls"]


def _jax():
    _JAX_GIVES["calls"] += 1
    return _JAX_GIVES["value"]


def test_paths_in_this_checkout_are_recorded_relative_to_it():
    """JAX's messages name the test files' paths: a recording made in one clone of the
    repository reads back in another (CI runs in a fresh clone)."""
    here = f"{rec.pathlib.Path(rec.__file__).resolve().parent}/test_x.py:3 (f)"
    stored = json.loads(json.dumps(rec.encode(("at " + here, ["/elsewhere/test_x.py"]))))
    assert stored == {"tuple": ["at <checkout>/tests/test_x.py:3 (f)", ["/elsewhere/test_x.py"]]}
    rec._ROOT, root = "/another/clone/", rec._ROOT
    try:
        assert rec.decode(stored) == ("at /another/clone/tests/test_x.py:3 (f)",
                                      ["/elsewhere/test_x.py"])
    finally:
        rec._ROOT = root


def test_recorded_replayed_for_the_same_inputs_and_jax_only(session):
    rec.set_mode("record")
    assert _replayed((1, np.float32(2))) == ((1, np.float32(2)), 1)
    assert rec.save() == ["mod"] and json.loads((session / "mod.json").read_text())[
        "jax_version"] == jax.__version__
    rec._files.clear()
    rec.set_mode("replay")
    assert _replayed("live") == ((1, np.float32(2)), 0)  # the recording, JAX not run
    assert _replayed("live", inputs="other") == ("live", 1)
    assert _replayed("live", test="t2") == ("live", 1)
    assert [case for _, _, case in rec.live_cases] == ["case other", "case i"]
    assert "2 JAX comparisons ran on live JAX" in rec.summary()[0]
    rec._files["mod"]["jax_version"] = "0.0.1"  # another JAX's recording is not used
    assert _replayed("live") == ("live", 1)


def test_stale_recording_fails_the_thorough_check(session):
    rec.set_mode("record")
    _replayed([1.0, 2.0])
    rec.set_mode("verify")
    assert _replayed([1.0, 2.0]) == ([1.0, 2.0], 1)
    with pytest.raises(AssertionError, match="differs from what JAX .* re-record"):
        _replayed([1.0, 2.5])
    assert _replayed("no recording", inputs="other") == ("no recording", 1)


def test_cases_compared_twice_are_recorded_apart(session):
    def compared(mode, values):
        rec.set_mode(mode)
        with rec.running("mod", "t"):
            return [_JAX_GIVES.update(value=v, calls=0) or rec.recorded("c", _jax)
                    for v in values]
    assert compared("record", [1, 2]) == [1, 2]
    assert compared("replay", [0, 0, 0]) == [1, 2, 0]


def test_recorded_is_live_outside_a_test(session):
    rec.set_mode("replay")
    rec._current, kept = [], rec._current
    try:
        assert rec.recorded("c", lambda: "live") == "live" and not rec.live_cases
    finally:
        rec._current = kept


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("case", ["a", "b"])
def test_key_leaves_out_the_backend(request, case):
    assert rec.test_key(request.node) == f"test_key_leaves_out_the_backend[{case}]"


def _page():
    return [("src", "a"), ("src", f"draw {next(_JAX_GIVES['draws'])}"),
            ("src", _JAX_GIVES["second"])]


def test_page_cells_that_vary_between_runs_are_passed_over(session):
    """doc_cells.jax_cells: a cell showing something else when the page runs again (an
    unseeded draw) is noted at recording; the thorough check passes over it, not others."""
    from doc_cells import jax_cells
    _JAX_GIVES.update(draws=iter(range(10)))

    def cells(mode, second="b"):
        rec.set_mode(mode)
        _JAX_GIVES["second"] = second
        with rec.running("mod", "page"):
            return jax_cells(_page, ("text",), str.__eq__)
    assert cells("record") == ["a", "draw 0", "b"]
    (entry,) = rec._entries("mod")["page"].values()
    assert entry["value"]["dict"]["volatile"] == [1]
    assert cells("verify") == ["a", "draw 2", "b"]
    with pytest.raises(AssertionError, match="differs from what JAX"):
        cells("verify", "c")


_HELPERS = """
import functools

FACTOR = 2


@functools.lru_cache(maxsize=None)
def scale(x):
    return x * FACTOR


def helper(x):
    \"\"\"Adds one.\"\"\"
    return scale(x) + 1


def program(jax, x):
    return helper(x)
"""


def _fingerprint_of_program(monkeypatch, tmp_path, source):
    """of_function(program) of a test module (in tests/) with this source."""
    name = "rec_helpers"
    path = tmp_path / f"{name}_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(source, str(path), "exec"), vars(module))
    return rec.fingerprint(*rec.of_function(module.program))


def test_fingerprint_covers_the_helpers_a_function_calls_not_their_lines(monkeypatch, tmp_path):
    """A change to a test helper the function calls (transitively, through lru_cache) or a
    constant it reads makes another fingerprint; moving code, comments and docstrings do not."""
    monkeypatch.setattr(rec, "_TESTS", tmp_path)
    monkeypatch.setattr(rec, "_HELPERS", {})
    rec._in_tests.cache_clear()
    try:
        prints = [_fingerprint_of_program(monkeypatch, tmp_path, source) for source in [
            _HELPERS, "# moved\n\n\n" + _HELPERS.replace("Adds one", "Adds 1").replace(
                "\ndef helper", "\n# why\n\n\ndef helper"),
            _HELPERS.replace("x * FACTOR", "x * FACTOR + 0"), _HELPERS.replace("= 2", "= 3"),
            _HELPERS.replace("scale(x) + 1", "scale(x) + 2")]]
    finally:
        rec._in_tests.cache_clear()
    assert prints[0] == prints[1] and len(set(prints)) == 4, prints


_LIBRARY = """
def wrap(f):
    seen = None

    def wrapped(x):
        nonlocal seen
        seen = x
        return f(x)
    return wrapped
"""


def test_library_functions_count_by_name_and_the_test_functions_they_wrap(monkeypatch):
    """A library's function (JAX's shard_map wrapper) counts by its name and the functions it
    closes over: not by the state it keeps (which calls made before a recording change).
    Code compiled from a relative name (dataclasses' methods, "<string>") is not the tests',
    whichever directory pytest runs in."""
    monkeypatch.chdir(rec._TESTS)
    assert not rec._in_tests("<string>") and rec._in_tests(__file__)
    library = {}
    exec(compile(_LIBRARY, "/elsewhere/library.py", "exec"), library)
    wrapped, other = library["wrap"](lambda x: x + 1), library["wrap"](lambda x: x + 2)
    before = rec.of_function(wrapped)
    wrapped(3)
    assert rec.of_function(wrapped) == before and rec.of_function(other) != before


def test_quoted_test_file_lines_follow_their_function(monkeypatch, tmp_path):
    """JAX's messages quote test files' lines: recorded relative to the function holding
    them, read back as the line that is now there (code above moved); a line outside any
    function, or in a function no longer there, reads back as recorded."""
    monkeypatch.setattr(rec, "_ROOT", f"{tmp_path}/")
    (tmp_path / "tests").mkdir()
    test_file, body = tmp_path / "tests" / "test_m.py", "def f(x):\n    return x\n"

    def message(line):
        return (f"at {tmp_path}/tests/test_m.py:{line}:11 (f); "
                f'File "{tmp_path}/tests/test_m.py", line {line}, in f; test_m.py:1')

    def stored_then_read(before, after, line):
        test_file.write_text(before)
        rec._definitions.cache_clear()
        stored = json.loads(json.dumps(rec.encode(message(line))))
        test_file.write_text(after)
        rec._definitions.cache_clear()
        return stored, rec.decode(stored)
    try:
        stored, read = stored_then_read("import os\n" + body, "import os\n\n\n" + body, 3)
        assert "<checkout>/tests/test_m.py:@f+1:11" in stored and "line @f+1," in stored
        assert read == message(5)
        assert stored_then_read(body + "x = 1\n", "\n" + body + "x = 1\n", 3)[1] == message(3)
        assert stored_then_read(body, "def g(x):\n    return x\n", 2)[1].startswith(
            f"at {tmp_path}/tests/test_m.py:@f+1:11")
    finally:
        rec._definitions.cache_clear()


def test_edited_recording_is_caught_by_verify(session):
    """A recording edited on disk (or made by another JAX and merged by hand) fails the
    thorough check: the comparison is against live JAX, not against the file."""
    rec.set_mode("record")
    _replayed(np.arange(3, dtype=np.int32))
    rec.save()
    path = session / "mod.json"
    data = json.loads(path.read_text())
    (entry,) = data["entries"]["t"].values()
    entry["value"]["array"][2] = 7
    path.write_text(json.dumps(data))
    rec._files.clear()
    rec.set_mode("verify")
    with pytest.raises(AssertionError, match="in .*mod.json differs from what JAX"):
        _replayed(np.arange(3, dtype=np.int32))


def test_recording_one_module_leaves_the_others_as_they_were(session):
    """`--record-jax` on one module's tests rewrites only their recordings: other modules'
    files stay byte for byte, and the module's tests not run keep their cases."""
    rec.set_mode("record")
    for module, test, value in [("a", "t1", 1), ("a", "t2", 2), ("b", "t1", 3)]:
        _replayed(value, test=test, module=module)
    rec.save()
    files = {m: (session / f"{m}.json").read_text() for m in "ab"}
    rec._files.clear()
    rec._recorded.clear()
    _replayed(10, test="t1", module="a")
    assert rec.save() == ["a"] and (session / "b.json").read_text() == files["b"]
    entries = json.loads((session / "a.json").read_text())["entries"]
    assert entries["t2"] == json.loads(files["a"])["entries"]["t2"]
    assert [e["value"] for e in entries["t1"].values()] == [10]
    assert rec.refresh_command(["a"]) == "python -m pytest -q tests/a.py --record-jax " \
        "-p no:cacheprovider"


def test_a_default_run_with_live_jax_fails(session, request, monkeypatch):
    """conftest fails a run reading recordings in which more JAX comparisons than
    --max-live-jax (0 by default) ran live, and says which modules to re-record."""
    import conftest
    rec.set_mode("replay")
    # the default limit, whatever this run was given
    getoption = request.config.getoption
    monkeypatch.setattr(request.config, "getoption", lambda name, *a, **k: rec.MAX_LIVE
                        if name == "max_live_jax" else getoption(name, *a, **k))
    finished = types.SimpleNamespace(config=request.config, exitstatus=0)
    conftest.pytest_sessionfinish(finished)
    assert finished.exitstatus == 0
    _replayed(1)
    conftest.pytest_sessionfinish(finished)
    lines = []
    conftest.pytest_terminal_summary(types.SimpleNamespace(config=request.config,
                                                           write_line=lines.append))
    assert finished.exitstatus == pytest.ExitCode.TESTS_FAILED
    assert lines[0].startswith("1 JAX comparisons ran on live JAX") and "tests/mod.py" in lines[0]
    assert lines[1].startswith("FAILED: more than 0 JAX comparisons ran live")


def test_live_limit_counts_the_live_cases(session):
    rec.set_mode("replay")
    assert rec.summary(0) == [] and not rec.too_many_live(0)
    _replayed(1)
    assert rec.too_many_live(0) and not rec.too_many_live(1)
    assert len(rec.summary(0)) == 2 and len(rec.summary(1)) == 1
    assert "python -m pytest -q tests/mod.py --record-jax" in rec.summary(1)[0]


def test_ci_draws_do_not_depend_on_the_modules_imported():
    """Under the `ci` profile hypothesis draws no constants of the local modules imported so
    far in the tests of modules comparing with recordings (conftest): such a test draws the
    same examples run alone (as when recording) or after other modules; other modules, and
    the `thorough` profile, keep hypothesis' default."""
    import conftest
    from hypothesis import settings
    from hypothesis.internal.conjecture import providers
    import refjax.api.numpy  # noqa: F401 - a local module with constants, imported
    assert (len(providers._get_local_constants()) == 0) == (
        settings.get_current_profile_name() == "ci")
    before = providers._get_local_constants
    with conftest.fixed_local_constants():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is before
    plain, using = types.ModuleType("plain"), types.ModuleType("using")
    plain.np, using.on_jax = np, rec.on_jax
    assert rec.uses_recordings(using) and not rec.uses_recordings(plain)
    assert rec.uses_recordings(sys.modules[__name__])
