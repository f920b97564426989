"""A user's dialogue padded to the contest's length with sessions that say nothing about anyone.

The twelve users of `../shared/data/gigamemory/users/` are 52–62k characters each; the contest's
dialogues ~350k, most of it tasks (a translation, a recipe, a letter) that tell nothing about the
user. `pad` draws such sessions from the filler pool (`local_eval/data/filler/pool.jsonl`, written
and checked by stand-ins under `BRIEF.md` there) until the dialogue reaches `chars`, scatters them
among the user's own sessions (whose order is kept), and numbers all sessions anew from 1;
`padded_rows` maps each question's session ids to the new numbers, so evidence still points at
the user's own turns. The same seed gives the same records. `users_records` makes them for a
split of the users (21-26 calibrate, 27-32 are dev); `tools/pad_users.py` writes them,
`bench/prompts.py` reads them for its `users_*` sets, `tools/calibration.py` for the shipped set.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

FILLER = Path(__file__).resolve().parent.parent / "data" / "filler"
POOL = FILLER / "pool.jsonl"
VERDICTS = FILLER / "verdicts.jsonl"
CONTEST_CHARS = 350_000  # a contest dialogue's length in characters (CONTEST.md: ~350k)
# The users split by dialogue: 21-26 calibrate the decline gate (submit/calibration/), 27-32 are dev
SPLITS = {"calibration": range(21, 27), "dev": range(27, 33), "all": range(21, 33)}


def session_chars(session: dict) -> int:
    return sum(len(m["content"]) for m in session["messages"])


def load_pool(pool: Path = POOL, verdicts: Path = VERDICTS) -> list[dict]:
    """The pool's sessions that the checking stand-in cleared (`about_user` false), in file order.
    A session with no verdict is not used: every filler session is read before it pads anything."""
    cleared = {row["id"] for row in _rows(verdicts) if row["about_user"] is False}
    return [row for row in _rows(pool) if row["id"] in cleared]


def users_records(split: str, data: Path, seed: int = 0, chars: int = CONTEST_CHARS) -> list[dict]:
    """The split's questions of the users' folder `data` as contest records, padded
    (`users_records("dev", Path("../shared/data/gigamemory/users"))`)."""
    wanted = set(SPLITS[split])
    return records_for([q for q in _rows(data / "questions.jsonl") if int(q["dialogue_id"]) in wanted],
                       data, seed, chars)


def records_for(questions: list[dict], data: Path, seed: int = 0, chars: int = CONTEST_CHARS) -> list[dict]:
    """Question rows over the dialogues of `data/dialogues.jsonl` as contest records, padded
    (`chars=0`: as they are)."""
    dialogues = {str(d["id"]): d for d in _rows(data / "dialogues.jsonl")}
    if not chars:
        return [{**q, "sessions": dialogues[str(q["dialogue_id"])]["sessions"]} for q in questions]
    return padded_records(questions, dialogues, seed, chars)


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pad(dialogue: dict, pool: list[dict], seed: int, chars: int = CONTEST_CHARS) -> tuple[dict, dict]:
    """(the dialogue padded to at least `chars`, {old session id: new session id} for its own sessions).

    `pad({"id": 21, "sessions": [...]}, load_pool(), seed=0)`: filler sessions in a shuffled order
    of the pool (none twice while the pool lasts), each placed before, between or after the user's
    sessions at random; the draw depends on the seed and the dialogue's id alone."""
    if not pool:
        raise ValueError("the filler pool is empty: nothing to pad with")
    rng = random.Random(f"{seed}:{dialogue['id']}")
    own = list(dialogue["sessions"])
    total = sum(session_chars(s) for s in own)
    order, fillers = [], []
    while total < chars:
        if not order:
            order = rng.sample(range(len(pool)), len(pool))
        session = pool[order.pop()]
        fillers.append(session)
        total += session_chars(session)
    # filler i goes into gap g (before the user's session g; g == len(own): after the last one)
    placed = sorted([(rng.randint(0, len(own)), 0, i, f) for i, f in enumerate(fillers)]
                    + [(k, 1, 0, s) for k, s in enumerate(own)], key=lambda item: item[:3])
    sessions, mapping = [], {}
    for number, (_, is_own, _, session) in enumerate(placed, start=1):
        if is_own:
            mapping[str(session["id"])] = number
        sessions.append({**session, "id": number} if is_own else {"id": number, "messages": session["messages"]})
    return {**dialogue, "sessions": sessions}, mapping


def padded_rows(question: dict, mapping: dict) -> dict:
    """A question row with its session ids (`ans_session_ids`, each evidence quote's) renumbered."""
    return {**question,
            "ans_session_ids": [mapping[str(s)] for s in question.get("ans_session_ids", [])],
            "evidence": [{**e, "session_id": mapping[str(e["session_id"])]} for e in question.get("evidence", [])]}


def padded_records(questions: list[dict], dialogues: dict, seed: int, chars: int = CONTEST_CHARS,
                   pool: list | None = None) -> list[dict]:
    """Contest records (one per question, its dialogue's padded sessions copied in) for the questions
    whose `dialogue_id` names a dialogue of `dialogues` ({str id: row})."""
    pool = load_pool() if pool is None else pool
    out, done = [], {}
    for question in questions:
        key = str(question["dialogue_id"])
        if key not in done:
            done[key] = pad(dialogues[key], pool, seed, chars)
        dialogue, mapping = done[key]
        out.append({**padded_rows(question, mapping), "sessions": dialogue["sessions"]})
    return out
