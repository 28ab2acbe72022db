"""Helpers the side-by-side tests share: what a call did (its result or its error) in a
comparable form, and the check that refjax raises what JAX raises."""
import pytest


def outcome(fn, show=repr):
    """`show(result)` of fn(), or 'ErrorClass: message' when it raised."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return f"{type(e).__name__}: {e}"
    return show(out)


def assert_same_error(call, refjax, real_jax, cls=Exception, strip=""):
    """call(module) raises the same class with the same message (refjax's without the
    prefix `strip`) for refjax as for real JAX."""
    with pytest.raises(cls) as expected:
        call(real_jax)
    with pytest.raises(type(expected.value)) as actual:
        call(refjax)
    assert str(actual.value).removeprefix(strip) == str(expected.value)
