"""The answer stage's decision: the reader's answer bound to its evidence, and the checks the run's
own model has earned.

The reader answers plainly; then, in the same chat, it copies the material's lines that answer
rests on, in JSON held by a schema (`cite` in `prompts/answer.*.yaml`). `decide` turns the two into
the contest's answer — a pure function of the question, the reply, the material and the switches,
so the contest class and `bench/` replaying a recorded reply give the same verdict:

    reply = cited(draft.text, cite.text)
    verdict = decide(question, reply, material(chat, question), switches, p_yes)

Each check declines an answer on its own evidence (`CHECKS`); which are on is the run's own
model's calibration's to say (`switch`): a check is on only where, on the calibration set's
replies by the same model, it declines more unanswerable questions than it costs answerable ones
by the gate's rule (`gate.calibrate`). A check written for a small reader's errors thereby turns
itself off for a reader it trips.
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
    """The answer prompt `chat` answered with the reader's plain `draft`, then asked which lines it
    rests on (`cite` in `prompts/answer.*.yaml`): the draft's prompt is the call's prefix, so a
    server that caches prefixes reads only the draft and the ask anew."""
    return chat + [{"role": "assistant", "content": draft},
                   {"role": "user", "content": prompts.text("answer", lang, "cite")}]


def asks_cite(draft: str) -> bool:
    """Whether the cited stage asks for the lines of this plain answer: not where, cleaned
    (`answer.clean_answer`), it is empty or the reader's own "no information", which `decide`
    declines as the reader's own whatever it would quote."""
    text = answer_step.clean_answer(draft)
    return bool(text) and not answer_step.says_no_info(text)


@dataclass(frozen=True)
class Reply:
    """The reader's reply, read: its answer (None where it gave none) and the lines it quoted."""
    answer: Optional[str]
    quotes: tuple = ()


def cited(draft: str, raw: str) -> Reply:
    """The reply of the cited stage: the plain `draft` as its answer, with the quotes of the cite
    call's `raw` reply (`quotes_of`)."""
    return Reply(answer=answer_step.clean_answer(draft), quotes=quotes_of(raw))


def quotes_of(raw: str) -> tuple:
    """The cite reply's quotes; a reply the token cap cut keeps the quotes it completed and its last
    one up to its last whole word (the words it has stand in its line); one that is not JSON quotes
    nothing."""
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
    """The JSON strings of a text cut short, read: each whole one, and the last, cut, up to its last
    whole word (a cut word dropped); empty ones left out."""
    found = (_unescaped(body if end else body.rpartition(" ")[0]) for body, end in _OPEN_STRING.findall(text))
    return [string for string in found if string]


def _unescaped(body: str) -> str:
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return ""


# ---------------------------------------------------------------- asking the reader


def replies(llm, chats: Sequence[list], lang: str, draft_tokens: int, purpose: str):
    """The reader's replies to answer prompts `chats`, in one batched call per step: the plain
    answer (`draft_tokens` at most), then for each that is not the reader's own "no information"
    the lines it rests on (`cite_chat`). -> (a Reply per chat, None where the reader gave nothing
    usable at all; the generations, for the caller's ledger)."""
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
    """The material lines (topic, line) that hold one of the reply's quotes: most of the quote's
    words (`QUOTE_MIN_SHARE`; its session marker aside) stand in the line, so a quote with its case
    or a word changed still points at its line, and one the reader made up points at none."""
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
    """The answer names nothing the question does not (`answer.adds_nothing`), or gives no number
    where the question asks a measure (`no_number`); one that opens with yes or no answers a
    question that asks it in any form («Правда, что я работаю штукатуром?» →
    «Да, вы работаете штукатуром.»)."""
    if says_yes_or_no(reply.answer):
        return False
    return answer_step.adds_nothing(reply.answer, question) or no_number(question, reply.answer)


def says_yes_or_no(answer: str) -> bool:
    """An answer that opens with yes or no («Да, у вас есть собака — …»): it answers a question that
    asks yes or no, whatever detail follows, so the value checks do not read that detail."""
    return WORD.findall(answer.lower())[:1] in (["да"], ["нет"], ["yes"], ["no"])


def no_number(question: str, answer: str) -> bool:
    """A question asking a measure («Сколько лет …?», «Какой у меня оклад?»: `answer.asked_measures`)
    answered without any number («Собака пользователя — кобель.») says nothing of what it asks."""
    return bool(answer_step.asked_measures(question)) and not any(
        answer_step.is_count(w) for w in answer_step.lemmas_of(answer))


def elsewhere(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer's value belongs to someone else: in the quoted lines that hold it (all the material
    where none does: a small reader quotes the line about the person asked and gives a value from
    another, «Его зовут Ежевика.» quoting «Пользователю нравится мужчина с работы.»), it stands
    only beside another person than the question asks about (`answer.someone_elses`), the user's
    own thing asked and only another person's given (`others_only`), or the user's own person asked
    and only another's named (`another_owner`)."""
    if says_yes_or_no(reply.answer):
        return False
    named = answer_step.beyond(reply.answer, question)
    rests = [(topic, line) for topic, line in held if named & answer_step.lemmas_of(f"{topic} {line}")]
    return (answer_step.someone_elses(reply.answer, question, rests or lines)
            or (bool(held) and (others_only(question, reply.answer, held) or another_owner(question, held))))


def someone_elses_item(question: str, item: str, lines: list) -> bool:
    """A listed item (items.py) that is someone else's, read as `elsewhere` reads an answer quoting
    the material lines that hold all it names: «рыбалка» to «Чем занимается мой сын?» from «Муж
    пользователя Сергей увлекается рыбалкой.», «французский» to «Какие языки я учу?» from «Коллега
    пользователя Инна знает французский.». An item no line holds whole is not judged here, nor one
    whose first noun is a person («двоюродный брат» to «Кто из родни гостил у меня?»: the item is
    the person)."""
    head = next((p for p in answer_step._parses(item) if "NOUN" in p.tag), None)
    if head is not None and "anim" in head.tag:
        return False
    named = answer_step.named_in(item)
    held = [(topic, line) for topic, line in lines if named <= answer_step.lemmas_of(f"{topic} {line}")]
    return bool(held) and elsewhere(question, Reply(item), held, lines)


def holding(answer: str, question: str, held: list) -> list:
    """The lines of `held` that hold the answer's value: a number it gives (`_given`) or a word it
    names beyond the question (`answer.beyond`, by lemma); all of `held` where none does."""
    given, named = _given(answer, question), answer_step.beyond(answer, question)
    found = [(topic, line) for topic, line in held
             if given & _numbers_of(f"{topic} {line}") or named & answer_step.lemmas_of(f"{topic} {line}")]
    return found or held


def ungrounded(question: str, reply: Reply, held: list, lines: list) -> bool:
    """What the answer names beyond the question stands nowhere in the material: not one of its
    words (numbers and their units aside, `answer.is_count`, `answer.is_unit`: «килограммов» for
    «кг») in a line or topic, by lemma or stem (`answer.mentions_any`). «Вы состоите в партии
    "Зелёный мост".» where no line names a party. Read against all the lines, not only the quoted
    ones: a reader that quotes the line beside its value has still read the value. Russian only
    (an English reader puts more in its own words), and a yes or no is not read here."""
    if detect_lang(question) != "ru" or says_yes_or_no(reply.answer):
        return False
    named = {w for w in answer_step.beyond(reply.answer, question)
             if not answer_step.is_count(w) and not answer_step.is_unit(w)}
    return bool(named) and not answer_step.mentions_any(
        {w for topic, line in lines for w in answer_step.lemmas_of(f"{topic} {line}")}, named)


def unquoted_number(question: str, reply: Reply, held: list, lines: list) -> bool:
    """The answer gives numbers (beyond the question's) and none of them stands in the lines it rests
    on (in the material where it quoted none): «Полине 14 лет.» quoting «Дочь пользователя Полина
    ходит в художественную школу.». A small reader asked an age, a sum or a count the material does
    not hold writes one and quotes the lines about the person asked; a reader that read its number
    quotes it. Numbers in digits (`_given`: a session marker the answer copied aside), a line's
    session references aside (`_numbers_of`), and the date of the session each line was said in
    (`_headings`: the prompt asks an excerpt's «on Friday» read by it); a yes or no is not read here."""
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
    """The session headings of the excerpts above the lines of `held` («### Session 4 (3:10 pm on 2
    May, 2023)»), each once, its session's number aside (an index, not a value; a Russian heading
    names nothing else)."""
    wanted, heading, found = set(held), None, []
    for topic, line in lines:
        if line.startswith("###"):
            heading = _SESSION_NUMBER.sub(" ", line)
        elif (topic, line) in wanted and heading is not None and heading not in found:
            found.append(heading)
    return found


def _given(answer: str, question: str) -> set:
    """The numbers an answer gives beyond its question's (`numbers`), a session marker it copied
    from the material («[сессия 8] Пёс породы бигль.») aside: the marker is where a fact was said, not
    a value."""
    return numbers(_MARKER.sub(" ", answer)) - numbers(question)


# A fact's earlier version names its session as `slots.render` writes it: «(раньше: «…», сессия 40)».
_VERSION_SESSION = re.compile(r"(?<=»),\s*(?:сессия|session)\s+\d+(?=\s*[;)])")


def _numbers_of(line: str) -> set:
    """The numbers a material line gives, by part (`numbers`): the session a fact's earlier version
    names («(раньше: «кружка», сессия 40)») is no value of anything; a session the user speaks of
    («зимняя сессия 25 января») keeps its number."""
    return numbers(_VERSION_SESSION.sub("", line), parts=True)


_NUMBER = re.compile(r"\d{1,3}(?:[ \u00a0]\d{3})+(?!\d)|\d+(?:[.,]\d+)*")  # «180 000», «1,5», «12.03.2024»


def numbers(text: str, parts: bool = False) -> set:
    """A text's numbers in digits by their significant digits («180 000», «180000» and the «180» of
    «180 тысяч» alike: «18»; «1,5 млн» and «1 500 000»: «15»), so a sum written another way still
    matches; with `parts`, each digit run of a number too («12.03.2024»: «12», «3», «2024»), as the
    lines an answer rests on are read (a date's day is its part). Lenient by design: «10» and «1» are
    one key, so the check declines less, never more."""
    found = _NUMBER.findall(text)
    runs = [run for number in found for run in re.findall(r"\d+", number)] if parts else []
    return {key for digits in [re.sub(r"\D", "", number) for number in found] + runs if (key := digits.strip("0"))}


CHECKS = {"unquoted": unquoted, "empty": empty, "elsewhere": elsewhere, "ungrounded": ungrounded,
          "unquoted_number": unquoted_number}
GATE = "gate"  # the P(yes) gate (gate.py): a call of its own before the answer, switched like the checks
OWN = "own"  # the reader's own "no information"


def others_only(question: str, answer: str, held: list) -> bool:
    """A question about the user's own thing («Сколько я зарабатываю?»: it asks about no one else,
    `answer.asked_about`) whose every quoted line that holds the answer's value (`holding`) is a
    fact about another person's — a person owned by the user («Зарплата мужа пользователя …»,
    «Сестра пользователя Лена …»): an animate noun right before «пользователя» that the question
    does not name. Russian facts only: the excerpts' lines are the user's own words, which name
    their owner in no fixed way."""
    if detect_lang(question) != "ru" or answer_step.asked_about(question):
        return False
    asked = answer_step.named_in(question)
    return all(any(not answer_step.mentions_any({person}, asked) for person in _owned_people(line))
               for _, line in holding(answer, question, held))


_MINE = frozenset(("мой", "наш"))


def another_owner(question: str, held: list) -> bool:
    """A question about the user's own person («Сколько лет моей тёте?»: a possessive «мой»/«наш» and
    a person asked about, `answer.asked_about`) whose quoted lines name that person only as someone
    else's: right after each mention stands another owner in the genitive, a name or a person
    other than the user («Маму Сергея зовут …», «Сестра мужа …»). Lines that do not mention the
    person are not read here. Russian only."""
    if detect_lang(question) != "ru":
        return False
    parses = answer_step._parses(question)
    about = answer_step.asked_about(question)
    if not about or not any(p.normal_form in _MINE for p in parses):
        return False
    mentioning = [owners for owners in (_owners(line, about) for _, line in held) if owners]
    return bool(mentioning) and all(all(owner is not None for owner in owners) for owners in mentioning)


def _owners(line: str, about: set) -> list:
    """For each mention in a line of a person in `about` (by lemma or kin), its owner named right
    after it: another person's lemma, or None where no other owner follows (the user's, or bare)."""
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
    """The people a fact line says the user has, by lemma: each animate noun right before
    «пользователя»/«пользователю»/… («мужа пользователя»: «муж»)."""
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
    """The fact line (topic, its current part) whose earlier version the answer gives: the answer
    names every word of one of a fact's earlier values («(раньше: «Opel Astra», сессия 9)»: «Opel»
    and «Astra»; an attribute an old value mentions beside others is no restatement of it), none
    of what the fact now adds to it («ведущий инженер» is the news of «(раньше: «инженер»)»), and no
    other fact as it stands names what the answer does (that fact's own news may name it: «продал
    Астру»). «У вас Opel Astra.» to «На чём я езжу?» where the facts hold «Пользователь продал Астру
    и купил Geely Coolray. (раньше: «Opel Astra», сессия 9)»: the answer is that fact as it stands
    now (the latest such line). None where the question asks about the past (a verb in the past
    tense, «раньше»), for a yes or no, and in English (its facts mark no versions in Russian
    words)."""
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
    """«Кем я работал раньше?», «Какая у меня была машина?»: a verb in the past tense, or «раньше»."""
    return any("past" in p.tag for p in answer_step._parses(question)) or "раньше" in answer_step.lemmas_of(question)


# ---------------------------------------------------------------- the decision


@dataclass(frozen=True)
class Switches:
    """Which checks are on for this run's reader, and why (the calibration's words); `threshold`:
    the gate's P(yes) below which it declines, where the gate is on."""
    on: frozenset = frozenset(CHECKS)
    threshold: Optional[float] = None
    why: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Verdict:
    """The contest's answer: `text`, and where it declined, `declined_by` (a check's name, GATE,
    or OWN); `held` the material lines the answer rests on; `superseded` where the reader's answer
    gave an earlier version of a fact and `text` is the fact as it stands now (`superseded`)."""
    text: str
    declined_by: Optional[str] = None
    held: tuple = ()
    superseded: bool = False

    @property
    def declined(self) -> bool:
        return self.declined_by is not None


def decide(question: str, reply: Optional[Reply], lines: Sequence[tuple[str, str]], switches: Switches,
           p_yes: Optional[float] = None) -> Verdict:
    """The answer to `question` from the reader's `reply` (None: the gate declined before it was
    asked) over the answer prompt's material `lines` (`answer.material`): declined by the gate below
    its threshold where it speaks for the question's form (`gate.speaks_for`: the contest class does
    not ask it of a Russian yes/no question, and a replay of a recorded P(yes) reads it alike), by the
    reader itself, or by the first check that is on and finds it wanting; else the reply's answer."""
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
    """One calibration prompt as the run's reader answered it: its question, whether its dialogue
    answers it, the reply (None: none readable), the material lines, the gate's P(yes)."""
    question: str
    answerable: bool
    reply: Optional[Reply]
    lines: tuple
    p_yes: Optional[float] = None

    @classmethod
    def of(cls, item: dict, reply: Optional[Reply], p_yes: Optional[float] = None) -> "Calibrated":
        """The row of a calibration set's prompt `item` (`gate.load_set`: its question, whether it is
        answerable, its messages) and the reader's `reply` to it."""
        lines = tuple(answer_step.material(item["messages"], item["question"]))
        return cls(item["question"], bool(item["answerable"]), reply, lines, p_yes)


def switch(rows: Sequence[Calibrated], threshold: Optional[float] = None, no_answer_share: float = 0.25) -> Switches:
    """The checks this reader has earned on the calibration set: the gate where its own calibration
    set a `threshold` (`gate.calibrate`; None: off), then each check in `CHECKS`' order, read on the
    answers still standing after the gate, the reader's own declines and the checks already on, is
    on where it wins more than it loses by the gate's rule: the share of unanswerable prompts it
    declines times `no_answer_share` above the share of answerable ones times the rest (every
    answerable prompt declined counted as an answer lost, right or not)."""
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
