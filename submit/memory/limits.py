"""What each field of the settings tree may hold, stated at the field and checked at construction.

A field says its limits in its metadata (`count(1, 32_768)`, `seconds(7 * 24 * 3600)`,
`one_of(gate.MODES)`); the record's `__post_init__` calls `check_fields`, so a value out of
range never gets past the record it was given to (`Settings(context_chars=0)` raises). Values
outside are explicit nonsense, refused with the field's name. Called by `dialogue.Settings`,
`budget.BudgetSettings` and `submit.config.Config`.
"""
from __future__ import annotations

import dataclasses
import math
import numbers


class ConfigError(ValueError):
    """A setting out of its field's limits (or an environment value that is no number)."""


def count(low: int, high: int) -> dict:
    """Field metadata: an integer from `low` to `high` (bool refused)."""
    return {"limits": (int, low, high)}


def amount(high: float, low: float = 0.0) -> dict:
    """Field metadata: a finite number above `low` and at most `high` (seconds, hours)."""
    return {"limits": (float, low, high)}


def one_of(values) -> dict:
    """Field metadata: one of these values."""
    return {"one_of": tuple(values)}


def check_fields(record) -> None:
    """Every field of `record` within the limits its metadata states; ConfigError naming the first
    that is not: `check_fields(Settings(context_chars=0))` raises "context_chars must be ..."."""
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if "limits" in field.metadata:
            check_range(field.name, value, *field.metadata["limits"])
        allowed = field.metadata.get("one_of")
        if allowed is not None and value not in allowed:
            raise ConfigError(f"{field.name} must be one of {', '.join(map(str, allowed))}, got {value!r}")


def check_range(name: str, value, kind: type, low: float, high: float) -> None:
    """Integers for counts, from `low` to `high` (bool refused); finite numbers for seconds and
    hours, above `low` and at most `high`: `check_range("expected_dialogues", 1, int, 1, 10)` passes."""
    numeric = isinstance(value, numbers.Integral) if kind is int else isinstance(value, numbers.Real)
    if isinstance(value, bool) or not numeric:
        raise ConfigError(f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    if kind is int and not low <= value <= high:
        raise ConfigError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    if kind is not int and not (math.isfinite(value) and low < value <= high):
        raise ConfigError(f"{name} must be a finite number above {low:g} and at most {high:g}, got {value!r}")
