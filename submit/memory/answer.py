"""The answer step: question + packed context (+ facts) -> prompt -> one short sentence.

Called by `dialogue`; `decide` and `items` use its word rules (what an answer names, what a
question asks about). `clean_answer` turns raw model output into the sentence we return, or None.
The optional shorten step keeps a cut only when it is shorter and made of the draft's own words.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

from .. import prompts
from .context import Context
from .lang import NO_INFO, WORD, asks_yes_no, detect_lang  # noqa: F401  (NO_INFO is part of this step's interface)
from .lexical import STOP_EN, STOP_RU, morph, normalize_word
from .slots import FactLine, group_lines, render
from .turns import clean_text

MAX_ANSWER_CHARS = 400
_JUNK = re.compile(r"<\|[a-z_]+\|>|</?s>")
_ALNUM = re.compile(r"[^\W_]")  # a letter or a digit, any script
SHORT_DRAFT_WORDS = 4  # a draft this short is left as it is: no call
# Words a cut answer may use though the draft does not: they join, they carry no fact.
_GLUE = {"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with",
         "и", "или", "в", "во", "на", "с", "со", "к", "по", "за", "из", "у", "о", "об"}


def build_prompt(question: str, context: Context, lang: str, facts: Sequence[FactLine] = (),
                 question_date: Optional[str] = None, people: Sequence[str] = (),
                 ask: Optional[str] = None, task: str = "answer") -> list[dict]:
    """The answer chat, facts under their topics, each line with its session. `task` names the
    profile's answer prompt (a chat between people speaks about `people`, not to "you"); `ask`
    replaces its last line."""
    groups = [{"topic": lines[0].label, "lines": [render(line, lang) for line in lines]}
              for _, lines in group_lines(facts)]
    return prompts.render(task, lang, question=question, context=context.text or "—", facts=groups,
                          question_date=question_date, ask=ask or prompts.text(task, lang, "ask"),
                          people=list(people))


_QUOTE_PAIRS = {'"': '"', "«": "»", "“": "”"}


def _unwrap(answer: str) -> str:
    """The answer without quotes that wrap all of it (`"Yes."` → `Yes.`); a quote that
    belongs to a title inside it stays (`She watched "Little Women."`)."""
    close = _QUOTE_PAIRS.get(answer[:1])
    if close and answer.endswith(close) and len(answer) > 1:
        inner = answer[1:-1]
        if answer[0] not in inner and close not in inner:
            return inner.strip()
    return answer


def clean_answer(raw: str) -> Optional[str]:
    """First non-empty line, special tokens, wrapping quotes, lone surrogates and control characters
    stripped, whitespace runs made one space, capped in length; None when no letter or digit is left
    (`"..."` is no answer). A first line that leads in to what follows (`_lead_in`) takes it along."""
    text = _JUNK.sub("", clean_text(raw))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    answer = " ".join(_lead_in(lines).split())  # tabs and runs of spaces: one space
    answer = _unwrap(_PREAMBLE.sub("", answer).strip())
    if not _ALNUM.search(answer):
        return None
    if len(answer) > MAX_ANSWER_CHARS:
        cut = answer[:MAX_ANSWER_CHARS]
        answer = cut[: cut.rfind(" ")] if " " in cut else cut
    return answer


# «Ответ:», «Вот мой ответ:», and the answer prompt's own last line echoed («Ответ одним предложением:»)
_PREAMBLE = re.compile(r"^(?:(?:вот|here is|here's)\s+)?(?:(?:мой|my)\s+)?(?:one-sentence\s+)?(?:ответ|answer)"
                       r"(?:\s+одним\s+предложением)?\s*:\s*", re.IGNORECASE)
_PRESENTS = re.compile(r"^(?:вот|here)\b", re.IGNORECASE)  # a lead-in that only presents what follows
_ITEM = re.compile(r"^(?:[-•*]|\d{1,2}[.)])\s+")  # a list line's mark: «- », «• », «1. », «2) »


def _lead_in(lines: list[str]) -> str:
    """The first line, or where it ends with a colon and more follows, what it leads in to: the list
    lines after it joined by commas, else the next line; a lead-in that only presents («Вот ответ:»)
    is dropped, any other kept («Выставки: Шишкин, Айвазовский»)."""
    first, rest = lines[0], lines[1:]
    if not first.endswith(":") or not rest:
        return first
    items = [_ITEM.sub("", ln).replace("**", "").strip().rstrip(":") for ln in rest if _ITEM.match(ln)]
    body = ", ".join(i for i in items if i) if items else rest[0].replace("**", "")
    return body if _PRESENTS.match(first) else f"{first} {body}"


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def shorten_prompt(question: str, draft: str, lang: str) -> Optional[list[dict]]:
    """The chat that asks for `draft` cut to what `question` asks; None when there is nothing
    to cut (a draft of a few words, or the no-information reply)."""
    if draft == NO_INFO[lang] or len(_words(draft)) <= SHORT_DRAFT_WORDS:
        return None
    return prompts.render("shorten", lang, question=question, answer=draft)


def _known(word: str, vocabulary: set) -> bool:
    """In the vocabulary, or one of its words with another ending (get / getting, Ирландию / Ирландия)."""
    if word in vocabulary or word in _GLUE:
        return True
    stem = word[: max(3, len(word) - 3)]
    return len(word) >= 3 and any(v.startswith(stem) or (len(v) >= 3 and word.startswith(v)) for v in vocabulary)


def shortened(draft: str, question: str, raw: str) -> str:
    """The cut answer when it is one we can trust, else the draft: it must be shorter than the
    draft and use only words of the draft (or the question), so the step can drop but not invent."""
    cut = clean_answer(raw)
    if not cut or len(cut) >= len(draft):
        return draft
    vocabulary = set(_words(draft)) | set(_words(question))
    return cut if all(_known(w, vocabulary) for w in _words(cut)) else draft


# A session marker the reader copied from the context ("[сессия 14]"): no part of an answer.
_MARKER = re.compile(r"\[(?:сессия|session)[^\]]*\]", re.IGNORECASE)
# Words that address or point and name nothing (the stop lists lack the possessives).
_POINTERS = frozenset("ваш твой наш мой свой его её их your yours my mine our".split())
# The facts' word for the user: an answer that echoes it («Хорька пользователя зовут Марсель.») names nobody.
_THE_USER = frozenset(("пользователь", "user"))
_NUMERALS = frozenset("один два три".split())  # stop words, yet they name something
# A question with none of these asks yes or no, and an answer that repeats it says yes.
_WH = frozenset("кто что какой чей где куда откуда когда сколько как почему зачем отчего "
                "who whom whose what which where when how why".split())
# A quoted title names what it quotes, stop words and all (a show called "That").
_QUOTED = re.compile(r"[«\"“„]([^»\"”“]+)(?:[»\"”“]|$)")


def lemmas_of(text: str) -> set:
    """The lemmas of a text's words (`normalize_word`)."""
    return {normalize_word(w) for w in WORD.findall(text.lower())}


def named_in(text: str) -> set:
    """What a text names, by lemma: its quoted spans' words, its numerals, and every other word but
    stop words, pointers and words for the user (session markers aside)."""
    text = _MARKER.sub(" ", text)
    quoted = {lemma for span in _QUOTED.findall(text) for lemma in lemmas_of(span)}
    return quoted | {w for w in lemmas_of(text)
                     if w in _NUMERALS or not (w in STOP_RU or w in STOP_EN or w in _POINTERS or w in _THE_USER)}


def says_no_info(answer: str) -> bool:
    """The reader's own decline: the no-information sentence of either language, with or without
    its period (`says_no_info("У меня нет такой информации")` is True)."""
    return answer.strip().rstrip(".").casefold() in {v.rstrip(".").casefold() for v in NO_INFO.values()}


def adds_nothing(answer: str, question: str) -> bool:
    """The answer names nothing the question does not (`named_in`, by lemma, kin as one word): «Отец.»
    to «Как зовут моего папу?». False for a yes/no question and for an answer that picks one of the
    things `offered`; True where a name is asked and none given (`gives_name`)."""
    if not lemmas_of(question) & _WH or asks_yes_no(question):  # «Помог ли мне совет, как …?»
        return False
    if asks_name(question) and not gives_name(answer):
        return True
    named = named_in(answer)
    return not (_as_kin(named) - _as_kin(named_in(question))) and not named & offered(question)


def asks_name(question: str) -> bool:
    """A Russian question asks what someone is called: «Как зовут …?», «Как мы назвали щенка?», or
    a name asked «как»/«какой» of («Какое у меня отчество?»). «Кто зовёт меня в кино?» asks who."""
    if detect_lang(question) != "ru":
        return False
    lemmas = lemmas_of(question)
    if "как" in lemmas and lemmas & _CALLS:
        return True
    return bool(lemmas & {"как", "какой"} and lemmas & _CALLED)


_CALLS = frozenset(("звать", "назвать"))  # asked «как»: what someone is called
_CALLED = frozenset("имя фамилия отчество кличка прозвище".split())


def gives_name(answer: str) -> bool:
    """The answer holds a name: a word the dictionary knows as a name, surname or patronymic, a
    capitalised word inside a sentence or one the dictionary does not know, a quoted word, or the
    answer is a name alone (two words at most: «Шарик.», which the dictionary knows as a ball)."""
    words = list(WORD.finditer(answer))
    if len(words) <= 2 or _QUOTED.search(answer):
        return True
    for found in words:
        word, before = found.group(), answer[:found.start()].rstrip()
        parses = morph().parse(word)
        if word[:1].isupper():
            inside = bool(before) and before[-1] not in ".!?…"
            if inside or not parses[0].is_known or any(_a_name(parse) for parse in parses):
                return True
        elif _a_name(parses[0]):
            return True
    return False


def _a_name(parse) -> bool:
    """A name, surname or patronymic, not an initial («У» parses as one)."""
    return bool(parse.tag.grammemes & _NAMES) and "Init" not in parse.tag.grammemes


_NAMES = frozenset(("Name", "Surn", "Patr"))


def _as_kin(lemmas: set) -> set:
    """Lemmas with each kin word as its one name (`_KIN`: «отец» as «папа»)."""
    return {_KIN.get(w, w) for w in lemmas}


# Words whose next noun is what is asked, not whom it is asked about («Какая машина у моей сестры …»);
# «кто» counts only where that noun is the one asked for («Кто из соседей …»).
_ASKING = frozenset("какой сколько который чей".split())


# Nouns that name a kind, not the thing: the asked phrase goes on to the next noun («видами единоборств»).
_KINDS = frozenset("вид тип род сорт разновидность".split())


def _nouns(question: str) -> tuple[list, list, dict]:
    """A Russian question's parses, the places of its nouns, and of those the asked phrase's, each
    with its asking word: the first noun after one of `_ASKING`, or after «кто» where it is the one
    asked for, and after a noun of `_KINDS` the next one as well."""
    parses = _parses(question)
    nouns = [i for i, p in enumerate(parses) if "NOUN" in p.tag]
    asked = {}
    for j, p in enumerate(parses):
        first = next((i for i in nouns if i > j), None)
        if first is None:
            continue
        if p.normal_form in _ASKING or (p.normal_form == "кто" and (
                "nomn" in parses[first].tag or parses[first - 1].normal_form == "из")):
            asked[first] = p.normal_form
            if _lemma(parses[first]) in _KINDS and first + 1 in nouns:
                asked[first + 1] = p.normal_form
    return parses, nouns, asked


def _parses(question: str) -> list:
    """Each word's likeliest parse (pymorphy3), lowercased, in order."""
    return [morph().parse(w)[0] for w in WORD.findall(question.lower())]


def offered(question: str) -> set:
    """The things a Russian question offers to choose from, by lemma: the nouns on either side of
    «или» (`offered("Какой у меня инструмент — скрипка или виолончель?") == {"скрипка", "виолончель"}`;
    «Кто звонил или собирался зайти?» offers none: verbs join there)."""
    if detect_lang(question) != "ru":
        return set()
    parses = _parses(question)
    return {_lemma(parses[k]) for i, p in enumerate(parses) if p.word == "или"
            for k in (i - 1, i + 1) if 0 <= k < len(parses) and "NOUN" in parses[k].tag}


def asked_about(question: str) -> set:
    """The people and animals a Russian question asks about, by lemma: its animate nouns less the
    asked phrase's. `asked_about("Как зовут попугая моего дяди?") == {"попугай", "дядя"}`; empty for English."""
    if detect_lang(question) != "ru":
        return set()
    parses, nouns, asked = _nouns(question)
    return {_lemma(parses[i]) for i in nouns
            if i not in asked and "anim" in parses[i].tag} - {"пользователь", "гость"}  # «в гости»: no one


def _lemma(parse) -> str:
    return parse.normal_form.replace("ё", "е")


# The headings of the answer prompts' excerpts (answer*.yaml): the lines under them are the user's
# and others' own words, not facts (`material` gives them as their topic, the colon dropped).
EXCERPTS = ("Выдержки из диалогов:", "Выдержки из разговоров:", "Conversation excerpts:")
NOT_FACTS = frozenset(heading.rstrip(":") for heading in EXCERPTS)  # the topic `material` gives their lines


# A line that starts a turn of the excerpts: a speaker's label («Пользователь: …», «Caroline: …»),
# a session heading, or a fact's bullet; any other line continues the turn above it.
_STARTS = re.compile(r"^(?:- |###|[^\W\d_][^\W\d_ ]*(?: [^\W\d_]+){0,2}: )")


def material(chat: list, question: str) -> list[tuple[str, str]]:
    """The answer prompt's material as (topic, line), up to the question's line: each fact under its
    topic, each excerpt turn (later lines joined) under the excerpts' heading, markers and bullets
    removed. From the excerpts' first heading («### Сессия 4») on no line is a topic, though an
    assistant's turn may have lines that end in a colon («Вот что можно сделать:»)."""
    rows, topic, excerpts = [], "", False
    for line in chat[-1]["content"].splitlines():
        text = " ".join(_MARKER.sub(" ", line).split())
        if question in line:
            break
        excerpts = excerpts or text.startswith("#")
        if text.endswith(":") and ": " not in text and not excerpts:
            topic = text[:-1]
        elif text and rows and rows[-1][0] == topic and not _STARTS.match(text):
            rows[-1] = (topic, rows[-1][1] + " " + text)
        elif text:
            rows.append((topic, text.removeprefix("- ")))
    return rows


def someone_elses(answer: str, question: str, lines: list[tuple[str, str]]) -> bool:
    """The answer gives someone else's value: the question asks about someone (`asked_about`) and every
    material line (with its topic) holding what the answer names `beyond` it is about nobody asked about
    («Эдуард» only in «Сосед пользователя Эдуард …» to «Как зовут моего начальника?»). False where no
    line holds it (the reader may have put it in other words)."""
    about, named = asked_about(question), beyond(answer, question)
    if not about or not named:
        return False
    holding = [(topic, found) for topic, found in ((topic, lemmas_of(line)) for topic, line in lines) if found & named]
    return bool(holding) and not any(mentions_any(found | lemmas_of(topic), about) for topic, found in holding)


def beyond(answer: str, question: str) -> set:
    """What the answer names that the question does not, by lemma, and not as another form of one
    of the question's words either (`mentions_any`: kin, or the first five letters): «Коллеги
    советуются со мной.» to «Советуют ли мне коллеги?» names nothing beyond it."""
    asked = named_in(question)
    return {w for w in named_in(answer) - asked if not mentions_any({w}, asked)}


# The measures a Russian question may ask: each by the words that ask it and by its units (lemmas;
# abbreviations as written). One-letter abbreviations are left out: «г» is a gram or a year.
_MEASURES = {
    "money": ("зарплата заработок зарабатывать доход стоить стоимость цена бюджет оклад пенсия стипендия "
              "деньги деньга платить заплатить потратить тратить", "рубль руб ₽ доллар $ евро € юань тенге гривна"),
    "length": ("рост высота длина расстояние", "сантиметр см метр километр км миллиметр мм"),
    "mass": ("вес весить", "килограмм кг грамм тонна фунт"),
    "time": ("возраст время", "год лет месяц неделя день сутки час минута"),
}
_UNITS = {measure: frozenset(units.split()) for measure, (_, units) in _MEASURES.items()}
_ASKS = {measure: frozenset(asks.split()) | _UNITS[measure] for measure, (asks, _) in _MEASURES.items()}


def _measures_of(word: str, within: dict) -> set:
    """The measures of `within` (`_ASKS` or `_UNITS`) that a word names, by any of its parses' lemmas."""
    lemmas = {word.lower()} | {p.normal_form.replace("ё", "е") for p in morph().parse(word.lower())}
    return {measure for measure, words in within.items() if lemmas & words}


def asked_measures(question: str) -> set:
    """The measures a Russian question asks: by its asked phrase's noun («Какой у меня оклад?»: money),
    the first genitive noun after «сколько» («Сколько часов я сплю?»: time), or failing that the verbs
    after it («Сколько весит мой чемодан?»: mass). Empty for English and where no measure is asked."""
    if detect_lang(question) != "ru":
        return set()
    parses, nouns, asked = _nouns(question)
    found = {m for i, by in asked.items() if by != "сколько" for m in _measures_of(parses[i].word, _ASKS)}
    at = next((k for k, p in enumerate(parses) if p.normal_form == "сколько"), None)
    if at is not None:
        counted = next((i for i in nouns if i > at and "gent" in parses[i].tag), None)
        words = [parses[counted].word] if counted is not None else [
            p.word for p in parses[at + 1:] if {"VERB", "INFN"} & set(p.tag.grammemes)]
        found |= {m for w in words for m in _measures_of(w, _ASKS)}
    return found


def mentions_any(words: set, about: set) -> bool:
    """Whether the lemmas `words` hold one of `about`: the same lemma, kin word (`_KIN`) or Latin
    spelling (`_spelled`), or for one of five letters or more a word starting with its first five
    («сестрёнка» names «сестра»), four for a being of five or six letters («собачка» names «собака»).
    A shorter one must match whole: «другой» is no «друг»."""
    words, about = _spelled(words | _as_kin(words)), _spelled(about | _as_kin(about))
    heads = {a[:4] if len(a) <= 6 and _a_kind_of_being(a) else a[:5] for a in about if len(a) >= 5}
    return bool(words & about) or any(w.startswith(h) for w in words for h in heads)


# Latin letters as Russian writes them (two letters before one: «sh» before «s»).
_LATIN = [("shch", "щ"), ("sch", "ш"), ("sh", "ш"), ("ch", "ч"), ("zh", "ж"), ("kh", "х"), ("ts", "ц"),
          ("ya", "я"), ("yu", "ю"), ("yo", "ё"), ("x", "кс"), ("j", "дж"), ("w", "в"), ("q", "к")]
_LETTERS = str.maketrans("abcdefghiklmnoprstuvyzšžčéáíóú", "абкдефгхиклмнопрстувйзшжчеаиоу")


def _spelled(lemmas: set) -> set:
    """Lemmas with each Latin word written in Russian letters too («škoda»: «шкода», «lada»: «лада»),
    so a name the material spells one way and the answer the other is the same word."""
    out = set(lemmas)
    for lemma in lemmas:
        if (lemma.isascii() and lemma.isalpha()) or any(ch in lemma for ch in "šžčéáíóú"):
            for latin, cyrillic in _LATIN:
                lemma = lemma.replace(latin, cyrillic)
            out.add(lemma.translate(_LETTERS))
    return out


def _a_kind_of_being(lemma: str) -> bool:
    """An animate common noun («собака», «сестра»), not a name («Мария»)."""
    tag = morph().parse(lemma)[0].tag
    return "anim" in tag and not {"Name", "Surn", "Patr"} & tag.grammemes


# Kin named by other words than one's first five letters show (lemmas, ё as е): each to one name.
_KIN = {"дочка": "дочь", "доченька": "дочь", "сынок": "сын", "сыночек": "сын", "мать": "мама",
        "мамочка": "мама", "мамуля": "мама", "отец": "папа", "папочка": "папа", "бабуля": "бабушка",
        "бабка": "бабушка", "дед": "дедушка", "супруга": "жена", "супруг": "муж", "братик": "брат",
        "братишка": "брат"}


def is_unit(lemma: str) -> bool:
    """A measure's unit («килограмм», «км», «рубль»), which a line may write another way («кг»)."""
    return bool(_measures_of(lemma, _UNITS))


def is_count(lemma: str) -> bool:
    """A number, in digits or words («35», «двое», «три»): what a question asking a measure must be
    answered with (`decide.no_number`)."""
    return any(ch.isdigit() for ch in lemma) or lemma in _NUMERALS or "NUMR" in morph().parse(lemma)[0].tag
