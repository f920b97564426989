"""Contest records for the twelve users, padded to the contest's length with filler sessions.

    .venv/bin/python tools/pad_users.py --users dev --out runs/users/dev.jsonl
    .venv/bin/python tools/pad_users.py --users calibration --seed 0 --chars 350000 --out runs/users/cal.jsonl
    .venv/bin/python local_eval/run.py --dataset gigamemory --data runs/users/dev.jsonl --out runs/users-dev

The users (`../shared/data/gigamemory/users/`, dialogues 21–32) are split by dialogue: 21–26
calibrate the decline gate (`submit/calibration/` is built from them), 27–32 are dev beside the
contest sample. Each question becomes one contest record whose sessions are its user's, with
filler sessions from `local_eval/data/filler/` scattered among them (`local_eval/tasks/padding.py`)
until the dialogue holds `--chars` characters; evidence ids follow the user's sessions. The same
seed writes the same file. `--chars 0` writes the users as they are.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bench.prompts import USERS_DATA  # noqa: E402
from local_eval import jsonl  # noqa: E402
from local_eval.tasks.padding import CONTEST_CHARS, SPLITS, session_chars, users_records  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--users", choices=tuple(SPLITS), default="dev",
                   help="calibration: 21-26; dev: 27-32; all [default: dev]")
    p.add_argument("--seed", type=int, default=0, help="the draw and placement of filler sessions [default: 0]")
    p.add_argument("--chars", type=int, default=CONTEST_CHARS,
                   help=f"pad each dialogue to at least this many characters [default: {CONTEST_CHARS}; 0: no padding]")
    p.add_argument("--data", type=Path, default=USERS_DATA, help="the users' folder [default: %(default)s]")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if not (args.data / "questions.jsonl").is_file():
        p.error(f"no users' questions.jsonl in {args.data}")
    if args.chars < 0:
        p.error("--chars must be 0 or more")
    records = users_records(args.users, args.data, args.seed, args.chars)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(args.out, records)
    sizes = {}
    for r in records:
        sizes[r["dialogue_id"]] = (len(r["sessions"]), sum(session_chars(s) for s in r["sessions"]))
    for dialogue, (sessions, chars) in sizes.items():
        print(f"dialogue {dialogue}: {sessions} sessions, {chars:,} characters")
    print(f"{len(records)} records in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
