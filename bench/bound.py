"""The bound stage: the answer stage the contest ran beside the cited one until the cited stage
measured better (issue 59), kept here only to replay its recorded readings (`bench/readers.py
table|declines`, `--way bound`: the rows of docs/results.md that compare the two). Nothing in
`submit/` calls it.

The reader answered once, in JSON held by a schema, with its last line of the answer prompt
replaced by `ask` (`bench/asks/bound.*.yaml`): the material's lines its answer rests on,
verbatim, the answer, and the items where the question asks for several things. The same pure
`decide.decide` read it (its quotes are what the checks read), and where its answer stood, the
listed items that stand in the lines it rests on and that it leaves out were joined to it.
On the dev users 27–32 the 1.5B answered 30/72 through it with the checks its calibration earns,
46/72 through the cited stage, when the bound stage left the code (31/72 and 48/72 with the
checks as they are now: docs/results.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import jinja2
import yaml

from submit.memory import answer as answer_step
from submit.memory import decide
from submit.memory import items as list_step
from submit.memory.items import _STRING  # one JSON string, as a cut list reply is read
from submit.memory.lang import detect_lang

ASKS = Path(__file__).resolve().parent / "asks"  # bound.<lang>.yaml: the wording the readings were asked in
MAX_TOKENS = 256  # three quotes, a sentence and a dozen short items
SCHEMA = {"type": "object", "properties": {
    "quotes": {"type": "array", "items": {"type": "string"}},
    "answer": {"type": "string"},
    "items": {"type": "array", "items": {"type": "string"}}},
    "required": ["quotes", "answer", "items"]}


def ask(lang: str) -> str:
    """The bound answer's last line of the answer prompt, in place of its plain `ask`."""
    template = yaml.safe_load((ASKS / f"bound.{lang}.yaml").read_text(encoding="utf-8"))["bound"]
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(template).render().strip()


@dataclass(frozen=True)
class Bound(decide.Reply):
    """A bound reply: the answer and its quotes, as `decide` reads them, and the items it listed."""
    items: tuple = ()


def parse(raw: str) -> Bound:
    """The reply's fields; a reply cut by the token cap keeps what it completed (its quotes, then
    its answer), and one that is not JSON at all is an answer without quotes."""
    text = (raw or "").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = _cut(text)
    if not isinstance(data, dict):
        return Bound(answer=answer_step.clean_answer(text))

    def strings(key: str) -> tuple:
        value = data.get(key)
        return tuple(str(v).strip() for v in value if str(v).strip()) if isinstance(value, list) else ()
    answer = data.get("answer")
    return Bound(answer=answer_step.clean_answer(answer) if isinstance(answer, str) else None,
                 quotes=strings("quotes"), items=strings("items"))


def _cut(text: str):
    """What a reply cut short says: its quotes, read as a cut cite reply's are (`decide.quotes_of`),
    and its `answer` where it completed it."""
    if not text.startswith("{"):
        return None
    found: dict = {"quotes": list(decide.quotes_of(text))}
    rest = text.partition('"answer"')[2]
    answer = _STRING.search(rest.partition(":")[2]) if rest else None
    if answer:
        found["answer"] = json.loads(f'"{answer.group(1)}"')
    return found


def decided(question: str, reply: Bound, lines: Sequence[tuple[str, str]], switches: decide.Switches,
            p_yes: Optional[float] = None) -> decide.Verdict:
    """`decide.decide` on a bound reply, then, where its answer stands, the items it listed that it
    leaves out joined to it (`items_added`)."""
    verdict = decide.decide(question, reply, lines, switches, p_yes)
    if verdict.declined:
        return verdict
    added = items_added(question, reply, verdict.held or list(lines))
    text = list_step.joined_values(reply.answer, added, detect_lang(question)) if added else reply.answer
    return decide.Verdict(text, None, verdict.held)


def items_added(question: str, reply: Bound, lines: Sequence[tuple[str, str]]) -> list[str]:
    """The reply's items to join to its answer: only where the question's form asks for several
    things (`items.several`) and offers no choice («… — скрипка или виолончель?») and the reader
    listed two or more, those that stand in the lines it rests on (`items.grounded`) and its
    answer leaves out (`items.left_out`)."""
    if len(reply.items) < 2 or not list_step.several(question) or answer_step.offered(question):
        return []
    text = "\n".join(f"{topic} {line}" for topic, line in lines)
    return list_step.left_out(reply.answer, [item for item in reply.items if list_step.grounded(item, text)])
