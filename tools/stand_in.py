"""Hand a `collect:` folder's pending prompts to a reader outside the code, and take its replies back.

    .venv/bin/python tools/stand_in.py export runs/batch --out prompts.jsonl [--parts 4]
    .venv/bin/python tools/stand_in.py import runs/batch answers.jsonl [answers2.jsonl ...]

`export` writes every prompt of DIR/pending.jsonl that has no reply yet as a JSON line
`{"id", "messages"}` with a short id (`p0001`), in one file or `--parts` files
(`prompts.1.jsonl`, ...), for a person, a batch API or a stand-in model that answers each chat
seeing nothing else. `import` reads `{"id", "reply"}` lines, maps the ids back to the
prompt keys (`DIR/stand_in_ids.json`, written by export) and appends `{"key", "reply", "lines"}`
lines (`lines`: the prompt's line prints, for diagnosing a later replay miss) to DIR/replies.jsonl,
which the next `collect:`/`replay:` pass reads. This is how answer
accuracy can be measured with any capable reader (bench/results/locomo_answers/table.md).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from local_eval.llms import store as llm_store

IDS = "stand_in_ids.json"


def export(folder: Path, out: Path, parts: int) -> int:
    waiting = llm_store.Store(str(folder), create=False).outstanding()
    ids = {f"p{i:04d}": row["key"] for i, row in enumerate(waiting, start=1)}
    (folder / IDS).write_text(json.dumps(ids, indent=0), encoding="utf-8")
    size = -(-len(waiting) // parts) if waiting else 0
    for part in range(parts):
        rows = list(zip(ids, waiting))[part * size:(part + 1) * size]
        path = out if parts == 1 else out.with_suffix(f".{part + 1}{out.suffix}")
        with path.open("w", encoding="utf-8") as f:
            for short, row in rows:
                f.write(json.dumps({"id": short, "messages": row["messages"]}, ensure_ascii=False) + "\n")
        print(f"{len(rows)} prompt(s) in {path}")
    return 0


def take(folder: Path, answers: list) -> int:
    ids = json.loads((folder / IDS).read_text(encoding="utf-8"))
    pending = llm_store.Store(str(folder), create=False).pending
    rows = []
    for path in answers:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("id") not in ids or not isinstance(row.get("reply"), str):
                raise SystemExit(f"{path}:{number}: not an {{\"id\", \"reply\"}} line of this export")
            key = ids[row["id"]]
            rows.append({"key": key, "reply": row["reply"]})
            if key in pending:  # the prompt's line prints: a later replay miss can say what changed
                rows[-1]["lines"] = llm_store.line_prints(pending[key]["messages"])
    llm_store.append_rows(folder / llm_store.REPLIES, rows)
    print(f"{len(rows)} repl(ies) added to {folder / llm_store.REPLIES}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="pending prompts -> {id, messages} lines")
    e.add_argument("folder")
    e.add_argument("--out", required=True)
    e.add_argument("--parts", type=int, default=1)
    i = sub.add_parser("import", help="{id, reply} lines -> DIR/replies.jsonl")
    i.add_argument("folder")
    i.add_argument("answers", nargs="+")
    args = p.parse_args(argv)
    folder = Path(args.folder)
    if not (folder / "pending.jsonl").is_file():
        p.error(f"{folder} holds no pending.jsonl (run a collect: pass first)")
    if args.command == "export":
        if args.parts < 1:
            p.error("--parts must be at least 1")
        return export(folder, Path(args.out), args.parts)
    return take(folder, args.answers)


if __name__ == "__main__":
    sys.exit(main())
