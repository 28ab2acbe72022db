"""How the tests reach contrib/refjax-array-api's backend: through its `refjax.backends` entry
point when the package is installed (as .ci/run installs it, with pip), else by import path on
the source tree. REFJAX_REQUIRE_CONTRIB_ENTRY_POINT=1 (set by .ci/run) refuses the fallback."""
import os
import pathlib
from importlib import metadata

CONTRIB = pathlib.Path(__file__).resolve().parent.parent / "contrib" / "refjax-array-api"
STRICT_IMPORT_PATH = "refjax_array_api.backend:ArrayApiStrictBackend"
ENTRY_POINT = "array_api"


def installed():
    """Whether the refjax-array-api package's entry point is registered."""
    return ENTRY_POINT in {ep.name for ep in metadata.entry_points(group="refjax.backends")}


def strict_backend():
    """The --backend / --refjax-backends value naming the array-api-strict backend."""
    if installed():
        return ENTRY_POINT
    if os.environ.get("REFJAX_REQUIRE_CONTRIB_ENTRY_POINT") == "1":
        raise RuntimeError("refjax-array-api is not installed: its `refjax.backends` entry "
                           f"point {ENTRY_POINT!r} is missing (pip install -e {CONTRIB})")
    return STRICT_IMPORT_PATH


def source_path():
    """The directory to put on sys.path when the package is not installed (None if it is)."""
    return None if installed() else str(CONTRIB / "src")
