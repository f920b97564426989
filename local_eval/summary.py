"""A run's summary: scores over its complete rows, what was left incomplete, the token
ledger, the timing profile; written as summary.json and printed as a table.

The fields, key by key: docs/summary.md. Called by run.py (answer mode and --merge);
retrieval mode's summary is `retrieval_eval.run`'s.
"""
from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Optional

from . import judges, profiler


def summarize(rows: list, options) -> dict:
    """Scores over the complete rows; incomplete ones are counted with their reasons, not scored."""
    complete = [r for r in rows if r["complete"]]
    by_type = defaultdict(list)
    for row in complete:
        by_type[row["question_type"]].append(row)
    fallbacks = Counter()
    for row in complete:
        fallbacks.update(row["fallbacks"])
    reasons = Counter(why for row in rows if not row["complete"] for why in row["incomplete"])
    return {
        "mode": "answer", "dataset": options.dataset, "data": options.data, "refined": options.refined,
        "llm_spec": options.llm, "llm_fallback": options.llm_fallback,
        "embedder": "the submission's own" if getattr(options, "submission", None) else options.embedder,
        "judge": options.judge, "scorer": f"judge:{options.judge}" if options.judge else "lexical",
        "judge_note": judges.SMALL_MODEL_NOTE if judges.small_model(options.judge) else None,
        "records": len(complete), "overall": block(complete),
        "by_type": {t: block(rs) for t, rs in sorted(by_type.items())},
        "judge_unparsed": sum(1 for r in complete if options.judge and r["judge"] is None),
        "fallbacks": dict(fallbacks), "llm": llm_ledger(complete),
        "incomplete": {"records": len(rows) - len(complete), "reasons": dict(reasons)},
        "degraded": degraded(complete),
        "gate": gate(complete),
        "contest_stop": contest_stop(rows),
        "profile": profiler.profile(complete, options.project_n, profiler.uses_memo(options.llm)),
    }


def mean(values):
    """The mean of the values that are not None, to 4 places; None when there are none."""
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def block(rows) -> dict:
    """The scores of a group of rows (`overall`, or one question type)."""
    out = {"n": len(rows), "accuracy": mean(r["correct"] for r in rows), "f1": mean(r["f1"] for r in rows),
           "em": mean(r["em"] for r in rows), **evidence(rows)}
    for key in ("refined_f1", "refined_bleu"):
        if any(key in r for r in rows):
            out[key] = mean(r.get(key) for r in rows)
    return out


def evidence(rows) -> dict:
    """`evidence_in_context`: the share of the questions with evidence turns (`evidence_n` of them)
    whose packed context held every one; questions without evidence (abstention, or a gold
    without evidence ids) are left out. The one definition, also bench/locomo_answers.py's."""
    found = [r["evidence_in_context"] for r in rows if r.get("evidence_in_context") is not None]
    return {"evidence_in_context": mean(found), "evidence_n": len(found)}


def llm_ledger(rows) -> dict:
    """LLM calls and tokens of the submission over the rows, and per dialogue (= per row)."""
    totals = [(r.get("stats") or {}).get("llm") or {} for r in rows]
    out = {k: sum(t.get(k, 0) for t in totals) for k in ("calls", "prompt_tokens", "output_tokens")}
    cut = {k: sum(t.get(k, 0) for t in totals) for k in ("prompts_cut", "tokens_cut")}
    if any(cut.values()):  # another submission's prompts over the reader's context (--submission)
        out.update(cut)
    refused = Counter()
    for t in totals:  # the requests vLLM's stand-in refused, by kind (--submission)
        refused.update(t.get("refused") or {})
    if refused:
        out["refused"] = dict(refused)
    n = max(1, len(rows))
    out.update({f"{k}_per_dialogue": round(out[k] / n, 1) for k in ("calls", "prompt_tokens", "output_tokens")})
    return out


def gate(rows: list) -> Optional[dict]:
    """The decline gate over the run: each language's calibration (its rule's threshold, rates and
    scores, as the submission chose it) and what the gate did to the records, split by whether
    the gold is a decline; None where the submission has no gate."""
    found = [r["stats"]["gate"] for r in rows if (r.get("stats") or {}).get("gate")]
    if not found:
        return None
    asked = [(r, r["stats"]["gate"]) for r in rows if (r.get("stats") or {}).get("gate")]
    speaker = [r for r, _ in asked if r["stats"].get("declined") == "speaker"]
    return {"calibration": {g["calibration"]["lang"]: g["calibration"] for g in found},
            "speaker_calibration": {g["speaker_calibration"]["lang"]: g["speaker_calibration"]
                                    for g in found if g.get("speaker_calibration")},
            "checks": {g["checks"]["lang"]: g["checks"] for g in found if g.get("checks")},
            "checks_declined": {name: {"answerable": sum(not r["abstention"] for r in by),
                                       "unanswerable": sum(bool(r["abstention"]) for r in by)}
                                for name in sorted({r["stats"].get("declined") for r, _ in asked} - {None})
                                for by in [[r for r, _ in asked if r["stats"].get("declined") == name]]},
            "speaker_declined": {"answerable": sum(not r["abstention"] for r in speaker),
                                 "unanswerable": sum(bool(r["abstention"]) for r in speaker)},
            "asked": sum(g["p_yes"] is not None for _, g in asked),
            "declined": {"answerable": sum(g["gated"] for r, g in asked if not r["abstention"]),
                         "unanswerable": sum(g["gated"] for r, g in asked if r["abstention"])},
            "records": {"answerable": sum(not r["abstention"] for r, _ in asked),
                        "unanswerable": sum(bool(r["abstention"]) for r, _ in asked)}}


def contest_stop(rows: list):
    """The first row whose submission raised (run past with --keep-going): the record, in the folder's
    order, at which the contest would have stopped the whole run; None when none raised."""
    for index, row in enumerate(rows, 1):
        error = (row.get("stats") or {}).get("submission_error")
        if error:
            return {"index": index, "id": row["id"], "call": error["call"], "where": error["where"],
                    "error": error["error"]}
    return None


def stand_in_line(summary: dict):
    """The vLLM stand-in's cuts and refusals in one line (--submission); None when there were none."""
    llm = summary["llm"]
    said = []
    if llm.get("prompts_cut"):
        said.append(f"{llm['prompts_cut']} prompt(s) cut to the reader's context ({llm['tokens_cut']} tokens "
                    "dropped, their latest kept)")
    if llm.get("refused"):
        said.append("refused as vLLM 0.9.2 refuses: " + ", ".join(f"{k} {v}" for k, v in llm["refused"].items()))
    return "vLLM stand-in: " + "; ".join(said) if said else None


def degraded(rows: list) -> dict:
    """Records whose extraction the time budget cut (`--time-budget`), per level reached."""
    levels = Counter(key for row in rows for key in row["fallbacks"] if key.startswith("budget_level_"))
    hit = sum(1 for row in rows if any(key.startswith("budget_level_") for key in row["fallbacks"]))
    return {"records": hit, "levels": dict(levels)}


def write(summary: dict, out: Path, start: float) -> None:
    """OUT/summary.json, with this invocation's wall time."""
    summary["wall_seconds"] = round(time.perf_counter() - start, 2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")


def _show(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "–"


def print_table(summary: dict) -> None:
    """The scores per question type, then time, tokens and fallbacks, as run.py prints them."""
    print(f"\n{summary['dataset']}: {summary['records']} records, llm={summary['llm_spec']}, "
          f"embedder={summary['embedder']}, scorer={summary['scorer']}")
    if summary.get("judge_note"):
        print(summary["judge_note"])
    header = f"{'question type':<28}{'n':>5}{'accuracy':>10}{'F1':>8}{'EM':>8}{'ev.in ctx':>11}"
    print(header + "\n" + "-" * len(header))
    for name, m in [*summary["by_type"].items(), ("ALL", summary["overall"])]:
        print(f"{name:<28}{m['n']:>5}{_show(m['accuracy']):>10}{_show(m['f1']):>8}{_show(m['em']):>8}"
              f"{_show(m['evidence_in_context']):>11}")
    if "refined_f1" in summary["overall"]:
        print(f"LoCoMo-Refined's own lexical metrics, overall: F1 {_show(summary['overall']['refined_f1'])}, "
              f"BLEU-1 {_show(summary['overall']['refined_bleu'])}")
    p, llm = summary["profile"], summary["llm"]
    print(f"answer_time p50 {p['answer_time']['p50']} s, p90 {p['answer_time']['p90']} s; "
          f"{profiler.projection_note(p, summary['llm_spec'])}; "
          f"LLM {llm['prompt_tokens_per_dialogue']} prompt / {llm['output_tokens_per_dialogue']} output "
          f"tokens per dialogue; fallbacks: {summary['fallbacks'] or 'none'}")
    if summary.get("gate"):
        print(gate_line(summary["gate"]))
    if stand_in_line(summary):
        print(stand_in_line(summary))
    stop = summary.get("contest_stop")
    if stop:
        print(f"the contest would have stopped the whole run at record {stop['index']} ({stop['id']}): "
              f"{stop['call']} raised at {stop['where']}: {stop['error']} (--keep-going ran past it)")


def gate_line(found: dict) -> str:
    """The decline gate in one line: each language's calibration, and what it declined here."""
    parts = [f"{lang} on, P(yes) < {c['threshold']:.3f} (calibration: {c['unanswerable_declined']:.0%} of "
             f"unanswerable, {c['answerable_declined']:.0%} of answerable declined, AUC {c['auc']})"
             if c["on"] else f"{lang} off ({c['why']})" for lang, c in found["calibration"].items()]
    declined, records = found["declined"], found["records"]
    line = (f"decline gate: {'; '.join(parts)}; declined here {declined['unanswerable']}/{records['unanswerable']} "
            f"without an answer, {declined['answerable']}/{records['answerable']} with one")
    for lang, checks in found.get("checks", {}).items():
        by = found.get("checks_declined", {})
        said = [f"{name} ({by[name]['unanswerable']}/{records['unanswerable']} without an answer, "
                f"{by[name]['answerable']}/{records['answerable']} with one)" if name in by else name
                for name in checks["on"]]
        how = checks["why"].get("checks", "by the calibration")
        line += f"; answer checks ({lang}): {', '.join(said) if said else 'none on'} ({how})"
    speaker = {lang: c for lang, c in found.get("speaker_calibration", {}).items() if c["on"]}
    if speaker:  # where a calibration set's recorded margins turned it on (chats between two people)
        by = found["speaker_declined"]
        margins = ", ".join(f"{lang} margin < {c['threshold']:.3f}" for lang, c in speaker.items())
        line += (f"; speaker decline: {margins}, declined here {by['unanswerable']}/{records['unanswerable']} "
                 f"without an answer, {by['answerable']}/{records['answerable']} with one")
    return line

