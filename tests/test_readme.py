"""Every ```python block of README.md runs unchanged, in order, in one fresh namespace (as a
reader pasting them into one session), on each backend."""
import pathlib
import re

import pytest

import refjax

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def python_blocks():
    """(first line number, source) of each ```python block."""
    text = README.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_readme_has_python_examples():
    assert len(python_blocks()) >= 3


@pytest.mark.backends("numpy_ref", "xla")
def test_readme_examples_run(refjax_backend, capsys):
    namespace = {"__name__": "__readme__"}
    for line, source in python_blocks():
        # Padded so that a traceback names the README's own line numbers.
        exec(compile("\n" * (line - 1) + source, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "lambda" in out  # the printed make_jaxpr
    assert "v = 3.0\n" in out  # debug.print's runtime value, from inside jit
    assert namespace["x_on_xla"]._backend is refjax.get_backend("xla")  # as the README says
    assert namespace["per_example"].shape == (8, 3) and namespace["H"].shape == (3, 3)
    # the sharding example's values and layouts, as its comments say
    import numpy as np
    P = refjax.sharding.PartitionSpec
    assert namespace["b"].sharding.spec == P("x", "y")
    np.testing.assert_array_equal(np.asarray(namespace["blocks"]),
                                  [[18, 26, 34, 42], [82, 90, 98, 106]])
    assert float(namespace["total"]) == 496.0 and namespace["total"].sharding.spec == P()
    assert namespace["wide"].dtype == np.int64  # made under jax.enable_x64(True)
    assert namespace["status"] == 0  # "Check your backend": the toy backend passes the CLI
    _check_lax_example(namespace)


def _check_lax_example(ns):
    """The convolution/linear algebra/FFT example's values, against real JAX and NumPy."""
    import jax
    import numpy as np
    conv = jax.lax.conv_general_dilated(
        np.asarray(ns["images"]), np.asarray(ns["kernel"]), (1, 1), "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    pooled = jax.lax.reduce_window(conv, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                   "VALID")
    np.testing.assert_allclose(np.asarray(ns["pooled"]), pooled, rtol=1e-5, atol=1e-5)
    chol, a = np.asarray(ns["chol"]), np.asarray(ns["A"])
    np.testing.assert_allclose(chol @ chol.T, a, rtol=1e-6)
    assert np.all(np.triu(chol, 1) == 0)
    np.testing.assert_allclose(chol @ np.asarray(ns["alpha"]), np.ones((2, 1)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ns["spectrum"]), np.fft.fft(np.sin(np.arange(8.0))),
                               rtol=1e-5, atol=1e-5)
