"""One dialogue's memory: the whole flow from stored pairs to an answer.

`write` only records (cheap). `answer` does the expensive work in batches: extract facts
from every pending pair in one LLM call, version them into slots, index turns and facts,
choose the facts to show (`topics`), rank for the question (the shown facts' turns
favoured), pack a budgeted context, ask the reader, and let `decide` say whether its answer
stands. Every stage's seconds are kept in `timings` for the profiler. Called by `model_inference`.
"""
from __future__ import annotations

import copy
import dataclasses
import re
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional, Sequence

from . import answer as answer_step
from . import budget
from . import decide
from . import facts as fact_step
from . import gate
from . import items
from .context import Context, pack
from .embed import Embedder
from .index import IndexSettings, KeyIndex, similarities
from .lexical import tokenize
from .limits import check_fields, count, one_of
from .llm import ANSWER, EXTRACT, GATE, ITEMS, LLM, SHORTEN, VERSIONS, VERSIONS_CHECK, Ledger
from .profiles import Profile, Profiles, profile_of
from .retrieve import Hit, RetrieveSettings, search
from . import versions
from .slots import FactLine, Slots, group_lines, render, topic_of
from . import topics
from .timeref import annotate
from .turns import USER, TurnStore

# Why an answer did not come from the reader (`Answer.fallback`; the contest class counts them, submit/fallbacks.py)
EMPTY_ANSWER = "empty_answer"  # the reader's reply held no answer
MEMORY_ANSWER = "memory_answer"  # answered from memory, without the LLM
RECALL_TURNS = 10  # best-ranked turns searched for a sentence when answering without the LLM
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")


@dataclass(frozen=True)
class Settings:
    """The dialogue memory's part of the settings tree (`submit.config.Config.memory`): every
    default stated once, here; local_eval and bench scripts take them from here too."""
    context_chars: int = field(default=8000, metadata=count(1, 10_000_000))  # the packed evidence's budget
    max_turn_chars: int = field(default=1200, metadata=count(1, 10_000_000))  # a longer turn keeps head and tail
    answer_max_tokens: int = field(default=100, metadata=count(1, 32_768))
    # Extract facts and show them to the answer step; False answers from the excerpts alone.
    facts: bool = True
    extract_max_tokens: int = field(default=256, metadata=count(1, 32_768))
    # Which user messages are asked about: "all" that may hold a fact by the cheap length test, or
    # "disclosure": only those with a word that points at their writer (disclosure.py; measured in
    # bench/results/fact_quality.md).
    extract_filter: str = field(default="all", metadata=one_of(("all", "disclosure")))
    versions: bool = True  # the supersession pass: the LLM decides which fact replaced which
    versions_max_tokens: int = field(default=256, metadata=count(1, 32_768))  # output cap of each versions call
    # Then each link it would make is checked on its own two statements (docs/log.md, "Facts and versions").
    versions_check: bool = True
    # A second LLM call cuts each answer to what the question asks (local_eval turns it on for
    # LoCoMo, whose strict judge fails supported extra detail; the contest path leaves it off).
    shorten: bool = False
    # The decline gate (gate.py): "calibrated" asks the reader's one-token P(yes) that the material
    # holds the answer and declines below the threshold the run's own calibration chose, where that
    # calibration turned it on; "off" asks nothing and runs no calibration pass (every check on);
    # "kept" takes the calibration an earlier "calibrated" run of the same model kept
    # (`calibration_cache`) and is "off" where none is kept (local_eval's default for a CPU reader).
    gate: str = field(default="calibrated", metadata=one_of(gate.MODES))
    # The calibration's rule (gate.calibrate, decide.switch): the gate's threshold declines at most
    # `gate_max_false` of the answerable calibration prompts; the gate and each check are on only
    # where, with `gate_no_answer_share` of questions without an answer, they win more declines than
    # they lose answers, and the gate only where its scores tell the kinds apart (AUC ≥ `gate_min_auc`).
    gate_max_false: float = 0.05
    gate_no_answer_share: float = 0.25
    gate_min_auc: float = 0.7
    # Another folder of calibration sets, asked for a language `submit/calibration/` has none of:
    # local_eval's English runs pass the sets tools/calibration.py builds from LoCoMo into
    # .cache/calibration (`--calibration-dir`; LoCoMo's text is not copied into the repository or the zip).
    calibration_dir: str = ""
    # A folder where each calibration (the gate's scores, the model's replies) is kept per model,
    # calibration set and stage, for the next run of the same model to take instead of asking again
    # (a CPU reader needs half an hour for the 64 prompts). Empty in the contest: it calibrates once.
    calibration_cache: str = ""
    # In a chat between two named people (LoCoMo), a question that names one of them is declined
    # where that person's best-matching turn scores below the other's by more than the run's
    # calibrated margin (gate.speaker_margin: no call). A user–assistant chat names no two people.
    decline_speaker: bool = True
    # Lists (items.py): "list" gives a question whose form asks for several things one more batch of
    # two asks; the listed items its answer leaves out are joined to an answer that stands, less
    # someone else's and those of other topics than the answer's lines (on: docs/log.md says why).
    lists: str = field(default="list", metadata=one_of(items.MODES))
    # Current facts shown to the answer step (`topics.select`): the few nearest the question,
    # then the facts of the topic it names, then the nearest others, while their lines fit
    # `fact_chars` (at most `max_fact_lines`). Measured on the list probe (bench/retrieval.py lists).
    max_fact_lines: int = 30
    fact_chars: int = 2400
    nearest_facts_first: int = 5
    topic_labels: int = 1  # the topics nearest the question whose facts count as its topic
    # The shown facts' turns are favoured in the ranking (the profiles' "favoured" stage) when the
    # dialogue holds at least this many times as many current facts as are shown.
    fact_turns_min_ratio: float = 2.0
    index: IndexSettings = IndexSettings()
    retrieve: RetrieveSettings = RetrieveSettings()
    profiles: Profiles = Profiles()  # what each kind of chat changes (profiles.py)

    def __post_init__(self):
        check_fields(self)


@dataclass
class Answer:
    text: str
    context: Context
    lang: str
    facts: tuple = ()  # the FactLines the answer prompt held (each knows its turns)
    fallback: Optional[str] = None  # why the answer did not come from the LLM, if it did not
    # what declined the question, if anything did: "speaker" (gate.speaker_margin, no call), "gate"
    # (the decline gate), or the check of decide.CHECKS that found the answer wanting; the reader's
    # own "no information" is no decline of ours
    declined_by: Optional[str] = None
    p_yes: Optional[float] = None  # the decline gate's reading, where it asked
    speaker_margin: Optional[float] = None  # gate.speaker_margin, where the question names one of two people
    listed: tuple = ()  # the items the list asks (`lists="list"`) joined to the answer
    quotes: tuple = ()  # the material lines (topic, line) the answer rests on, as decide.quoted found them
    draft: Optional[str] = None  # the reader's own answer, before the decision (declined or not)
    superseded: bool = False  # the draft gave a fact's earlier version; the text is the fact now (decide.superseded)
    timings: dict = field(default_factory=dict)

    @property
    def declined(self) -> bool:
        return self.declined_by is not None


class DialogueMemory:
    """`switches` (lang -> decide.Switches: the checks the run's calibration earned, the gate's
    threshold among them; a language without its calibration runs every check and no gate) and
    `speaker_thresholds` (lang -> the speaker margin below which a question is declined) are the
    contest class's, shared by every dialogue of the run."""

    def __init__(self, llm: LLM, embedder: Embedder, settings: Settings = Settings(),
                 switches: Optional[dict] = None, speaker_thresholds: Optional[dict] = None):
        self.llm = llm
        self.switches = switches if switches is not None else {}
        self.speaker_thresholds = speaker_thresholds if speaker_thresholds is not None else {}
        self.embedder = embedder
        self.settings = settings
        self.store = TurnStore()
        self.ledger = Ledger()
        self.timings: dict = defaultdict(float)
        self.index = KeyIndex(embedder, settings.index)
        self.slots = Slots()
        self.facts: list = []
        self.extraction = Counter()  # pairs seen/skipped, facts, unparsable replies
        self._indexed = 0  # turns already handed to the index
        self._extracted = 0  # turns already seen by extraction
        self._query: tuple = (None, None)  # (question, its embedding)
        self._profile: tuple = (None, None)  # (turns written when it was decided, the profile)
        self.started = time.monotonic()  # the first write: the dialogue's clock for the budget

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] += time.perf_counter() - start

    def write(self, messages) -> None:
        with self.stage("write"):
            self.store.add_pair(messages)

    def answer(self, question: str, use_facts: bool = True, plan: budget.Plan = budget.UNPLANNED) -> Answer:
        """The answer record; `use_facts=False` answers from raw evidence alone (a fallback rung);
        `plan` is the time budget's for this answer: how much extraction it affords."""
        lang = answer_step.detect_lang(question)
        if use_facts and self.settings.facts and plan.level < budget.NO_EXTRACTION:
            only = self._top_user_turns(question, plan.prompts) if plan.level >= budget.TOP_TURNS else None
            self.extract_pending(strict=plan.level >= budget.STRICT, only=only)
        lines, favoured = self.choose_facts(question) if use_facts else ([], frozenset())
        hits = self.rank(question, favoured)  # after extraction, so the new fact keys take part
        with self.stage("pack"):
            context = self.packed(hits, lang)
        if not context.turn_ids and not lines:  # nothing remembered: nothing for a model to read
            return Answer(text=answer_step.NO_INFO[lang], context=context, lang=lang,
                          timings=dict(self.timings))
        chat = answer_step.build_prompt(question, context, lang, facts=lines, question_date=self.store.question_date,
                                        people=self.profile.people(self.store), task=self.profile.answer_prompt)
        margin = gate.speaker_margin(hits, self.store.turns, question, self.profile.people(self.store))
        if self._about_the_other(margin, lang):
            return Answer(text=answer_step.NO_INFO[lang], context=context, lang=lang, facts=tuple(lines),
                          declined_by="speaker", speaker_margin=margin, timings=dict(self.timings))
        switches = self.switches.get(lang, decide.Switches())
        p_yes = self._gate(chat, question, lang) if decide.GATE in switches.on else None
        reply = None
        if p_yes is None or switches.threshold is None or p_yes >= switches.threshold:  # else the gate declines
            with self.stage("answer"):
                found, generations = decide.replies(self.llm, [chat], lang, self.settings.answer_max_tokens, ANSWER)
            self.ledger.add(ANSWER, generations)
            reply = found[0]
            if reply is None:
                return Answer(text=answer_step.NO_INFO[lang], context=context, lang=lang, facts=tuple(lines),
                              fallback=EMPTY_ANSWER, speaker_margin=margin, timings=dict(self.timings))
        material = answer_step.material(chat, question)
        verdict = decide.decide(question, reply, material, switches, p_yes)
        text, listed = verdict.text, []
        if not verdict.declined:
            if self.settings.shorten:
                text = self._shorten(question, text, lang)
            text, listed = items.joined(text, self._listed(chat, question, lang, lines), verdict.held, material,
                                        lang, question)
        return Answer(text=text, context=context, lang=lang, facts=tuple(lines),
                      declined_by=None if verdict.declined_by == decide.OWN else verdict.declined_by,
                      p_yes=p_yes, speaker_margin=margin, listed=tuple(listed), quotes=verdict.held,
                      draft=reply.answer if reply else None, superseded=verdict.superseded,
                      timings=dict(self.timings))

    def _about_the_other(self, margin: Optional[float], lang: str) -> bool:
        """The speaker decline: the question's person matches it worse than the other one does by
        more than the run's calibrated margin (gate.speaker_margin; no threshold, no decline)."""
        below = self.speaker_thresholds.get(lang)
        return self.settings.decline_speaker and margin is not None and below is not None and margin < below

    def _listed(self, chat: list, question: str, lang: str, shown: Sequence[FactLine]) -> list:
        """Lists by listing (items.py, `list`): the items the reader lists for a question whose form
        asks for several things, from the answer prompt's facts; [] where it is off, the question
        asks for one thing, or no facts are shown."""
        if self.settings.lists != "list" or not shown or not items.several(question):
            return []
        with self.stage("items"):
            found, generations = items.listed(self.llm, chat, question, lang)
        self.ledger.add(ITEMS, generations)
        return found

    def _gate(self, chat: list, question: str, lang: str) -> Optional[float]:
        """The decline gate's P(yes) on the answer prompt's material (asked where the run's
        calibration turned the gate on), or None for a question form the calibration does not speak
        for (`gate.speaks_for`) or a reply it cannot read."""
        if not gate.speaks_for(question):
            return None
        with self.stage("gate"):
            scores, generations = gate.read(self.llm, [chat], lang, GATE)
        self.ledger.add(GATE, generations)
        return scores[0]

    def recall(self, question: str) -> Optional[Answer]:
        """The answer without an LLM: the sentence of a best-ranked user turn that shares the
        most lemmas with the question; None when none shares one (then "no information" is
        the better guess: a question about something the user never mentioned should not get
        an unrelated sentence back). Measured in bench/faults.py --recall."""
        found = self.best_sentence(question)
        text = answer_step.clean_answer(found[1]) if found else None
        if text is None:
            return None
        lang = answer_step.detect_lang(question)
        return Answer(text=text, context=self.build_context(question, lang), lang=lang,
                      fallback=MEMORY_ANSWER, timings=dict(self.timings))

    def best_sentence(self, question: str) -> Optional[tuple[int, str]]:
        """(turn index, sentence) behind `recall`, or None."""
        wanted = set(tokenize(question))
        best, best_overlap = None, 0
        if not wanted:
            return None
        for hit in self.rank(question)[:RECALL_TURNS]:
            turn = self.store.turns[hit.turn_idx]
            if turn.role != USER:
                continue
            for sentence in _SENTENCE.split(turn.text):
                overlap = len(wanted & set(tokenize(sentence)))
                if overlap > best_overlap:
                    best, best_overlap = (turn.idx, sentence), overlap
        return best

    def _shorten(self, question: str, draft: str, lang: str) -> str:
        chat = answer_step.shorten_prompt(question, draft, lang)
        if chat is None:
            return draft
        with self.stage("shorten"):
            generation = self.llm.generate([chat], max_tokens=self.settings.answer_max_tokens, purpose=SHORTEN)[0]
        self.ledger.add(SHORTEN, [generation])
        return answer_step.shortened(draft, question, generation.text)

    def _top_user_turns(self, question: str, n: int) -> set:
        """The `n` best-ranked user turns: the only ones extracted when the plan affords no more."""
        hits = self.rank(question)
        user = [h.turn_idx for h in hits if self.store.turns[h.turn_idx].role == "user"]
        return set(user[:n])

    def extract_pending(self, strict: bool = False, only: Optional[set] = None) -> list:
        """Facts from every pair written since the last call, in one batched LLM call.

        `strict` drops very short messages; `only` keeps just those turn ids (budget levels)."""
        turns = self.store.turns
        with self.stage("extract"):
            profile = self.profile
            candidates = fact_step.prefilter(turns[self._extracted:], self.extraction, profile,
                                                    self.settings.extract_filter)
            self._extracted = len(turns)
            if strict:
                candidates = [c for c in candidates if len(c.text) >= fact_step.STRICT_MIN_CHARS]
            if only is not None:
                candidates = [c for c in candidates if c.turn.idx in only]
            if not candidates:
                return []
            lang = answer_step.detect_lang(" ".join(c.text for c in candidates[:20]))
            candidates = [self._dated(c, lang) for c in candidates]
            chats = fact_step.build_prompts(candidates, lang, profile)
            generations = self.llm.generate(chats, max_tokens=self.settings.extract_max_tokens,
                                            schema=fact_step.FACTS_SCHEMA, purpose=EXTRACT)
            self.ledger.add(EXTRACT, generations)
            new = [f for c, g in zip(candidates, generations)
                   for f in fact_step.parse_facts(g.text, c, self.extraction, profile.named)]
            fresh = self.add_facts(new)
            if fresh and self.settings.versions and not strict:
                self.ledger.add(VERSIONS, versions.decide(
                    self.llm, self.slots, fresh, lang, self.settings.versions_max_tokens, self.extraction))
                if self.settings.versions_check:
                    self.ledger.add(VERSIONS_CHECK, versions.check(self.llm, self.slots, lang, self.extraction))
        return new

    def _dated(self, candidate, lang: str):
        """The candidate with relative time resolved against its session's date, where it has
        one: the facts then carry dates ("went to a support group yesterday [7 May 2023]")."""
        day = self.store.day_of(candidate.turn)
        if not day:
            return candidate
        return dataclasses.replace(candidate, text=annotate(candidate.text, day, lang))

    def add_facts(self, new: list) -> list:
        """Facts into the slots (linking by the rule) and into the index as keys pointing to
        their turns; returns the distinct new ones (repeats confirm a fact, they add no key)."""
        fresh = self.slots.add(new)
        start = len(self.facts)
        self.facts += fresh
        self.index.add_keys([f.statement for f in fresh], [f.turn_idx for f in fresh], kind="fact",
                            refs=range(start, len(self.facts)))
        return fresh

    def index_pending(self) -> None:
        """Hand new turns to the index and embed every pending key, in one batch."""
        with self.stage("index"):
            self.index.add_turns(self.store.turns[self._indexed:])
            self._indexed = len(self.store.turns)
        with self.stage("embed"):
            self.index.embed_pending()

    def rank(self, question: str, favoured: frozenset = frozenset(), explain: bool = False) -> list[Hit]:
        """Every indexed turn, best first, for this question; `favoured` turns (those of the
        facts the answer shows) get a bonus; `explain` keeps each stage's share of each hit."""
        self.index_pending()
        with self.stage("embed"):
            query = self._query_vector(question)
        with self.stage("retrieve"):
            return search(self.index, self.store, question, query, self.settings.retrieve, self.profile, favoured,
                          explain)

    def _query_vector(self, question: str):
        """The question's embedding, computed once per question (rank and fact_lines share it)."""
        if self._query[0] != question:
            self._query = (question, self.embedder.embed_queries([question])[0])
        return self._query[1]

    def build_context(self, question: str, lang: str, budget: Optional[int] = None) -> Context:
        return self.packed(self.rank(question), lang, budget)

    def packed(self, hits: list, lang: str, budget: Optional[int] = None) -> Context:
        """The ranked turns packed into `budget` characters (the settings' by default), as the answer sees them."""
        return pack(self.store, [self.store.turns[h.turn_idx] for h in hits],
                    budget or self.settings.context_chars, lang, self.settings.max_turn_chars, self.profile.named)

    def under(self, settings: Settings) -> "DialogueMemory":
        """This memory read under other settings (a sweep's): the same turns, index and facts.
        Settings that change what is indexed or extracted need a memory built with them."""
        view = copy.copy(self)
        view.settings, view._profile = settings, (None, None)
        return view

    @property
    def profile(self) -> Profile:
        """The dialogue's kind of chat (`profiles.profile_of`), decided once for the turns written
        so far: extraction, ranking, lines and prompts all read this one value."""
        if self._profile[0] != len(self.store.turns):
            self._profile = (len(self.store.turns), profile_of(self.store, self.settings.profiles))
        return self._profile[1]

    def fact_lines(self, question: str) -> list[FactLine]:
        """The fact lines the answer prompt shows for this question (`choose_facts`)."""
        return self.choose_facts(question)[0]

    def choose_facts(self, question: str) -> tuple[list[FactLine], frozenset]:
        """The current facts for this question (`topics.select`; a replaced fact brings its
        replacement), each with what it replaced, grouped by topic, topics by their best fact;
        and the turns those facts came from, which the ranking favours when the facts shown are
        a selection of the dialogue's."""
        if not self.facts:
            return [], frozenset()
        self.index_pending()
        lang = answer_step.detect_lang(question)
        nearest = self.nearest_facts(question)
        line_of = lambda f: FactLine(topic_of(f), f, tuple(self.slots.history(f)))  # noqa: E731
        s = self.settings
        chosen = topics.select(nearest, self.question_topic(question, nearest),
                               lambda f: len(render(line_of(f), lang)) + 3,
                               s.fact_chars, s.max_fact_lines, s.nearest_facts_first)
        lines = [line_of(f) for f in chosen]
        # The lines point at the question's items only when they are a selection: where the
        # dialogue holds hardly more facts than are shown (LoCoMo's recorded extraction, 19–35
        # facts a conversation), favouring their turns favoured every fact's turn and cost
        # multi-hop questions their evidence (bench/results/lists.md).
        selective = len(nearest) >= s.fact_turns_min_ratio * len(chosen)
        favoured = frozenset(idx for line in lines for idx in line.turn_ids) if selective else frozenset()
        return [line for _, group in group_lines(lines) for line in group], favoured

    def question_topic(self, question: str, facts: list):
        """Fact -> whether it is of the topic the question names (`topics.in_topic`)."""
        words = topics.topic_words(question, self.profile.people(self.store))
        labels = self.topic_labels(question, facts)
        return lambda fact: topics.in_topic(fact, words, labels)

    def topic_labels(self, question: str, facts: list) -> frozenset:
        """The `topic_labels` topics (slot keys' first words) nearest the question by dense similarity,
        among those with two facts or more (a topic of one fact is a fact, which dense finds itself;
        half the topics, half the texts to embed)."""
        counts = Counter(topics.label_of(f) for f in facts)
        labels = sorted(label for label, n in counts.items() if n >= 2 and label)
        if not labels or not self.settings.topic_labels:
            return frozenset()
        with self.stage("embed"):
            vectors = self.embedder.embed_passages(labels)
        return topics.nearest_labels(labels, similarities(vectors, self._query_vector(question)),
                                     self.settings.topic_labels)

    def nearest_facts(self, question: str) -> list:
        """Every current fact, nearest the question first (a fact ranks by its own key or by the
        best key of a fact it replaced)."""
        scores, keys = self.index.dense_search(self._query_vector(question))
        ranked = sorted((i for i, key in enumerate(keys) if key.kind == "fact"), key=lambda i: (-scores[i], i))
        return list(dict.fromkeys(self.slots.current(self.facts[keys[i].ref]) for i in ranked))
