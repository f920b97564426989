"""Stand-in for the organizers' `models` module (written by us, same names and signatures).

The contest harness runs from its own `src/` folder, so the submission imports this
module as a top-level `models`; the editable install (pyproject.toml) provides ours by that name.
"""
from dataclasses import dataclass
from typing import Optional


@dataclass
class Message:
    role: str
    content: str
    session_id: Optional[str] = None
