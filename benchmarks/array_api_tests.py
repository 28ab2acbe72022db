"""Runs the data-apis array-api-tests suite on refjax.numpy (or jax.numpy) with x64 on and
prints the pass count: `python benchmarks/array_api_tests.py [refjax.numpy|jax.numpy]
[--suite /work/array-api-tests] [--max-examples 20]`. Not part of the test run (it takes
15 minutes or more); the figures of the jnp change are in its closing note."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    """Run the suite in a subprocess and print "<module>: N passed, M failed, K skipped"."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("module", nargs="?", default="refjax.numpy")
    parser.add_argument("--suite", default="/work/array-api-tests")
    parser.add_argument("--max-examples", type=int, default=20)
    args = parser.parse_args()
    env = dict(os.environ, JAX_ENABLE_X64="1", ARRAY_API_TESTS_MODULE=args.module)
    if args.module.startswith("refjax"):  # the repository root is the package refjax
        pp = tempfile.mkdtemp(prefix="refjax-path-")
        os.symlink(os.path.dirname(_HERE), os.path.join(pp, "refjax"))
        env["PYTHONPATH"] = pp + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "array_api_tests",
           f"--max-examples={args.max_examples}", "--tb=no"]
    out = subprocess.run(cmd, cwd=args.suite, env=env, capture_output=True, text=True).stdout
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped)", out)}
    print(f"{args.module}: {counts.get('passed', 0)} passed, {counts.get('failed', 0)} failed, "
          f"{counts.get('skipped', 0)} skipped")


if __name__ == "__main__":
    main()
