"""Lists by listing: the reader lists the items of a question that asks for several things.

A small reader names one or two items in a sentence but lists more when asked for a list. Where
the question's form asks for several (`several`), the answer chat's facts are asked for every item
as JSON, twice in one batched call (`list_chats`: a small reader stops after the first line that
names several, so the second ask shows each topic's latest facts first), and the items the answer
leaves out are joined to it. Called by `dialogue`; pure but `listed`.
"""
from __future__ import annotations

import json
import re
from typing import Sequence

from .. import prompts
from . import answer as answer_step
from .decide import someone_elses_item
from .lang import NO_INFO, WORD, has_cyrillic
from .gate import with_ask
from .lexical import morph, normalize_word
from .llm import ITEMS

MODES = ("off", "list")
ALSO = {"ru": "также: ", "en": "also: "}
LIST_SCHEMA = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}},
               "required": ["items"]}
LIST_MAX_TOKENS = 200  # a dozen short items; a reply cut here keeps its complete items (`parse_items`)
MAX_ITEMS = 12


def _stems(text: str) -> set:
    return {w.lower()[:5] for w in WORD.findall(text) if len(w) >= 3}


def _covered(text: str, other: str) -> bool:
    """Every word of `text` (of three letters or more) stands in `other`: the same first five
    letters or the same lemma («Кроликами» in «кролики», «Пермь» in «Перми»). False for no words."""
    words = [w.lower() for w in WORD.findall(text) if len(w) >= 3]
    theirs = [w.lower() for w in WORD.findall(other) if len(w) >= 3]
    stems, lemmas = {w[:5] for w in theirs}, {normalize_word(w) for w in theirs}
    return bool(words) and all(w[:5] in stems or normalize_word(w) in lemmas for w in words)


def left_out(answer: str, values: Sequence[str], question: str = "") -> list[str]:
    """The values neither the answer nor its question mentions (`_covered`, so endings may differ), in
    order, each once: «непереносимость лактозы» is mentioned by «Лактозы.» to «Какая у меня непереносимость?»."""
    said = f"{answer} {question}"
    missing: list[str] = []
    for value in (v.strip() for v in values):
        if value and _stems(value) and not _covered(value, said) and value not in missing:
            missing.append(value)
    return missing


def joined_values(answer: str, values: Sequence[str], lang: str, question: str = "") -> str:
    """The answer with the values it and its question do not mention (`left_out`) joined to it, in
    order: `joined_values("Вы держите кроликов.", ["кролики", "куры"], "ru")` is
    «Вы держите кроликов (также: куры).»"""
    missing = left_out(answer, values, question)
    if not missing:
        return answer
    body, end = (answer[:-1], answer[-1]) if answer[-1:] in ".!" else (answer, ".")
    return f"{body} ({ALSO[lang]}{', '.join(missing)}){end}"


# ---------------------------------------------------------------- lists by listing


# words that ask one value of several: the current one, the chosen one, the best one
ONE_OF_THEM = re.compile(r"\b(?:сейчас|теперь|в итоге|в конце концов|больше всего|сам(?:ый|ая|ое|ую|ого|ой|ом|ым))\b",
                         re.IGNORECASE)
_PLURAL_ASKING = frozenset(("какой", "который", "чей"))
_PLURAL_OWNER = frozenset(("мой", "наш"))


def several(question: str) -> bool:
    """Whether a Russian question's form asks for several things: a plural «какие» or «мои», «кто из»,
    «что» in any case as its first word, or an instrumental «каким» with its noun («Каким инструментом
    я играю?»). False for English, for one value of several (`ONE_OF_THEM`: «Что я в итоге купил?»),
    and for a choice offered (`answer.offered`: «Что я больше люблю — чай или кофе?»)."""
    if ONE_OF_THEM.search(question) or len(answer_step.offered(question)) >= 2:
        return False
    words = WORD.findall(question.lower())
    parses = [morph().parse(w)[0] for w in words] if has_cyrillic(question) else []
    for i, p in enumerate(parses):
        if "plur" in p.tag and p.normal_form in _PLURAL_ASKING | _PLURAL_OWNER:
            return True
        if p.normal_form == "кто" and i + 1 < len(parses) and parses[i + 1].normal_form == "из":
            return True
    first = next((i for i, p in enumerate(parses) if "PREP" not in p.tag), None)
    if first is None:
        return False
    readings = morph().parse(words[first])
    if any(r.normal_form == "что" and "NPRO" in r.tag for r in readings):
        return True
    return (first + 1 < len(parses) and any(r.normal_form == "какой" and "ablt" in r.tag for r in readings)
            and any("NOUN" in r.tag and "ablt" in r.tag for r in morph().parse(words[first + 1])))


def list_chat(chat: list, lang: str) -> list:
    """The answer chat with its facts only (the excerpts cut) and the list ask as its last line;
    it shares the answer prompt's prefix up to the excerpts, so a prefix cache reads the facts once."""
    content = chat[-1]["content"]
    start = min((content.find(h) for h in answer_step.EXCERPTS if h in content), default=-1)
    if start >= 0:
        content = content[:start].rstrip("\n") + "\n\n" + content[content.rfind("\n\n") + 2:]
    return with_ask(chat[:-1] + [{**chat[-1], "content": content}], prompts.text("items", lang, "list_ask"))


def latest_first(chat: list) -> list:
    """The chat with each run of fact lines ("- [сессия 8] …" under a topic) in reverse order (the
    answer prompt lists a topic's facts oldest first): its latest first, the rest where it was."""
    lines, out, run = chat[-1]["content"].split("\n"), [], []
    for line in lines + [None]:
        if line is not None and line.startswith("- "):
            run.append(line)
            continue
        out += run[::-1]
        run = []
        if line is not None:
            out.append(line)
    return chat[:-1] + [{**chat[-1], "content": "\n".join(out)}]


def list_chats(chat: list, lang: str) -> list:
    """The list asks of an answer chat: its facts as shown, then each topic's latest first."""
    ask = list_chat(chat, lang)
    return [ask, latest_first(ask)]


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_items(text: str) -> list[str]:
    """The items of a list reply, a cut reply's complete ones included: `parse_items('{"items":
    ["Калуга", "Выбо')` is ["Калуга"]. Empty strings and repeats dropped, at most MAX_ITEMS."""
    try:
        found = json.loads(text).get("items", [])
        found = found if isinstance(found, list) else []
    except (ValueError, AttributeError):
        body = text.split("[", 1)[1] if "[" in text else ""
        found = []
        for match in _STRING.finditer(body):
            if body[match.end():].lstrip()[:1] in (",", "]"):  # a string the cut left whole
                try:
                    found.append(json.loads(f'"{match.group(1)}"'))
                except ValueError:
                    continue
    out: list[str] = []
    for item in (" ".join(str(x).split()).strip(" .;") for x in found):
        if item and item not in out:
            out.append(item)
    return out[:MAX_ITEMS]


def grounded(item: str, material: str) -> bool:
    """Every word of the item stands in the material (`_covered`): the reader listed what it read,
    not what it made up."""
    return _covered(item, material)


def kept_items(reply: str, ask: list, question: str, lang: str) -> list[str]:
    """The items of a list reply to `ask` (a `list_chat` of `question`) that stand in its facts
    (`grounded`), less one saying there is no information and someone else's
    (`decide.someone_elses_item`: the sister's trip to «В какие города я ездила?»)."""
    no_info, lines = _stems(NO_INFO[lang]), answer_step.material(ask, question)
    return [i for i in parse_items(reply) if grounded(i, ask[-1]["content"]) and _stems(i) != no_info
            and not someone_elses_item(question, i, lines)]


def union_items(lists: Sequence[Sequence[str]]) -> list[str]:
    """The items of several lists, in order, less one whose every word another holds (`_covered`:
    «змей» beside «до дрожи боится змей»); of two that hold each other, the first."""
    found = [item for each in lists for item in each]
    out: list[str] = []
    for i, item in enumerate(found):
        if not any(_covered(item, other) and (i > j or not _covered(other, item))
                   for j, other in enumerate(found) if j != i):
            out.append(item)
    return out[:MAX_ITEMS]


def on_topic(found: Sequence[str], held: Sequence[tuple[str, str]], lines: Sequence[tuple[str, str]]) -> list[str]:
    """The items of `found` that belong to what the answer rests on: an item is dropped where every
    fact line of `lines` (topic, line) holding it stands under a topic none of the answer's `held`
    lines does («Тверь» under «детство», to «В каких городах я играл концерты?»). Items no fact line
    holds are kept, and all where the answer rests on no fact."""
    topics = {topic for topic, _ in held if topic and topic not in answer_step.NOT_FACTS}
    if not topics:
        return list(found)
    facts = [(topic, line) for topic, line in lines if topic and topic not in answer_step.NOT_FACTS]
    out = []
    for item in found:
        under = {topic for topic, line in facts if _covered(item, f"{topic} {line}")}
        if not under or under & topics:
            out.append(item)
    return out


def joined(answer: str, found: Sequence[str], held: Sequence[tuple[str, str]], lines: Sequence[tuple[str, str]],
           lang: str, question: str) -> tuple[str, list[str]]:
    """The list join as the contest makes it, for an answer that stands: the items of `found` of the
    topics its lines `held` stand under (`on_topic`, over the material `lines`), those it and its
    question leave out joined to it (`joined_values`). -> (the answer, the items kept)."""
    kept = on_topic(found, held, lines)
    return joined_values(answer, kept, lang, question), kept


def listed(llm, chat: list, question: str, lang: str) -> tuple[list[str], list]:
    """The items the reader lists from the answer chat's facts, asked both ways in one batched call
    (`list_chats`, `union_items`), and the generations spent."""
    asks = list_chats(chat, lang)
    replies = llm.generate(asks, max_tokens=LIST_MAX_TOKENS, schema=LIST_SCHEMA, purpose=ITEMS)
    return union_items([kept_items(r.text, ask, question, lang) for r, ask in zip(replies, asks)]), list(replies)
