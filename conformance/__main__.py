"""`python -m refjax.conformance`: the conformance CLI."""
import sys

from .cli import main

sys.exit(main())
