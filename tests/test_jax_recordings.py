"""tests/jax_recordings.py, the recorded outputs of real JAX the default run compares with:
values read back exactly as recorded, a recording replayed only for the same inputs and the
same JAX, a stale recording failing the thorough run's check against live JAX."""
import json
import math

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


def _replayed(compute_value, inputs="i", test="t"):
    calls = []

    def compute():
        calls.append(1)
        return compute_value
    with rec.running("mod", test):
        value = rec.recorded("case", compute, inputs)
    return value, len(calls)


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
    assert "2 JAX comparisons ran on live JAX" in rec.summary()
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
    rec.set_mode("record")
    with rec.running("mod", "t"):
        assert [rec.recorded("c", lambda v=v: v) for v in (1, 2)] == [1, 2]
    rec.set_mode("replay")
    with rec.running("mod", "t"):
        assert [rec.recorded("c", lambda: 0) for _ in range(3)] == [1, 2, 0]


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


def test_page_cells_that_vary_between_runs_are_passed_over(session):
    """doc_cells.jax_cells: a cell showing something else when the page runs again (an
    unseeded draw) is noted at recording; the thorough check passes over it, not others."""
    from doc_cells import jax_cells
    draws = iter(range(10))

    def cells(mode, second="b"):
        rec.set_mode(mode)
        with rec.running("mod", "page"):
            return jax_cells(lambda: [("src", "a"), ("src", f"draw {next(draws)}"),
                                      ("src", second)], ("text",), str.__eq__)
    assert cells("record") == ["a", "draw 0", "b"]
    (entry,) = rec._entries("mod")["page"].values()
    assert entry["value"]["dict"]["volatile"] == [1]
    assert cells("verify") == ["a", "draw 2", "b"]
    with pytest.raises(AssertionError, match="differs from what JAX"):
        cells("verify", "c")
