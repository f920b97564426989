"""The answer stage's decision: the reader's plain answer, the material lines it says it rests on
(`cite`), and the checks its own calibration turned on (`switch`), made one `Verdict` by `decide`,
a pure function that the contest class (`dialogue`) and `bench/` replaying a recording both call.
A check is on only where, on the calibration set, it declines more unanswerable questions than it
costs answerable ones (`gate.calibrate`'s rule), so a check that trips a reader turns itself off.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from .. import prompts
from . import answer as answer_step
from .answer import _MARKER  # a fact's «[сессия 8]», which the material drops
from .gate import speaks_for
from .lang import NO_INFO, WORD, detect_lang
from .lexical import morph
from .slots import LABELS

QUOTE_MIN_SHARE = 0.8  # of a quote's words that must stand in one line of the material (`quoted`)
CITE_MAX_TOKENS = 256  # three or four whole lines, an excerpt's among them (a cut one keeps its words: `quotes_of`)
CITE_SCHEMA = {"type": "object", "properties": {"quotes": {"type": "array", "items": {"type": "string"}}},
               "required": ["quotes"]}


def cite_chat(chat: list, draft: str, lang: str) -> list:
    """The answer chat, the reader's `draft`, and the ask for the lines it rests on: the answer
    prompt stays the prefix, so a prefix cache reads only the draft and the ask anew."""
    return chat + [{"role": "assistant", "content": draft},
                   {"role": "user", "content": prompts.text("answer", lang, "cite")}]


def asks_cite(draft: str) -> bool:
    """Whether the lines of this draft are worth asking for: not where it is empty or the reader's
    own "no information", which `decide` declines whatever it would quote."""
    text = answer_step.clean_answer(draft)
    return bool(text) and not answer_step.says_no_info(text)


@dataclass(frozen=True)
class Reply:
    """The reader's reply, read: its answer (None where it gave none) and the lines it quoted."""
    answer: Optional[str]
    quotes: tuple = ()


def cited(draft: str, raw: str) -> Reply:
    """The `draft` as the answer, with the quotes of the cite call's `raw` reply."""
    return Reply(answer=answer_step.clean_answer(draft), quotes=quotes_of(raw))


def quotes_of(raw: str) -> tuple:
    """The cite reply's quotes; a reply the token cap cut keeps its last quote up to its last whole
    word; one that is not JSON quotes nothing."""
    text = (raw or "").strip()
    try:
        data = json.loads(text)
    except ValueError:  # cut: every string after the key is a quote (a quote's «[сессия 16]» ends no list)
        head = text.partition('"answer"')[0].partition('"quotes"')[2]  # a reply with more keys: its quotes'
        data = {"quotes": _open_strings(head)} if text.startswith("{") else None
    value = data.get("quotes") if isinstance(data, dict) else None
    return tuple(str(v).strip() for v in value if str(v).strip()) if isinstance(value, list) else ()


_OPEN_STRING = re.compile(r'"((?:[^"\\]|\\.)*)(?:(")|\\?$)')  # a JSON string, or one cut at the text's end


def _open_strings(text: str) -> list:
    """The JSON strings of a cut text, the last up to its last whole word; empty ones left out."""
    found = (_unescaped(body if end else body.rpartition(" ")[0]) for body, end in _OPEN_STRING.findall(text))
    return [string for string in found if string]


def _unescaped(body: str) -> str:
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return ""


# ---------------------------------------------------------------- asking the reader


def replies(llm, chats: Sequence[list], lang: str, draft_tokens: int, purpose: str):
    """The reader's replies to the answer chats, one batched call a step: the drafts, then the lines
    of each worth asking for (`asks_cite`). -> (a Reply or None a chat, the generations spent)."""
    drafts = llm.generate(list(chats), max_tokens=draft_tokens, purpose=purpose)
    asked = [i for i, g in enumerate(drafts) if asks_cite(g.text)]
    cites = llm.generate([cite_chat(chats[i], drafts[i].text, lang) for i in asked], max_tokens=CITE_MAX_TOKENS,
                         schema=CITE_SCHEMA, purpose=purpose)
    raw = dict(zip(asked, (g.text for g in cites)))
    # a draft with no letter or digit is no reply at all (the contest counts it: EMPTY_ANSWER)
    out = [cited(g.text, raw.get(i, "")) if answer_step.clean_answer(g.text) else None for i, g in enumerate(drafts)]
    return out, list(drafts) + list(cites)


# ---------------------------------------------------------------- the checks


def quoted(reply: Reply, lines: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The material lines (topic, line) holding most words of one of the reply's quotes
    (`QUOTE_MIN_SHARE`): a quote with a word changed still finds its line, a made-up one none."""
    wanted = [[w.lower() for w in WORD.findall(_MARKER.sub(" ", q))] for q in reply.quotes]
    wanted = [words for words in wanted if words]
    found = []
    for topic, line in lines:
        have = {w.lower() for w in WORD.findall(f"{topic} {line}")}
        if any(sum(w in have for w in words) >= QUOTE_MIN_SHARE * len(words) for words in wanted):
            found.append((topic, line))
    return found


def unquoted(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer rests on no line of the material: the reader quoted none, or none that stands there."""
    return not held


def empty(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer names nothing the question does not (`answer.adds_nothing`), or no number where a
    measure is asked (`no_number`); a yes or no is never empty."""
    if says_yes_or_no(reply.answer):
        return False
    return answer_step.adds_nothing(reply.answer, question) or no_number(question, reply.answer)


def says_yes_or_no(answer: str) -> bool:
    """An answer that opens with yes or no («Да, у вас есть собака — …»): the value checks skip it."""
    return WORD.findall(answer.lower())[:1] in (["да"], ["нет"], ["yes"], ["no"])


def no_number(question: str, answer: str) -> bool:
    """A measure asked (`answer.asked_measures`: «Какой у меня оклад?») and no number given."""
    return bool(answer_step.asked_measures(question)) and not any(
        answer_step.is_count(w) for w in answer_step.lemmas_of(answer))


def elsewhere(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer's value is someone else's: in the quoted lines holding it (else all the material)
    it stands only beside another person than the one asked about (`answer.someone_elses`), or the
    user's own thing or person is asked and only another's given (`others_only`, `another_owner`)."""
    if says_yes_or_no(reply.answer):
        return False
    named = answer_step.beyond(reply.answer, question)
    rests = [(topic, line) for topic, line in held if named & answer_step.lemmas_of(f"{topic} {line}")]
    return (answer_step.someone_elses(reply.answer, question, rests or lines)
            or (bool(held) and (others_only(question, reply.answer, held) or another_owner(question, held))))


def someone_elses_item(question: str, item: str, lines: list) -> bool:
    """A listed item (items.py) that is someone else's, read as `elsewhere` reads an answer quoting the
    lines that hold all it names («рыбалка» to «Чем занимается мой сын?» from the husband's line).
    Not judged: an item no line holds whole, or one naming a person («двоюродный брат»)."""
    head = next((p for p in answer_step._parses(item) if "NOUN" in p.tag), None)
    if head is not None and "anim" in head.tag:
        return False
    named = answer_step.named_in(item)
    held = [(topic, line) for topic, line in lines if named <= answer_step.lemmas_of(f"{topic} {line}")]
    return bool(held) and elsewhere(question, Reply(item), held, lines)


def holding(answer: str, question: str, held: list) -> list:
    """The lines of `held` holding a number or a word the answer gives beyond the question; else all."""
    given, named = _given(answer, question), answer_step.beyond(answer, question)
    found = [(topic, line) for topic, line in held
             if given & _numbers_of(f"{topic} {line}") or named & answer_step.lemmas_of(f"{topic} {line}")]
    return found or held


def ungrounded(question: str, reply: Reply, held: list, lines: list) -> bool:
    """Not one word the answer names beyond the question (numbers and units aside) stands anywhere
    in the material, by lemma or stem (`answer.mentions_any`). Russian only; a yes or no is skipped."""
    if detect_lang(question) != "ru" or says_yes_or_no(reply.answer):
        return False
    named = {w for w in answer_step.beyond(reply.answer, question)
             if not answer_step.is_count(w) and not answer_step.is_unit(w)}
    return bool(named) and not answer_step.mentions_any(
        {w for topic, line in lines for w in answer_step.lemmas_of(f"{topic} {line}")}, named)


def unquoted_number(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer gives numbers beyond the question's and none stands in its quoted lines (the
    material where it quoted none) or their sessions' dates: «Полине 14 лет.» quoting a line about
    Polina's art school. A yes or no is skipped."""
    if says_yes_or_no(reply.answer):
        return False
    given = _given(reply.answer, question)
    if not given:  # most answers: no number to look for in the lines
        return False
    where = held or lines
    return not given & ({n for topic, line in where for n in _numbers_of(f"{topic} {line}")}
                        | {n for heading in _headings(where, lines) for n in numbers(heading, parts=True)})


_SESSION_NUMBER = re.compile(r"(?:сессия|session)\s+\d+", re.IGNORECASE)


def _headings(held: list, lines: list) -> list:
    """The excerpt headings above the lines of `held` («### Session 4 (3:10 pm on 2 May, 2023)»), each
    once, without the session's number (an index, not a value)."""
    wanted, heading, found = set(held), None, []
    for topic, line in lines:
        if line.startswith("###"):
            heading = _SESSION_NUMBER.sub(" ", line)
        elif (topic, line) in wanted and heading is not None and heading not in found:
            found.append(heading)
    return found


def _given(answer: str, question: str) -> set:
    """The numbers an answer gives beyond its question's, a copied session marker aside."""
    return numbers(_MARKER.sub(" ", answer)) - numbers(question)


# A fact's earlier version names its session as `slots.render` writes it: «(раньше: «…», сессия 40)».
_VERSION_SESSION = re.compile(r"(?<=»),\s*(?:сессия|session)\s+\d+(?=\s*[;)])")


def _numbers_of(line: str) -> set:
    """A material line's numbers by part, less the session an earlier version names (no value)."""
    return numbers(_VERSION_SESSION.sub("", line), parts=True)


_NUMBER = re.compile(r"\d{1,3}(?:[ \u00a0]\d{3})+(?!\d)|\d+(?:[.,]\d+)*")  # «180 000», «1,5», «12.03.2024»


def numbers(text: str, parts: bool = False) -> set:
    """A text's numbers by their significant digits, so a sum written another way still matches
    («180 000» and «180 тысяч»: «18»); with `parts`, each digit run too («12.03.2024»: «12», «3»,
    «2024»). Lenient: «10» and «1» are one key, so the check declines less, never more."""
    found = _NUMBER.findall(text)
    runs = [run for number in found for run in re.findall(r"\d+", number)] if parts else []
    return {key for digits in [re.sub(r"\D", "", number) for number in found] + runs if (key := digits.strip("0"))}


CHECKS = {"unquoted": unquoted, "empty": empty, "elsewhere": elsewhere, "ungrounded": ungrounded,
          "unquoted_number": unquoted_number}
GATE = "gate"  # the P(yes) gate (gate.py): a call of its own before the answer, switched like the checks
OWN = "own"  # the reader's own "no information"


def others_only(question: str, answer: str, held: list) -> bool:
    """The user's own thing asked («Сколько я зарабатываю?») and every quoted line holding the value
    is about a person of the user's the question does not name («Зарплата мужа пользователя …»).
    Russian facts only."""
    if detect_lang(question) != "ru" or answer_step.asked_about(question):
        return False
    asked = answer_step.named_in(question)
    return all(any(not answer_step.mentions_any({person}, asked) for person in _owned_people(line))
               for _, line in holding(answer, question, held))


_MINE = frozenset(("мой", "наш"))


def another_owner(question: str, held: list) -> bool:
    """The user's own person asked («Сколько лет моей тёте?») and every quoted line mentioning that
    person names them as another's («Маму Сергея зовут …», «Сестра мужа …»). Russian only."""
    if detect_lang(question) != "ru":
        return False
    parses = answer_step._parses(question)
    about = answer_step.asked_about(question)
    if not about or not any(p.normal_form in _MINE for p in parses):
        return False
    mentioning = [owners for owners in (_owners(line, about) for _, line in held) if owners]
    return bool(mentioning) and all(all(owner is not None for owner in owners) for owners in mentioning)


def _owners(line: str, about: set) -> list:
    """For each mention of a person in `about`, the other owner named right after it, or None."""
    words = WORD.findall(line)
    out = []
    for i, word in enumerate(words):
        lemma = morph().parse(word.lower())[0].normal_form.replace("ё", "е")
        if not answer_step.mentions_any({lemma}, about):
            continue
        after = morph().parse(words[i + 1])[0] if i + 1 < len(words) else None
        other = (after is not None and "gent" in after.tag and not after.normal_form.startswith("пользовател")
                 and ({"Name", "Surn"} & after.tag.grammemes or ("NOUN" in after.tag and "anim" in after.tag)))
        out.append(after.normal_form if other else None)
    return out


def _owned_people(line: str) -> set:
    """The user's people a fact line names: animate nouns right before «пользователя» («муж»)."""
    words = [w.lower() for w in WORD.findall(line)]
    found = set()
    for before, word in zip(words, words[1:]):
        if word.startswith("пользовател") and before != "у":
            parse = morph().parse(before)[0]
            if "NOUN" in parse.tag and "anim" in parse.tag:
                found.add(parse.normal_form.replace("ё", "е"))
    return found


# ---------------------------------------------------------------- an earlier version given


_EARLIER = re.compile(rf"\s*\({LABELS['ru'][1]}: (.*)\)\s*$")  # a fact's earlier versions (`slots.render`)
_VERSION_VALUE = re.compile(r"«([^»]*)»")  # each earlier version's value in them


def superseded(question: str, answer: str, lines: Sequence[tuple[str, str]]) -> Optional[tuple[str, str]]:
    """The fact line (topic, current part) whose earlier version the answer restates: every word of
    an earlier value named, none of the fact's news, and no other current fact naming the answer's
    words («У вас Opel Astra.» where a fact now says «…купил Geely Coolray. (раньше: «Opel Astra»…)»).
    None for a question about the past, a yes or no, and in English."""
    if detect_lang(question) != "ru" or says_yes_or_no(answer) or _asks_the_past(question):
        return None
    named = {w for w in answer_step.beyond(answer, question) if not answer_step.is_count(w)}
    if not named:
        return None
    said = answer_step.lemmas_of(answer)
    older, now = [], []
    for topic, line in lines:
        if topic in answer_step.NOT_FACTS:
            continue
        earlier = _EARLIER.search(line)
        current = line[:earlier.start()] if earlier else line
        values = [answer_step.named_in(v) for v in _VERSION_VALUE.findall(earlier.group(1))] if earlier else []
        if any(v and all(answer_step.mentions_any(said, {w}) for w in v) for v in values) \
                and not answer_step.mentions_any(answer_step.lemmas_of(current) - set().union(*values), named):
            older.append((topic, current))  # restated, and nothing of the fact's news named
        else:
            now.append(current)
    if not older or any(answer_step.mentions_any(answer_step.lemmas_of(line), named) for line in now):
        return None  # no earlier version gives the value, or another fact as it stands does
    return older[-1]


def _asks_the_past(question: str) -> bool:
    """A verb in the past tense, or «раньше»: «Какая у меня была машина?»."""
    return any("past" in p.tag for p in answer_step._parses(question)) or "раньше" in answer_step.lemmas_of(question)


# ---------------------------------------------------------------- the decision


@dataclass(frozen=True)
class Switches:
    """The checks on for this run's reader and why; the gate's P(yes) `threshold` where it is on."""
    on: frozenset = frozenset(CHECKS)
    threshold: Optional[float] = None
    why: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Verdict:
    """The contest's answer `text`; `declined_by` a check's name, GATE or OWN; `held` the lines it
    rests on; `superseded` where `text` is the current fact the reader gave an old version of."""
    text: str
    declined_by: Optional[str] = None
    held: tuple = ()
    superseded: bool = False

    @property
    def declined(self) -> bool:
        return self.declined_by is not None


def decide(question: str, reply: Optional[Reply], lines: Sequence[tuple[str, str]], switches: Switches,
           p_yes: Optional[float] = None) -> Verdict:
    """The answer from the reader's `reply` (None: not asked) over the material `lines`: declined by
    the gate below its threshold (for the forms it speaks for), by the reader itself, or by the first
    check on that finds it wanting; else the reply's answer, or the current fact it restated."""
    no = NO_INFO[detect_lang(question)]
    gated = GATE in switches.on and switches.threshold is not None and speaks_for(question)
    if gated and p_yes is not None and p_yes < switches.threshold:
        return Verdict(no, GATE)
    if reply is None or not reply.answer or answer_step.says_no_info(reply.answer):
        return Verdict(no, OWN)
    lines = list(lines)
    held = quoted(reply, lines)
    for name, check in CHECKS.items():
        if name in switches.on and check(question, reply, held, lines):
            return Verdict(no, name, tuple(held))
    now = superseded(question, reply.answer, lines)
    if now is not None:
        return Verdict(now[1], None, (now,), superseded=True)
    return Verdict(reply.answer, None, tuple(held))


# ---------------------------------------------------------------- the switches, from the calibration


@dataclass(frozen=True)
class Calibrated:
    """One calibration prompt as the run's reader answered it."""
    question: str
    answerable: bool
    reply: Optional[Reply]
    lines: tuple
    p_yes: Optional[float] = None

    @classmethod
    def of(cls, item: dict, reply: Optional[Reply], p_yes: Optional[float] = None) -> "Calibrated":
        """The row of a calibration prompt `item` (`gate.load_set`) and the reader's `reply`."""
        lines = tuple(answer_step.material(item["messages"], item["question"]))
        return cls(item["question"], bool(item["answerable"]), reply, lines, p_yes)


def switch(rows: Sequence[Calibrated], threshold: Optional[float] = None, no_answer_share: float = 0.25) -> Switches:
    """The checks the reader earned on the calibration set: the gate where a `threshold` is given,
    then each check in `CHECKS`' order, on the answers still standing, on where the unanswerable
    share it declines times `no_answer_share` beats the answerable share times the rest."""
    kinds = {True: sum(r.answerable for r in rows), False: sum(not r.answerable for r in rows)}
    on, why = set(), {}
    if threshold is not None:
        on.add(GATE)
        why[GATE] = f"on below P(yes) {threshold} (gate.calibrate)"
    standing = [r for r in rows if not decide(r.question, r.reply, r.lines, Switches(frozenset(on), threshold),
                                              r.p_yes).declined]
    held = {id(r): quoted(r.reply, list(r.lines)) for r in standing}  # once a row, read by every check
    for name, check in CHECKS.items():
        hit = {kind: [r for r in standing if r.answerable is kind
                      and check(r.question, r.reply, held[id(r)], list(r.lines))] for kind in kinds}
        share = {kind: len(hit[kind]) / kinds[kind] if kinds[kind] else 0.0 for kind in kinds}
        counts = f"{len(hit[False])}/{kinds[False]} unanswerable, {len(hit[True])}/{kinds[True]} answerable"
        if kinds[False] and share[False] * no_answer_share > share[True] * (1 - no_answer_share):
            on.add(name)
            why[name] = f"on: declines {counts}"
            standing = [r for r in standing if r not in hit[True] and r not in hit[False]]
        else:
            why[name] = f"off: would decline {counts}"
    return Switches(frozenset(on), threshold, why)
