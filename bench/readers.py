"""Readers over fixed answer prompts: the real local model or anyone, the ways it reads, a decline
gate, the judge's queue and the table.

    .venv/bin/python bench/readers.py answer --prompts P.jsonl --out A.jsonl \
        --llm 'cache:bench/stores/readers/qwen1.5b+llama:qwen2.5-coder-1.5b' [--no-checks] [--ask …]
    .venv/bin/python bench/readers.py read --prompts P.jsonl --way plain --way evidence \
        --model qwen2.5-coder-1.5b --out R.jsonl
    .venv/bin/python bench/readers.py judge A.jsonl [R.jsonl ...] --verdicts V.jsonl --pending J.jsonl [--gate G]
    .venv/bin/python bench/readers.py table A.jsonl [R.jsonl ...] --verdicts V.jsonl [--gate 'p_yes<0.61'] [--empty]
    .venv/bin/python bench/readers.py gate --prompts P.jsonl [--reading R.jsonl]
    .venv/bin/python bench/readers.py keep R.jsonl@submit/calibration/ru.c8000.jsonl [--out DIR]

Prompt files come from `bench/prompts.py` (`{"id", "question", "gold", "question_type",
"messages"}`: retrieval and facts held fixed). Two readers write rows, one per prompt (and way),
appended as they finish (resumable), so every table made from them replays without the model:
- `answer` asks any LLM (a local_eval spec) each prompt, then right after it the abstention check
  both ways (`bench/asks/abstain.*.yaml`, the rule pile's: "before" the answer, "after" of the draft), which
  share the prompt's material, so a prefix cache reads it once: `answer`, `found_before`,
  `found_after`;
- `read` asks the local model through its server in each way (`WAYS`: the prompt as the contest
  builds it, with the answer asked as JSON whose first field is the evidence, or asking for every
  item; `list` and `list_late`, the contest's two list asks of `--lists list`, whose items join
  every answer of their question as "+ list"), and once per prompt instead whether the material
  holds the answer (the contest's gate question, `submit/memory/gate.py`, one token): `way`,
  `answer`, and the `gate` way's `p_yes`.
Every row is then read the same way: the reader's answer, and the answer the contest class would
give with a decline on top (`variants`: the abstention check's no, or the gate below its
threshold, gives "no information"). `judge` lists the (question, answer) items no verdict covers
yet, for a judge reading only those (a stand-in under our GigaMemory rule,
`local_eval/prompts/judge_gigamemory.yaml`); `table` prints right answers per question type from
the verdicts (`{"question", "answer", "correct"}` lines). `gate` fits the decline gate: for each
signal the prompt rows carry (`bench/prompts.py signals`) and the readers' `p_yes`, the share
of no-answer questions declined against the share of answerable ones, and the best threshold at
`--false-rate`, chosen and reported on the same questions (in-sample). `--gate 'p_yes<@FILE'`
applies instead the threshold the contest's own rule (`gate.calibrate`) chooses on the gate rows
of FILE — a `read` of the shipped calibration prompts by the same model: out of sample.
`empty` counts the recorded answers the contest's empty-answer decline would decline, `unrelated`
those its unrelated-value decline would (with the prompts they were read from).
`items` reads a contest-path run with lists by selection (`run.py --lists select`): per list
question, how many facts the reader's one-token judge kept, and where the gold items' facts rank.
`keep` turns a `read` of the calibration set into the calibration a `--gate calibrated` run of that
local model keeps (local_eval/calibrated/ ships the local models'), so `--gate kept` takes it.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Optional, Sequence

from bench import bound  # the bound stage, replayed from its recordings
from bench import rule_pile  # the stage before the cited one, replayed from its recordings
from local_eval import jsonl
from submit.memory import answer as answer_step
from submit.memory import decide
from submit.memory import gate as contest_gate
from submit.memory import items as list_step
from submit.memory.gate import with_ask  # the one definition: the contest's gate builds its chats with it

ROOT = Path(__file__).resolve().parent.parent
ITEM_GOLD = ROOT / "bench/fixtures/list_items_ru.json"
EVIDENCE_ASK = {
    "ru": 'Ответь в JSON: {"evidence": [строки фактов и выдержек выше, где есть ответ, дословно; все, если '
          'ответ — перечень; [] если таких нет], "answer": "ответ одним предложением"}',
    "en": 'Answer in JSON: {"evidence": [the lines of the material above that hold the answer, verbatim; all of them '
          'if the answer is a list; [] if there are none], "answer": "the answer in one sentence"}'}
EVIDENCE_SCHEMA = {"type": "object", "properties": {
    "evidence": {"type": "array", "items": {"type": "string"}}, "answer": {"type": "string"}},
    "required": ["evidence", "answer"]}
ASK_ALL = {"ru": "Ответ одним предложением (если подходит несколько пунктов — назови все):",
           "en": "Answer in one sentence (if several items fit, name them all):"}
CHECKS = ("before", "after")
USERS_ID = re.compile(r"^\d+-[uc]-\d+$")  # a question of ../shared/data/gigamemory/users ("27-u-08")


def rows_of(paths, wanted=lambda row: "id" in row) -> list[dict]:
    """The rows of JSONL files (a missing file reads as none), each with the stem of its file."""
    return [{**row, "file": Path(path).stem} for path in paths for row in jsonl.read_rows(Path(path), wanted)[0]]


def no_info(row: dict) -> str:
    return answer_step.NO_INFO[answer_step.detect_lang(row["question"])]


# ---------------------------------------------------------------- answer: any LLM, with the abstention check


def peer(messages: list) -> bool:
    return "Каждая строка начинается с имени" in messages[0]["content"] or \
        "Each line starts with the name" in messages[0]["content"]


def read_prompt(llm, row: dict, ask: str = "", checks: bool = True) -> dict:
    """The answer (with `ask` as the prompt's last line, when given) and both checks for one
    prompt, with what they cost."""
    lang = answer_step.detect_lang(row["question"])
    start = time.perf_counter()
    draft = llm.generate([with_ask(row["messages"], ask) if ask else row["messages"]], max_tokens=100)[0]
    text = answer_step.clean_answer(draft.text) or answer_step.NO_INFO[lang]
    found = {}  # the checks asked, none without `checks`
    for mode in CHECKS if checks else ():
        if mode == "after" and text == answer_step.NO_INFO[lang]:
            found[mode] = None  # nothing to check: the reader declined itself
            continue
        check = rule_pile.abstain_ask(lang, mode, text, peer(row["messages"]))
        reply = llm.generate([with_ask(row["messages"], check)], max_tokens=rule_pile.ABSTAIN_MAX_TOKENS,
                             schema=rule_pile.ABSTAIN_SCHEMA, purpose="answer")[0]
        found[mode] = rule_pile.material_holds(reply.text)
    return {"id": row["id"], "question": row["question"], "gold": row["gold"], "question_type": row["question_type"],
            "answer": text, **{f"found_{mode}": v for mode, v in found.items()}, "prompt_tokens": draft.prompt_tokens,
            "seconds": round(time.perf_counter() - start, 1)}


def answer(args) -> int:
    from local_eval.specs import make_llm
    from tqdm import tqdm
    prompts = some_prompts(args.prompts, "answer")
    done = {r["id"] for r in rows_of([args.out])}
    todo = [r for r in prompts if r["id"] not in done]
    llm = make_llm(args.llm)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    for row in tqdm(todo, desc="prompts", unit="prompt"):
        read = read_prompt(llm, row, args.ask, not args.no_checks)
        jsonl.append_rows(Path(args.out), [{**read, "reader": args.llm, "ask": args.ask or None}])
    print(f"{len(prompts) - len(todo)} done before, {len(todo)} read now: {args.out}")
    return 0


# ---------------------------------------------------------------- read: the local model's server, in ways


def chat_body(messages: list, max_tokens: int, schema=None, top: int = 0) -> dict:
    from local_eval.llms.llama import request
    body = {**request(messages, max_tokens, schema), "cache_prompt": True}
    if top:
        body.update(logprobs=True, top_logprobs=top)
    return body


def ask(server, body: dict) -> dict:
    reply = server.handle_chat_completions(body)
    if not isinstance(reply, dict) or reply.get("error"):
        raise RuntimeError(f"llama: {reply}")
    return reply


def yes_probability(reply: dict, lang: str) -> float:
    """The contest gate's P(yes) of a llama.cpp chat reply (`gate.p_yes`); 0.5 when neither word appears."""
    from local_eval.llms.llama import first_top
    found = contest_gate.p_yes(first_top(reply), lang)
    return 0.5 if found is None else found


def read_plain(server, row: dict, lang: str) -> dict:
    reply = ask(server, chat_body(row["messages"], 100))
    raw = reply["choices"][0]["message"]["content"] or ""
    return {"answer": answer_step.clean_answer(raw) or answer_step.NO_INFO[lang], "raw": raw,
            "usage": reply.get("usage", {})}


def read_evidence(server, row: dict, lang: str) -> dict:
    reply = ask(server, chat_body(with_ask(row["messages"], EVIDENCE_ASK[lang]), 300, EVIDENCE_SCHEMA))
    raw = reply["choices"][0]["message"]["content"] or ""
    try:
        data = json.loads(raw)
        text = answer_step.clean_answer(str(data.get("answer", "")))
        evidence = [str(e) for e in data.get("evidence", [])]
    except ValueError:
        text, evidence = None, []
    return {"answer": text or answer_step.NO_INFO[lang], "evidence": evidence, "raw": raw,
            "usage": reply.get("usage", {})}


def read_bound(server, row: dict, lang: str) -> dict:
    """The bound answer (`bench/bound.py`): quotes, answer and items in JSON held by its schema;
    `raw` is what `bound.decided` replays, `answer` the reply's own answer before any check."""
    chat = with_ask(row["messages"], bound.ask(lang))
    reply = ask(server, chat_body(chat, bound.MAX_TOKENS, bound.SCHEMA))
    raw = reply["choices"][0]["message"]["content"] or ""
    read = bound.parse(raw)
    return {"answer": read.answer or answer_step.NO_INFO[lang], "quotes": list(read.quotes),
            "items": list(read.items), "raw": raw, "usage": reply.get("usage", {})}


def read_cite(server, row: dict, lang: str, first: dict) -> dict:
    """The contest's cited answer (`submit/memory/decide.py`, `cite_chat`): the plain answer `first`
    (its row), then in the same chat the lines it rests on, in JSON held by its schema. No call
    where the plain answer says no information itself (the contest asks none); `draft` is the
    plain reply the call followed, `raw` the cite reply `decide.cited` replays."""
    draft = first.get("raw") or first["answer"]
    if not decide.asks_cite(draft):
        return {"answer": first["answer"], "draft": draft, "raw": "", "quotes": []}
    chat = decide.cite_chat(row["messages"], draft, lang)
    reply = ask(server, chat_body(chat, decide.CITE_MAX_TOKENS, decide.CITE_SCHEMA))
    raw = reply["choices"][0]["message"]["content"] or ""
    read = decide.cited(draft, raw)
    return {"answer": first["answer"], "draft": draft, "quotes": list(read.quotes), "raw": raw,
            "usage": reply.get("usage", {})}


def read_ask_all(server, row: dict, lang: str) -> dict:
    """The answer prompt whose last line also asks for every item (a list question's answer)."""
    return read_plain(server, {**row, "messages": with_ask(row["messages"], ASK_ALL[lang])}, lang)


def read_gate(server, row: dict, lang: str, question_ask: Optional[str] = None) -> dict:
    """The gate's P(yes) of the prompt: its last line replaced by the contest's ask, or `question_ask`."""
    chat = with_ask(row["messages"], question_ask or contest_gate.ask(lang))
    reply = ask(server, chat_body(chat, 1, top=contest_gate.TOP_K))
    return {"p_yes": round(yes_probability(reply, lang), 4), "usage": reply.get("usage", {})}


def list_ask(row: dict, way: str, lang: str) -> list:
    """The contest's list asks (`list_step.list_chats`, `--lists list`): `list` the facts as shown,
    `list_late` each topic's latest first."""
    return list_step.list_chats(row["messages"], lang)[LISTS.index(way)]


def read_list(server, row: dict, lang: str, way: str = "list") -> dict:
    """One of the contest's two list asks: the items the reader lists from the prompt's facts, as the
    contest keeps them; read only for questions whose form asks for several."""
    chat = list_ask(row, way, lang)
    reply = ask(server, chat_body(chat, list_step.LIST_MAX_TOKENS, list_step.LIST_SCHEMA))
    raw = reply["choices"][0]["message"]["content"] or ""
    found = list_step.kept_items(raw, chat, row["question"], lang)
    return {"items": found, "raw": raw, "usage": reply.get("usage", {})}


def read_list_late(server, row: dict, lang: str) -> dict:
    return read_list(server, row, lang, "list_late")


def read_second(server, row: dict, lang: str, first: Optional[str]) -> dict:
    """The contest's second look (`Settings.second_look`) at the plain answer `first`: where a
    call-free rule declines it or it says no information, the reader's answer from the material
    lines about what the question names (`answer.focus`, `answer.focused_prompt`); `answer` None
    where neither or no line is about the question (the contest makes no call then). Whether it
    holds up (`answer.second_answer`) is read when the tables are, so a changed rule replays."""
    focused = looked_at(row, first)
    if not focused:
        return {"answer": None, "lines": 0}
    reply = ask(server, chat_body(rule_pile.focused_prompt(row["messages"], row["question"], focused),
                                  rule_pile.SECOND_LOOK_MAX_TOKENS))
    raw = reply["choices"][0]["message"]["content"] or ""
    return {"answer": answer_step.clean_answer(raw), "lines": len(focused), "raw": raw, "usage": reply.get("usage", {})}


def looked_at(row: dict, first: Optional[str]) -> list:
    """The lines the contest's second look at the plain answer `first` reads: the material about
    what the question names (`answer.focus`) where a call-free rule declines `first` or it says no
    information; [] where neither or no line is about it (no look, no call)."""
    lines = answer_step.material(row["messages"], row["question"])
    if not first or not (answer_step.says_no_info(first) or any(rules_decline(first, row["question"], lines))):
        return []
    return rule_pile.focus(row["question"], lines)


def rules_decline(text: str, question: str, lines: list) -> tuple[bool, bool, bool]:
    """Whether each of the rule pile's call-free declines takes the answer `text` (the empty-answer,
    unrelated-value and ungrounded-value rules, read against the prompt's material `lines`)."""
    if not text or answer_step.says_no_info(text):
        return False, False, False
    return (answer_step.adds_nothing(text, question), rule_pile.unrelated(text, question, lines),
            rule_pile.ungrounded(text, question, lines))


def stale_seconds(recorded: list, prompts: dict) -> set:
    """The ids whose `second` row says no look was asked (no rule declined the plain answer, or no
    line was about the question) where the contest path would ask now (`looked_at`): a rule
    changed since."""
    firsts = {r["id"]: r["answer"] for r in recorded if r["way"] == "plain"}
    return {r["id"] for r in recorded if r["way"] == "second" and r.get("answer") is None
            and r["id"] in prompts and looked_at(prompts[r["id"]], firsts.get(r["id"]))}


LISTS = ("list", "list_late")  # the contest's list call asks both, in one batch; a question's items are their union
WAYS = {"plain": read_plain, "bound": read_bound, "evidence": read_evidence, "ask_all": read_ask_all, "list": read_list,
        "list_late": read_list_late}
# ways whose rows read a prompt but answer nothing themselves (a second look's answer stands in for
# its plain answer's where that one is declined: `second_looked`)
NOT_ANSWERS = ("gate", "second") + LISTS
FOLLOWING = ("second", "cite")  # ways that read the plain answer's row: `--way plain` first


def read(args) -> int:
    from local_eval.llms.llama import LlamaBackend
    from tqdm import tqdm
    rows = some_prompts(args.prompts, "read")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    recorded = rows_of([out], lambda r: "way" in r)
    stale = stale_seconds(recorded, {r["id"]: r for r in rows}) if "second" in args.way else set()
    if stale:  # read again below, in place of the rows recorded under the rules of their day
        recorded = [r for r in recorded if not (r["way"] == "second" and r["id"] in stale)]
        jsonl.write_rows(out, [{k: v for k, v in r.items() if k != "file"} for r in recorded])
        print(f"{len(stale)} second look(s) to read again, a rule now declining their plain answer: "
              + ", ".join(sorted(stale)))
    done = {(r["id"], r["way"]) for r in recorded}
    plains = {r["id"]: r for r in recorded if r["way"] == "plain"}  # the first answers a second look or cite reads
    sets = {r["id"]: r.get("set") for r in recorded}  # a shipped calibration prompt names no set; its rows do
    server = LlamaBackend(args.model).engine.server
    todo = [(row, way) for row in rows for way in args.way + ([] if args.no_gate else ["gate"])
            if (row["id"], way) not in done and (way not in LISTS or list_step.several(row["question"]))]
    for row, way in tqdm(todo, desc="reading", unit="call"):
        lang = answer_step.detect_lang(row["question"])
        start = time.perf_counter()
        if way == "gate":
            found = read_gate(server, row, lang)
        elif way in FOLLOWING:
            if row["id"] not in plains:
                raise SystemExit(f"--way {way} reads the plain answer: ask --way plain before it ({row['id']})")
            first = plains[row["id"]]
            found = (read_second(server, row, lang, first["answer"]) if way == "second"
                     else read_cite(server, row, lang, first))
        else:
            found = WAYS[way](server, row, lang)
        if way == "plain":
            plains[row["id"]] = found
        jsonl.append_rows(out, [{"id": row["id"], "set": row.get("set") or sets.get(row["id"]), "way": way,
                                 "question": row["question"],
                                 "gold": row.get("gold", ""), "question_type": row["question_type"],
                                 "answerable": row.get("answerable"), "model": args.model, **found,
                                 "seconds": round(time.perf_counter() - start, 1)}])
    print(f"{len(todo)} call(s) made: {out}")
    return 0


# ---------------------------------------------------------------- one decline rule, one judge and table path


def declines(value: float, threshold: float) -> bool:
    """The gate's rule, the one place a threshold is applied: decline below it."""
    return value < threshold


def gate_declines(question: str, p_yes: float, threshold: float) -> bool:
    """The contest's P(yes) gate on a question: below the threshold, where the calibration speaks for
    the question's form (`gate.speaks_for`: not a Russian yes/no question)."""
    return declines(p_yes, threshold) and contest_gate.speaks_for(question)


def parse_gate(gate: str) -> tuple[str, float]:
    """"p_yes<0.61" -> ("p_yes", 0.61)."""
    signal, _, threshold = gate.partition("<")
    return signal, float(threshold)


def the_rule(lang: str, scores: list, max_false: Optional[float] = None):
    """`gate.calibrate` on (id, answerable, score) rows with the contest's settings, or another share
    of answerable prompts it may decline (`max_false`)."""
    from submit.memory.dialogue import Settings
    rule = contest_gate.rule_of(Settings)
    if max_false is not None:
        rule["max_false"] = max_false
    return contest_gate.calibrate(lang, scores, **rule)


def calibrated(gate: str, max_false: Optional[float] = None) -> tuple[str, str]:
    """`p_yes<@FILE` -> (`p_yes<T`, a note): T as the contest class chooses it (`gate.calibrate`, its
    default rule, or with another share of answerable prompts it may decline, `max_false`) from
    FILE's gate rows; ("", the note) where that rule leaves the gate off. Any other gate comes
    back as it is."""
    signal, _, where = gate.partition("<")
    if not where.startswith("@"):
        return gate, ""
    rows = [r for r in rows_of([where[1:]]) if r.get("way", "gate") == "gate" and r.get(signal) is not None]
    lang = answer_step.detect_lang(rows[0]["question"]) if rows else "ru"
    found = the_rule(lang, [(r["id"], bool(r["answerable"]), r[signal]) for r in rows], max_false)
    note = (f"gate calibrated on {where[1:]} by the contest's rule ({len(rows)} prompts, AUC {found.auc}): "
            f"{found.why}")
    return (f"{signal}<{found.threshold}" if found.on else ""), note


def gated(rows: list[dict], gate: str, material: Optional[dict] = None) -> dict:
    """(file, set, id) -> whether the gate `SIGNAL<THRESHOLD` declines, from the rows of the `gate` way,
    or for a signal of the prompts (`speaker_margin`, the contest's reader-free speaker decline) from
    each answer's prompt row (`material`), where it has one."""
    if not gate:
        return {}
    signal, threshold = parse_gate(gate)
    found = {(r["file"], r.get("set"), r["id"]): gate_declines(r["question"], r[signal], threshold)
             for r in rows if r.get("way") == "gate" and signal in r}
    if found:
        return found
    for r in rows:
        prompt = prompt_of(material, r) if r.get("way") not in NOT_ANSWERS else None
        if prompt is not None and signal in prompt:
            value = prompt[signal]  # None: the signal does not apply to the question, nothing declined
            found[(r["file"], r.get("set"), r["id"])] = value is not None and declines(value, threshold)
    return found


def final(row: dict, declined: bool) -> str:
    """The answer the contest class gives: the reader's, or "no information" where a decline rule says no."""
    return no_info(row) if declined else row["answer"]


def with_listed(answer: str, question: str, listed: Optional[list], rests: Optional[tuple] = None) -> str:
    """The answer as the contest's `--lists list` leaves it: the listed items it lacks joined to it
    (`items.joined`: a cited answer's `rests`, (the lines it rests on, the material), keep the items
    of the topics its lines stand under), where the question was listed and the answer is not "no
    information"."""
    if listed is None or not answer or answer_step.says_no_info(answer):
        return answer
    held, lines = rests or ((), ())
    return list_step.joined(answer, listed, held, lines, answer_step.detect_lang(question), question)[0]


def variants(row: dict, declined: dict, gate: str, empty: bool = False,
             prompts: Optional[dict] = None, listings: Optional[dict] = None,
             seconds: Optional[dict] = None, switches: Optional[dict] = None,
             p_yes: Optional[float] = None) -> list[tuple[str, str, str]]:
    """(way, the way it adds a decline to, answer) for each answer a row stands for: the reader's
    own, then with the abstention check it asked ("check before", "check after": its no declines),
    or with the gate (`--gate`: the gate row's signal below the threshold declines); with `empty`,
    also with the contest's empty-answer decline (`answer.adds_nothing`), alone and with the gate;
    with `prompts` (`load_material`: the bench/prompts.py rows the answers were read from) too, with
    the unrelated-value decline (`rule_pile.unrelated`) after it, then the ungrounded-value decline
    (`rule_pile.ungrounded`), as the rule pile had them; with
    `seconds` (`second_looked`), with the second look at the answers the three rules or the reader
    decline ("+ second look"); with
    `listings` ((file, set, id) -> the items of the list ways' rows), each of those with the listed
    items joined too ("+ list",
    `with_listed`), for every question (one the list way did not read keeps its answer). A `bound`
    or `cite` row stands instead for its reply through the contest's decision (`bound_variants`),
    each with the listed items joined too where the list ways read its question (a cited answer's
    of the topics its lines rest on, as the contest joins them: `with_listed`)."""
    way = row.get("way") or ("ask" if row.get("ask") else "plain")
    out, rests = [(way, way, row["answer"])], {}
    if way in REPLIED:
        switched = switches.get(way) if switches else None
        for name, base, text, held, lines in bound_variants(row, prompts, switched, p_yes):
            out.append((name, base, text))
            rests[name] = (held, lines)
        if f"{way} + checks" in rests and way == "cite":  # the reply's own answer rests on the lines it quoted
            lines = rests[f"{way} + checks"][1]
            rests[way] = (decide.quoted(reply_of(row), lines), lines)
    else:
        out += _more(row, way, declined, gate, empty, prompts, seconds or {})
    if listings:
        listed = listings.get((row["file"], row.get("set"), row["id"]))
        out += [(f"{name} + list", base, with_listed(text, row["question"], listed, rests.get(name)))
                for name, base, text in out]
    return out


REPLIED = ("bound", "cite")  # ways whose rows are replies `decide.decide` reads (`reply_of`)


def reply_of(row: dict) -> decide.Reply:
    """A `cite` row's reply as the contest reads it (`decide.cited`), a `bound` one's as the bound
    stage did (`bench/bound.py`)."""
    return decide.cited(row["draft"], row["raw"]) if row["way"] == "cite" else bound.parse(row["raw"])


def decided(row: dict, lines: list, switches: decide.Switches, p_yes: Optional[float] = None) -> decide.Verdict:
    """A `cite` row through `decide.decide` (the same function the contest class calls), a `bound`
    one through the bound stage's decision (`bound.decided`: the same, its listed items joined)."""
    reply = reply_of(row)
    if row["way"] == "bound":
        return bound.decided(row["question"], reply, lines, switches, p_yes)
    return decide.decide(row["question"], reply, lines, switches, p_yes)


def bound_variants(row: dict, prompts: Optional[dict], switches: Optional[decide.Switches],
                   p_yes: Optional[float]) -> list:
    """A bound or cited reply through its decision (`decided`: `decide.decide` for a cited one):
    with every check on and no gate ("+ checks"), and with the `switches` a calibration earned,
    the gate's `p_yes` read where it has a threshold ("+ calibrated"): (way, base way, answer, the
    lines a cited answer rests on (none for a bound one), the material) each. Needs the prompt the
    reply was read from (its material); without it, none."""
    prompt = prompt_of(prompts, row)
    if prompt is None:
        return []
    way, lines = row["way"], answer_step.material(prompt["messages"], row["question"])
    found = [(f"{way} + checks", decided(row, lines, decide.Switches()))]
    if switches is not None:
        found.append((f"{way} + calibrated", decided(row, lines, switches, p_yes)))
    # a cited answer's list join keeps the items of the topics its lines rest on (`items.on_topic`);
    # a bound one joined its own items in `bound.decided`
    return [(name, way, verdict.text, verdict.held if way == "cite" else (), lines) for name, verdict in found]


def gate_readings(rows: list) -> dict:
    """id -> the gate row's P(yes) as the contest's decision reads it: None where the reply held
    neither yes nor no (`read` wrote 0.5 there for its tables: `yes_probability`)."""
    return {r["id"]: None if r["p_yes"] == 0.5 else r["p_yes"] for r in rows if r.get("way") == "gate"}


def calibrated_switches(spec: str) -> tuple[dict, str]:
    """`READING@PROMPTS` -> {way: the switches `decide.switch` earns on a calibration set}, for each
    of `REPLIED` READING has rows of: READING a `read` of it (its `bound` or `cite` rows, and its
    `gate` rows for the gate's threshold by the contest's rule), PROMPTS the set's prompt file
    (`submit/calibration/ru.c4000.jsonl`); and a note saying which checks are on and why."""
    if not spec:
        return {}, ""
    reading, _, prompt_spec = spec.partition("@")
    rows = rows_of([reading])
    prompts = {r["id"]: r for r in prompt_rows([prompt_spec])}
    gates = gate_readings(rows)
    threshold = None
    if gates:  # the gate's, by the contest's rule: the same for every way's checks
        lang = answer_step.detect_lang(rows[0]["question"])  # one calibration set, one language
        rule = the_rule(lang, [(i, bool(prompts[i]["answerable"]), p) for i, p in gates.items() if i in prompts])
        threshold = rule.threshold if rule.on else None
    found, notes = {}, []
    for way in REPLIED:
        replies = [r for r in rows if r.get("way") == way and r["id"] in prompts]
        if not replies:
            continue
        calibration = [decide.Calibrated.of(prompts[r["id"]], reply_of(r), gates.get(r["id"])) for r in replies]
        found[way] = decide.switch(calibration, threshold)
        notes.append(f"{way}: checks switched on {reading} ({len(replies)} replies): " + "; ".join(
            f"{name} {why}" for name, why in found[way].why.items()))
    if not found:
        raise SystemExit(f"--switches: no bound or cite rows of {prompt_spec}'s prompts in {reading}")
    return found, ".\n".join(notes)


def _more(row: dict, way: str, declined: dict, gate: str, empty: bool, prompts: Optional[dict], seconds: dict) -> list:
    """`variants`' declines: each (way, base way, answer) beyond the reader's own."""
    out = []
    for mode in CHECKS:
        if f"found_{mode}" in row:
            out.append((f"{way} + check {mode}", way, final(row, row[f"found_{mode}"] is False)))
    key = (row["file"], row.get("set"), row["id"])
    if key in declined:
        out.append((f"{way} + gate {gate}", way, final(row, declined[key])))
    if empty:
        said_nothing = bool(row["answer"]) and answer_step.adds_nothing(row["answer"], row["question"])
        out.append((f"{way} + empty", way, final(row, said_nothing)))
        if key in declined:
            out.append((f"{way} + empty + gate {gate}", way, final(row, said_nothing or declined[key])))
        if prompt_of(prompts, row) is not None:
            _, other, nowhere = call_free(row, prompts)
            out.append((f"{way} + empty + unrelated", way, final(row, said_nothing or other)))
            out.append((f"{way} + empty + unrelated + ungrounded", way, final(row, said_nothing or other or nowhere)))
            if key in declined:
                out.append((f"{way} + empty + unrelated + gate {gate}", way,
                            final(row, said_nothing or other or declined[key])))
                out.append((f"{way} + empty + unrelated + ungrounded + gate {gate}", way,
                            final(row, said_nothing or other or nowhere or declined[key])))
            if key in seconds and way == "plain":  # the second look was read of the plain answer
                ruled = said_nothing or other or nowhere or answer_step.says_no_info(row["answer"] or "")
                again = (seconds[key] or no_info(row)) if ruled else row["answer"]
                out.append((f"{way} + empty + unrelated + ungrounded + second look", way, again))
                if key in declined:
                    out.append((f"{way} + empty + unrelated + ungrounded + second look + gate {gate}", way,
                                no_info(row) if declined[key] else again))
    return out


def prompt_rows(specs: Sequence[str]) -> list[dict]:
    """The prompt rows of the bench/prompts.py files `specs` name (`prompt_file`)."""
    return rows_of([prompt_file(p) for p in specs], lambda r: "messages" in r)


def some_prompts(specs: Sequence[str], doing: str) -> list[dict]:
    """`prompt_rows`, and a clear stop where `specs` hold none (a mistyped path reads as no rows)."""
    rows = prompt_rows(specs)
    if not rows:
        raise SystemExit(f"no prompts to {doing} in {', '.join(specs)}: a bench/prompts.py file, or SET:CHARS")
    return rows


def prompt_file(spec: str) -> str:
    """A bench/prompts.py file: a path as given, or SET:CHARS (`ru_dev:4000`: the set's prompts at
    that evidence budget), built into runs/prompts/SET_cCHARS.jsonl where it is not yet (seconds
    with the embedding cache warm, minutes cold)."""
    name, _, chars = spec.partition(":")
    if Path(spec).is_file() or not chars.isdigit():
        return spec
    out = ROOT / "runs" / "prompts" / f"{name}_c{chars}.jsonl"
    if not out.is_file():
        from bench import prompts as builder
        builder.main(["--set", name, "--context-chars", chars, "--out", str(out)])
    return str(out)


def load_material(specs: Sequence[str]) -> dict:
    """The bench/prompts.py rows of `specs` (`prompt_file`), by (set, id), and by question for answer
    rows that carry no set (the first file's where two sets ask the same question)."""
    out: dict = {}
    for row in prompt_rows(specs):
        out[(row.get("set"), row["id"])] = row
        out.setdefault(row["question"], row)
    return out


def prompt_of(material: Optional[dict], row: dict) -> Optional[dict]:
    """The prompt an answer row was read from: its own set's and id's, else its id's in a prompt file
    that names no set (the shipped calibration sets), else, for a row that names no set, its
    question's. A row of one set never reads another set's prompt for the same question
    («Как зовут мою маму?» is answerable in one calibration dialogue and not in another)."""
    if not material:
        return None
    found = material.get((row.get("set"), row.get("id"))) or material.get((None, row.get("id")))
    return found if found is not None or row.get("set") is not None else material.get(row["question"])


def kept(rows: list, material: Optional[dict]) -> list:
    """A question's items as the contest keeps them from the raw replies of its list rows (`list`,
    then `list_late` where recorded: `items.union_items`), read again from its prompt where the
    prompts are given (so a changed rule replays), else the rows' recorded items, joined alike."""
    rows = sorted(rows, key=lambda r: LISTS.index(r["way"]))
    prompt = prompt_of(material, rows[0])
    lang = answer_step.detect_lang(rows[0]["question"])
    if prompt is None:
        return list_step.union_items([r["items"] for r in rows])
    return list_step.union_items([list_step.kept_items(r["raw"], list_ask(prompt, r["way"], lang), r["question"], lang)
                                  for r in rows])


def answered(paths, gate: str, empty: bool = False, prompts: Sequence[str] = (),
             switches: Optional[dict] = None) -> list[tuple[dict, str, str, str]]:
    """(row, way, base way, answer) for every answer of the readers' rows (the gate's and the list
    way's own rows aside, which add variants where the files hold them); `prompts`: bench/prompts.py
    files the answers were read from (the unrelated-value decline's material)."""
    rows = rows_of(paths)
    material = load_material(prompts) if prompts else None
    declined = gated(rows, gate, material)
    by_question = defaultdict(list)
    for r in rows:
        if r.get("way") in LISTS:
            by_question[(r["file"], r.get("set"), r["id"])].append(r)
    # joined only where the contest asks the list (`items.several`): a row recorded before a
    # question's form stopped asking it replays as the contest now answers
    listings = {key: kept(found, material) for key, found in by_question.items()
                if list_step.several(found[0]["question"])}
    seconds = second_looked(rows, material)
    p_yes = {(r["file"], r.get("set"), r["id"]): r["p_yes"] for r in rows if r.get("way") == "gate"}
    return [(row, *v) for row in rows if row.get("way") not in NOT_ANSWERS
            for v in variants(row, declined, gate, empty, material, listings, seconds, switches,
                              p_yes.get((row["file"], row.get("set"), row["id"])))]


def verdicts(paths: str) -> dict:
    """(question, answer) -> the judge's verdict, and (question, gold, answer) where the line names
    its gold, from `{"question", "answer", "correct"}` lines of one file or several, comma-separated,
    a later file's verdict replacing an earlier's (a second judge's reading of some items:
    `verdicts.jsonl,verdicts_strict.jsonl`). Read them with `verdict_of`."""
    found = {}
    for path in filter(None, paths.split(",")):
        for r in jsonl.read_rows(Path(path), lambda row: {"question", "answer", "correct"} <= set(row))[0]:
            found[(r["question"], r["answer"])] = r["correct"]
            if "gold" in r:
                found[(r["question"], r["gold"], r["answer"])] = r["correct"]
    return found


def verdict_of(known: dict, row: dict, text: str):
    """The verdict on `text` as an answer to `row`'s question: the one given with the row's gold where
    there is one (a question two dialogues ask, answerable in one: «Как зовут мою маму?»), else the
    question's; None where neither. A verdict given without its gold was given over the contest
    sample's dialogues (every one was, before the users came): it never speaks for a users' question."""
    given = known.get((row["question"], row.get("gold"), text))
    if given is None and not USERS_ID.match(str(row.get("id", ""))):
        given = known.get((row["question"], text))
    return given


def judge(args) -> int:
    """The items no verdict covers yet, one per (question, gold, answer), for a judge to read; a
    question asked with several golds is read again with each gold where its verdict names none."""
    known, items, seen = verdicts(args.verdicts), [], set()
    found = answered(args.answers, calibrated(args.gate, args.max_false)[0], args.empty, args.prompts or (),
                     calibrated_switches(args.switches)[0])
    golds = defaultdict(set)
    for row, _, _, _ in found:
        golds[row["question"]].add(row.get("gold"))
    for row, _, _, text in found:
        key = (row["question"], row.get("gold"), text)
        given = known.get(key) if len(golds[row["question"]]) > 1 else verdict_of(known, row, text)
        if given is None and key not in seen:
            seen.add(key)
            items.append({"id": f"j{len(items) + 1:04d}", "question": key[0], "gold": row["gold"], "answer": text})
    Path(args.pending).parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(Path(args.pending), items)
    print(f"{len(items)} item(s) to judge: {args.pending}")
    return 0


def table(args) -> int:
    known = verdicts(args.verdicts)
    counts: dict = {}  # (file, set, way) -> question type -> [right, n]; and each way's base
    bases, missing = {}, 0
    gate, note = calibrated(args.gate, args.max_false)
    switches, switched = calibrated_switches(args.switches)
    for row, way, base, text in answered(args.answers, gate, args.empty, args.prompts or (), switches):
        verdict = verdict_of(known, row, text)
        missing += verdict is None
        name = (row["file"], row.get("set") or "–", way)
        bases[name] = (row["file"], row.get("set") or "–", base)
        for kind in (row["question_type"], "ALL"):
            cell = counts.setdefault(name, {}).setdefault(kind, [0, 0])
            cell[0] += bool(verdict)
            cell[1] += 1
    kinds = sorted({k for c in counts.values() for k in c} - {"ALL"}) + ["ALL"]
    command = " ".join([".venv/bin/python bench/readers.py table", *args.answers, "--verdicts", args.verdicts]
                       + ([f"--gate '{args.gate}'"] if args.gate else []) + (["--empty"] if args.empty else [])
                       + [f"--prompts {p}" for p in args.prompts or ()]
                       + ([f"--switches {args.switches}"] if args.switches else []))
    lines = [f"# Readers on fixed answer prompts\n\n`{command}`\n",
             "| answers | set | way | " + " | ".join(kinds) + " |", "|---|---|---|" + "---|" * len(kinds)]
    for name, cells in counts.items():
        if cells["ALL"][1] == counts[bases[name]]["ALL"][1]:  # a decline shows where every row of its way has it
            lines.append("| " + " | ".join(name) + " | " + " | ".join(
                f"{cells[k][0]}/{cells[k][1]}" if k in cells else "–" for k in kinds) + " |")
    for said in (note, switched):
        if said:
            lines.append(f"\n{said}.")
    if missing:
        lines.append(f"\n{missing} answer(s) have no verdict yet (`bench/readers.py judge`): counted wrong.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


# ---------------------------------------------------------------- gate: the decline gate fitted


def with_readers(prompts: list[dict], readings: list[dict]) -> list[dict]:
    """Each prompt row with `p_yes.<model>` signals from the reading rows (the `gate` way)."""
    found = defaultdict(dict)
    for row in readings:
        if row.get("way") == "gate":
            found[(row.get("set"), row["id"])][f"p_yes.{short(row['model'])}"] = row["p_yes"]
    return [{**row, "signals": {**row["signals"], **found.get((row.get("set"), row["id"]), {})}} for row in prompts]


def short(model: str) -> str:
    return model.replace("qwen2.5-coder-", "q").replace(".", "").replace("b", "")


def curve(rows: list[dict], signal: str) -> list[tuple]:
    """(threshold, no-answer declined, answerable declined) for declining below each distinct value."""
    values = sorted({r["signals"][signal] for r in rows if signal in r["signals"]})
    no = [r for r in rows if not r["answerable"] and signal in r["signals"]]
    yes = [r for r in rows if r["answerable"] and signal in r["signals"]]
    return [(threshold, share(no, signal, threshold), share(yes, signal, threshold))
            for threshold in values + [float("inf")]]


def share(rows: list[dict], signal: str, threshold: float) -> float:
    return sum(declines(r["signals"][signal], threshold) for r in rows) / len(rows) if rows else 0.0


def best_at(points: list[tuple], false_rate: float) -> tuple:
    """The point declining the most no-answer questions while declining at most `false_rate` of the rest."""
    allowed = [p for p in points if p[2] <= false_rate]
    return max(allowed, key=lambda p: (p[1], -p[2])) if allowed else (None, 0.0, 0.0)


def gate_table(rows: list[dict], false_rate: float) -> list[str]:
    sets = sorted({r.get("set") or "?" for r in rows})
    signals = sorted({s for r in rows for s in r["signals"]})
    lines = ["| set | n (no answer) | signal | declined (no answer) | declined (answerable) | threshold (in-sample) |",
             "|---|---|---|---|---|---|"]
    for name in sets:
        part = [r for r in rows if (r.get("set") or "?") == name]
        for signal in signals:
            if not any(signal in r["signals"] for r in part):
                continue
            threshold, no, yes = best_at(curve(part, signal), false_rate)
            n_no = sum(not r["answerable"] for r in part)
            lines.append(f"| {name} | {len(part)} ({n_no}) | {signal} | {no:.2f} | {yes:.2f} | "
                         f"{'–' if threshold is None else f'{threshold:.4g}'} |")
    return lines


def gate(args) -> int:
    rows = with_readers(rows_of(args.prompts), rows_of(args.reading))
    print("\n".join(gate_table(rows, args.false_rate)))
    return 0


def empty(args) -> int:
    """Every recorded answer the contest's empty-answer decline (`answer.adds_nothing`) would turn
    into "no information", by whether its question has an answer; answers already declining and
    the gate's own rows aside. Files: answer rows with `question`, `answer` and `question_type`
    (readers' rows, run.py's results.jsonl)."""
    import glob
    paths = sorted({p for pattern in args.files for p in glob.glob(pattern, recursive=True)})
    counts: dict = defaultdict(int)
    declined = []
    for path in paths:
        for row in jsonl.read_rows(Path(path), lambda r: "question" in r and "answer" in r)[0]:
            text, question = row.get("answer") or "", row["question"]
            if row.get("way") in NOT_ANSWERS or not text or answer_step.says_no_info(text):
                continue
            kind = "no answer" if row.get("question_type") in ("no_info", "adversarial") else "answerable"
            counts[kind] += 1
            if answer_step.adds_nothing(text, question):
                counts[kind + " declined"] += 1
                declined.append((kind, question, text))
    print(f"{len(paths)} files, {counts['answerable'] + counts['no answer']} answers: answerable "
          f"{counts['answerable declined']} of {counts['answerable']} declined, no answer "
          f"{counts['no answer declined']} of {counts['no answer']} declined")
    for kind, question, text in sorted(set(declined)):
        print(f"  {kind}: {question} | {text}")
    return 0


def unrelated(args) -> int:
    """Every recorded Russian answer the rule pile's unrelated-value decline (`rule_pile.unrelated`) would
    turn into "no information", by whether its question has an answer, read against the answer
    prompt it was read from (`--prompts`, bench/prompts.py files, matched by set and id: built with
    the context and facts the answers were read from, so the material is the reader's); answers
    already declining and the gate's rows aside. `correct` of a row (run.py's results), else the
    `--verdicts`' verdict, says what a decline of an answerable question cost."""
    import glob
    known = verdicts(args.verdicts)
    prompts = load_material(args.prompts)
    paths = sorted({p for pattern in args.files for p in glob.glob(pattern, recursive=True)})
    total: dict = defaultdict(int)
    for path in paths:
        counts: dict = defaultdict(int)
        rows = jsonl.read_rows(Path(path), lambda r: "question" in r and "answer" in r)[0]
        latest = {(r.get("id"), r.get("way"), i if r.get("id") is None else 0): r for i, r in enumerate(rows)}
        for row in latest.values():  # a resumed run's row replaces its first
            text, question, prompt = row.get("answer") or "", row["question"], prompt_of(prompts, row)
            if row.get("way") in NOT_ANSWERS or prompt is None or not text or answer_step.says_no_info(text):
                continue
            kind = "answerable" if prompt["answerable"] else "no answer"
            counts[kind] += 1
            if rule_pile.unrelated(text, question, answer_step.material(prompt["messages"], question)):
                counts[kind + " declined"] += 1
                right = row.get("correct", verdict_of(known, row, text))
                counts["right declined"] += kind == "answerable" and bool(right)
                print(f"  {kind}: {question} | {text}")
        if counts:
            print(f"{path}: answerable {counts['answerable declined']} of {counts['answerable']} declined "
                  f"({counts['right declined']} judged right), no answer {counts['no answer declined']} of "
                  f"{counts['no answer']}")
        for k, v in counts.items():
            total[k] += v
    print(f"ALL {len(paths)} files: answerable {total['answerable declined']} of {total['answerable']} declined "
          f"({total['right declined']} judged right), no answer {total['no answer declined']} of {total['no answer']}")
    return 0


def call_free(row: dict, material: Optional[dict]) -> tuple[bool, bool, bool]:
    """Whether each of the rule pile's call-free declines turns a reader's answer into "no
    information": (the empty-answer decline; the unrelated-value and the ungrounded-value
    declines, read against the answer's prompt where `material` has it)."""
    text, question, prompt = row["answer"] or "", row["question"], prompt_of(material, row)
    if prompt is None:
        return rules_decline(text, question, [])[0], False, False
    return rules_decline(text, question, answer_step.material(prompt["messages"], question))


def second_looked(rows: list, material: Optional[dict]) -> dict:
    """(file, set, id) -> what the contest's second look makes of a declined plain answer, for each
    `second` row read from a prompt `material` has: its answer where it holds up on the focused
    lines (`answer.second_answer`), else None (the question stays declined)."""
    out = {}
    firsts = {(r["file"], r.get("set"), r["id"]): r["answer"] for r in rows if (r.get("way") or "plain") == "plain"}
    for r in rows:
        prompt = prompt_of(material, r) if r.get("way") == "second" else None
        if prompt is None:
            continue
        key = (r["file"], r.get("set"), r["id"])
        focused = rule_pile.focus(r["question"], answer_step.material(prompt["messages"], r["question"]))
        own = answer_step.says_no_info(firsts.get(key) or "")
        out[key] = rule_pile.second_answer(r["answer"], r["question"], focused, overrules=own)
    return out


def fold_of(row_id: str) -> str:
    """The dialogue a prompt's id names, its first run of digits (`cal-3-07`, `3-dev-04` -> "3"):
    the fold a cross-validated gate holds out."""
    found = re.search(r"\d+", row_id)
    return found.group() if found else row_id


def fold_thresholds(gates: dict, answerable: dict, max_false: Optional[float] = None) -> dict:
    """fold -> the threshold the contest's rule (`gate.calibrate`) picks on the other folds' gate
    rows (None where it leaves the gate off): each fold's questions read by a threshold fitted
    without them."""
    out = {}
    for fold in sorted({fold_of(i) for i in gates}):
        rest = [(i, answerable[i], p) for i, p in gates.items() if fold_of(i) != fold and i in answerable]
        found = the_rule("ru", rest, max_false)
        out[fold] = found.threshold if found.on else None
    return out


def run_name(path: str) -> str:
    """A file's name in a table: its stem, or for a run's `results.jsonl` the folders above it
    (`runs/systems/ru_dev/literal/dev/ours/results.jsonl` -> "literal/dev/ours")."""
    found = Path(path)
    return "/".join(found.parts[-4:-1]) if found.stem == "results" else found.stem


def declines_table(args) -> int:
    """What the rule pile's decline stage (and the cited and bound stages' checks, for their rows) does
    to each file's questions, stage by stage: the reader's
    own "no information", then the empty-answer decline, the unrelated-value and ungrounded-value
    declines (read against the answer's prompt, `--prompts`) and the gate (`--gate p_yes<@FILE`: the threshold the
    contest's rule picks on FILE's gate rows; `--gate cv`: on the file's own gate rows less the
    question's dialogue, `fold_of`) — no-answer and answerable questions declined, and of the
    answerable ones declined how many the verdicts call right."""
    import glob
    known = verdicts(args.verdicts)
    material = load_material(args.prompts)
    switches, note = calibrated_switches(args.switches)
    paths = sorted({p for pattern in args.files for p in glob.glob(pattern, recursive=True)})
    chosen = calibrated(args.gate, args.max_false)[0] if args.gate not in ("", "cv") else ""
    fixed = parse_gate(chosen)[1] if chosen else None
    named = {"": "", "cv": "p_yes, each dialogue held out"}.get(args.gate, chosen or f"{args.gate} (off)")
    # a signal of the prompts (the speaker margin) declines by the prompt row, not a gate row
    prompt_signal = bool(chosen) and parse_gate(chosen)[0] != "p_yes"
    looks = "+ second look"
    stages = ("the reader's own", "+ empty", "+ unrelated", "+ ungrounded", looks,
              f"+ gate {named}" if args.gate else "")
    print("| answers | declines (each with those above) | no answer declined | answerable declined | "
          "of them judged right |\n|---|---|---|---|---|")
    for path in paths:
        rows, name = rows_of([path]), run_name(path)
        seconds = {key[2]: again for key, again in second_looked(rows, material).items()}
        gates = {r["id"]: r["p_yes"] for r in rows if r.get("way") == "gate" and r.get("p_yes") is not None}
        plain = {r["id"]: r for r in rows if (r.get("way") or "plain") == "plain" and prompt_of(material, r)}
        answerable = {i: bool(prompt_of(material, r)["answerable"]) for i, r in plain.items()}
        folds = fold_thresholds(gates, answerable, args.max_false) if args.gate == "cv" else {}
        by_prompt = {key[2]: said for key, said in gated(rows, chosen, material).items()} if prompt_signal else {}
        declined = {i: set() for i in plain}
        for i, row in plain.items():
            threshold = folds.get(fold_of(i)) if args.gate == "cv" else fixed
            for stage, says in zip(stages, (answer_step.says_no_info(row["answer"] or ""), *call_free(row, material),
                                            seconds.get(i) is not None,
                                            by_prompt.get(i, False) if prompt_signal else
                                            (threshold is not None and i in gates
                                             and gate_declines(row["question"], gates[i], threshold)))):
                if says and stage:
                    declined[i].add(stage)
        shown = [s for s in stages if s and (s != looks or seconds)]  # the second look where it was read
        rules_and_look = set(stages[:5])  # a second look that holds up takes back the reader's or a rule's decline
        for stage in shown:
            upto = set(stages[:stages.index(stage) + 1])
            out = [i for i in plain if (hit := declined[i] & upto) and not (looks in hit and hit <= rules_and_look)]
            lost = [i for i in out if answerable[i]]
            right = sum(bool(verdict_of(known, plain[i], plain[i]["answer"])) for i in lost)
            print(f"| {name} | {stage} | {len(out) - len(lost)}/{sum(not a for a in answerable.values())} | "
                  f"{len(lost)}/{sum(answerable.values())} | {right} |")
        if folds:
            print(f"\n{name}: thresholds by held-out dialogue: "
                  + ", ".join(f"{f}: {'off' if t is None else t}" for f, t in folds.items()) + "\n")
        bound_declines(name, rows, material, known, switches)
    if note:
        print(f"\n{note}.")
    return 0


def bound_declines(name: str, rows: list, material: dict, known: dict, switches: dict) -> None:
    """`declines_table`'s lines for a file's bound or cited answers (`--way bound`, `--way cite`),
    through `decide.decide`: the reader's own "no information", then each check of
    `decide.CHECKS` added in turn (every one on, no gate), then the checks and gate the
    calibration's `switches` (per way) turned on."""
    gates = gate_readings(rows)
    checks = list(decide.CHECKS)
    for way in REPLIED:
        replies = [r for r in rows if r.get("way") == way and prompt_of(material, r)]
        if not replies:
            continue
        stages = [(f"{way}: {'the reader' + chr(39) + 's own' if not k else '+ ' + checks[k - 1]}",
                   decide.Switches(frozenset(checks[:k]))) for k in range(len(checks) + 1)]
        if way in switches:
            stages.append((f"{way}: calibrated ({', '.join(sorted(switches[way].on)) or 'nothing on'})",
                           switches[way]))
        answerable = sum(bool(prompt_of(material, r)["answerable"]) for r in replies)
        for stage, on in stages:
            out = lost = right = 0
            for r in replies:
                prompt = prompt_of(material, r)
                lines = answer_step.material(prompt["messages"], r["question"])
                if decided(r, lines, on, gates.get(r["id"])).declined:
                    out += 1
                    if prompt["answerable"]:
                        lost += 1
                        right += bool(verdict_of(known, r, r["answer"]))
            print(f"| {name} | {stage} | {out - lost}/{len(replies) - answerable} | {lost}/{answerable} | {right} |")


def keep(args) -> int:
    """The kept calibration (`submit/calibrating.py`: `kept_path`, `write_kept`) that a `--gate
    calibrated` run of the local model would keep, made of a `read` of the calibration set by that
    model (`--way plain --way cite` and its gate rows, asked through the same llama.cpp server and
    request as the run's backend): a later run with `--gate kept` takes it instead of asking the
    set's prompts again. The gate's threshold by the contest's rule (`the_rule`); a gate row whose
    reply held neither yes nor no (0.5 in a `read`: `yes_probability`) is unreadable, as in the run.
    The key is made with the asks of the code that runs: a reading made with older asks is for a
    file no run would find, so read the set again after a wording changes."""
    from local_eval.llms import llama
    from submit.calibrating import kept_path, write_kept
    from submit.memory.dialogue import Settings
    reading, _, set_file = args.reading.partition("@")
    path = Path(set_file)
    if not path.is_file() or not Path(reading).is_file():
        raise SystemExit(f"keep: READING@SET must name two files, got {args.reading!r}")
    items = contest_gate.load_set(path)
    rows = rows_of([reading])
    gates = gate_readings(rows)
    cites = {r["id"]: r for r in rows if r.get("way") == "cite"}
    lacking = [item["id"] for item in items if item["id"] not in gates or item["id"] not in cites]
    if lacking:
        raise SystemExit(f"keep: {len(lacking)} of the set's {len(items)} prompts have no gate or cite row in "
                         f"{reading} (first: {lacking[0]}); read them first (bench/readers.py read --way plain "
                         "--way cite)")
    models = {r["model"] for r in rows}
    if len(models) != 1:
        raise SystemExit(f"keep: {reading} holds the rows of {len(models)} models ({sorted(models)}); one a file")
    identity = llama.identity(models.pop())
    lang = answer_step.detect_lang(items[0]["question"])
    found = the_rule(lang, [(item["id"], bool(item["answerable"]), gates[item["id"]]) for item in items])
    replies = [decide.cited(cites[i]["draft"], cites[i]["raw"]) if answer_step.clean_answer(cites[i]["draft"])
               else None for i in (item["id"] for item in items)]
    kept = kept_path(Path(args.out), identity, Settings(), lang, path)
    write_kept(kept, identity, path.name, found, replies)
    print(f"{kept}: {identity} on {path.name} ({len(items)} prompts): the gate {'on' if found.on else 'off'} "
          f"({found.why}); the checks are decided from its replies by the run that takes it")
    return 0


def coverage(args) -> int:
    """The coverage-accuracy curve of one reader's plain answers: the gate's threshold swept over
    its own P(yes) readings (the `gate` rows), after the contest's call-free declines (empty
    answer; unrelated value with `--prompts`). Per threshold: coverage (the share of questions
    answered), accuracy on the answered ones, and right answers over all (a declined no-answer
    question right); the threshold the run's own calibration chose (`--gate p_yes<@FILE`) marked.
    Writes OUT.png and OUT.md."""
    known = verdicts(args.verdicts)
    rows = rows_of([args.answers])
    material = load_material(args.prompts or ())
    p_yes = {r["id"]: r["p_yes"] for r in rows if r.get("way") == "gate" and "p_yes" in r}
    plain = [r for r in rows if (r.get("way") or "plain") == "plain" and r["id"] in p_yes]
    chosen = parse_gate(calibrated(args.gate)[0])[1] if args.gate and calibrated(args.gate)[0] else None
    points = []
    for threshold in sorted({0.0, *p_yes.values(), 1.01} | ({chosen} if chosen is not None else set())):
        answered = [r for r in plain if not any(call_free(r, material))
                    and not gate_declines(r["question"], p_yes[r["id"]], threshold)
                    and not answer_step.says_no_info(r["answer"] or "")]
        right_answered = sum(bool(verdict_of(known, r, r["answer"])) for r in answered)
        right_declined = sum(not r["answerable"] for r in plain if r not in answered)
        points.append((threshold, len(answered) / len(plain), right_answered / len(answered) if answered else None,
                       right_answered + right_declined))
    command = (["bench/readers.py coverage", args.answers, "--verdicts", args.verdicts]
               + ([f"--gate '{args.gate}'"] if args.gate else []) + [f"--prompts {p}" for p in args.prompts or ()]
               + ["--out", args.out])
    lines = [f"`.venv/bin/python {' '.join(command)}`", "",
             f"{len(plain)} questions; {Path(args.answers).stem}, plain answers, the call-free declines first.", "",
             "| decline below P(yes) | coverage | accuracy answered | right of all |", "|---:|---:|---:|---:|"]
    lines += [f"| {t:.3f}{' (its calibration)' if t == chosen else ''} | {c:.2f} | "
              f"{'–' if a is None else f'{a:.2f}'} | {n}/{len(plain)} |" for t, c, a, n in points]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out + ".md").write_text(text, encoding="utf-8")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 4))
    shown = [(t, c, a) for t, c, a, _ in points if a is not None]  # none answered: no accuracy
    ax.plot([c for _, c, _ in shown], [a for _, _, a in shown], marker=".")
    for t, c, a in shown:
        if t == chosen:
            ax.annotate(f"its calibration (P(yes) < {t:.2f})", (c, a), textcoords="offset points", xytext=(-150, -18))
            ax.plot([c], [a], "o", color="red")
    ax.set_xlabel("coverage (share of questions answered)")
    ax.set_ylabel("accuracy of the answers given")
    ax.set_title(f"{Path(args.answers).stem}: the gate's threshold swept", fontsize=9)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    fig.tight_layout()
    fig.savefig(args.out + ".png", dpi=100)
    return 0


def items(args) -> int:
    """Per list question of a `--lists select` run: facts judged and kept, the gold items' facts
    (`--gold`: a fact names an item when it holds one of the item stems) with their P(yes) ranks,
    and the judge's AUC for gold facts against the rest within the question."""
    gold = {k: v for k, v in json.loads(Path(args.gold).read_text(encoding="utf-8")).items() if not k.startswith("_")}
    rows = [r for r in jsonl.read_rows(Path(args.results), lambda r: "id" in r)[0] if r["id"] in gold]
    print("| question | facts judged | kept | gold facts | their P(yes) ranks | AUC gold vs rest |")
    print("|---|---|---|---|---|---|")
    aucs = []
    for row in rows:
        judged = (row.get("stats") or {}).get("items") or []
        scores = [x["p_yes"] or 0.0 for x in judged]
        named = [any(stem.lower() in x["fact"].lower() for stem in gold[row["id"]]) for x in judged]
        order = sorted(range(len(scores)), key=lambda j: -scores[j])
        ranks = sorted(order.index(j) + 1 for j, hit in enumerate(named) if hit)
        value = contest_gate.auc([s for s, hit in zip(scores, named) if hit],
                                 [s for s, hit in zip(scores, named) if not hit])
        aucs.append(value)
        print(f"| {row['id']} | {len(judged)} | {sum(x['kept'] for x in judged)} | {sum(named)} | "
              f"{', '.join(map(str, ranks))} | {'–' if value is None else f'{value:.2f}'} |")
    known = [a for a in aucs if a is not None]
    print(f"mean AUC {sum(known) / len(known):.2f} over {len(known)} list questions" if known else "no list question")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("answer", help="ask an LLM every prompt, and the abstention check both ways")
    a.add_argument("--prompts", action="append", required=True,
                   help="a prompt file (bench/prompts.py), or SET:CHARS (`ru_dev:4000`, built where it is not yet)")
    a.add_argument("--llm", required=True, help="LLM spec (local_eval's; e.g. cache:DIR+llama:qwen2.5-coder-1.5b)")
    a.add_argument("--out", required=True, help="answers JSONL (appended; a rerun reads only what is missing)")
    a.add_argument("--ask", default="", help="another last line for every prompt (a wording to try)")
    a.add_argument("--no-checks", action="store_true", help="the answer alone, no abstention check")
    r = sub.add_parser("read", help="ask the local model every prompt in every way, and the gate question")
    r.add_argument("--prompts", action="append", required=True,
                   help="a prompt file (bench/prompts.py), or SET:CHARS (`ru_dev:4000`, built where it is not yet)")
    r.add_argument("--way", action="append", choices=(*WAYS, *FOLLOWING), default=[],
                   help="ways to answer (none: only the gate question); `second`: the contest's second look at "
                        "a plain answer a call-free rule declines; `cite`: the lines the plain answer rests on "
                        "(both after --way plain, or on a file that has it)")
    r.add_argument("--model", default="qwen2.5-coder-1.5b", help="a llama: model (name or GGUF path)")
    r.add_argument("--out", required=True)
    r.add_argument("--no-gate", action="store_true", help="do not ask the yes/no question")
    for name, helps in (("judge", "write the items no verdict covers yet"), ("table", "right answers per type")):
        s = sub.add_parser(name, help=helps)
        s.add_argument("answers", nargs="+")
        s.add_argument("--verdicts", default="", required=name == "table",
                       help="verdicts JSONL ({question, answer, correct}); several comma-separated, a later one's "
                            "verdict replacing an earlier's")
        s.add_argument("--gate", default="", help="SIGNAL<THRESHOLD: decline where the gate row's signal is below; "
                       "SIGNAL<@FILE: at the threshold the contest's rule picks on FILE")
        s.add_argument("--max-false", type=float, help="with SIGNAL<@FILE: the rule's share of answerable prompts "
                       "the gate may decline [default: the contest's, Settings.gate_max_false]")
        s.add_argument("--empty", action="store_true", help="also the answers with the contest's empty-answer "
                       "decline (an answer naming nothing the question does not: submit/memory/answer.py)")
        s.add_argument("--prompts", action="append", help="with --empty: the bench/prompts.py file the answers "
                       "were read from, or SET:CHARS to build it (ru_dev:4000), to add the unrelated-value decline "
                       "after it (repeat for several)")
        s.add_argument("--switches", default="", help="READING@PROMPTS: the bound and cited answers (`--way bound`, "
                       "`--way cite`) also "
                       "through the checks a calibration earns (submit/memory/decide.py): READING a read of the "
                       "calibration prompts PROMPTS by the same reader, with its gate rows")
        if name == "judge":
            s.add_argument("--pending", required=True, help="where to write the items to judge")
        else:
            s.add_argument("--out", help="also write the table here")
    g = sub.add_parser("gate", help="the decline gate per signal: no-answer and answerable questions declined")
    g.add_argument("--prompts", nargs="+", required=True, help="prompt files with signals (bench/prompts.py)")
    g.add_argument("--reading", nargs="*", default=[], help="`read` rows whose gate way gives p_yes")
    g.add_argument("--false-rate", type=float, default=0.05, help="answerable questions the gate may decline")
    i = sub.add_parser("items", help="how the list judge of a contest-path run (--lists select) kept the facts")
    i.add_argument("results", help="a local_eval run's results.jsonl (its rows' stats hold the judged facts)")
    i.add_argument("--gold", default=str(ITEM_GOLD), help="question id -> stems of its gold items (JSON)")
    e = sub.add_parser("empty", help="the recorded answers the empty-answer decline would turn into no information")
    e.add_argument("files", nargs="*", default=["bench/results/**/*.jsonl"],
                   help="answer files or glob patterns (default: every JSONL under bench/results)")
    u = sub.add_parser("unrelated", help="the recorded Russian answers the unrelated-value decline would decline")
    u.add_argument("files", nargs="+", help="answer files or glob patterns")
    u.add_argument("--verdicts", default="", help="verdicts JSONL ({question, answer, correct}) for rows without "
                   "their own `correct`")
    u.add_argument("--prompts", action="append", required=True,
                   help="bench/prompts.py output the answers were read from, or SET:CHARS to build it "
                   "(ru_dev:4000; repeat for several)")
    d = sub.add_parser("declines", help="the contest's decline stage, stage by stage: no-answer and answerable "
                       "questions declined")
    d.add_argument("files", nargs="+", help="`read` files with plain answers and gate rows, or glob patterns")
    d.add_argument("--prompts", action="append", required=True,
                   help="the prompts the answers were read from, or SET:CHARS (ru_dev:4000; repeat for several)")
    d.add_argument("--gate", default="", help="p_yes<@FILE: the threshold the contest's rule picks on FILE's gate "
                   "rows; cv: on each file's own gate rows, the question's dialogue held out")
    d.add_argument("--verdicts", default="", help="verdicts JSONL: how many declined answerable answers were right")
    d.add_argument("--max-false", type=float, help="the calibration rule's share of answerable prompts the gate may "
                   "decline [default: the contest's, Settings.gate_max_false]")
    d.add_argument("--switches", default="", help="READING@PROMPTS: the bound and cited answers' checks as a "
                   "calibration earns them (see table --switches)")
    c = sub.add_parser("coverage", help="the coverage-accuracy curve of a reader's answers, the gate swept")
    c.add_argument("answers", help="a `read` file with plain answers and gate rows (bench/results/reading/)")
    c.add_argument("--verdicts", required=True, help="verdicts JSONL ({question, answer, correct})")
    c.add_argument("--gate", default="", help="p_yes<@FILE: mark the threshold the run's calibration chose")
    c.add_argument("--prompts", action="append", help="the prompts the answers were read from, or SET:CHARS: "
                   "the unrelated-value decline too")
    c.add_argument("--out", required=True, help="writes OUT.png and OUT.md")
    k = sub.add_parser("keep", help="a kept calibration (the file a --gate calibrated run keeps) made of a `read` "
                       "of the calibration set")
    k.add_argument("reading", metavar="READING@SET", help="a `read` of the calibration set by the local model "
                   "(its gate and cite rows) @ the set file (submit/calibration/ru.c8000.jsonl)")
    k.add_argument("--out", default=str(ROOT / "local_eval" / "calibrated"),
                   help="the folder of kept calibrations [default: local_eval/calibrated, the shipped ones]")
    args = p.parse_args(argv)
    return {"answer": answer, "empty": empty, "unrelated": unrelated, "coverage": coverage, "read": read,
            "declines": declines_table, "keep": keep,
            "judge": judge, "table": table, "gate": gate, "items": items}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
