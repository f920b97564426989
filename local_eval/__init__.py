"""Local evaluation: contest stand-ins, the harness replica, benchmark tasks, scoring and reports."""
import sys
from pathlib import Path

# The submission imports the organizers' modules as top-level `models` and
# `submit_interface`; our stand-ins live here, so this folder must be importable.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
