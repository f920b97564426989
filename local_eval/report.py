"""Markdown reports of a run, readable without a notebook; called by run.py.

    report.write(summary, out)                       answer mode: report.md, accuracy.png, stages.png
    report.write_retrieval(summary, measured, out)   retrieval mode: report.md, missed.jsonl

The plots name what they show (dataset, n, LLM, scorer) in their title, wrapped to fit, print every value
at its bar's end (a zero or missing value too) and keep the legend below the axes, where
it covers no bar. The fields of summary.json are described in docs/summary.md.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from . import profiler
from .retrieval_eval import METRICS

SHORT = {m: m.replace("session_recall_all@", "sess@").replace("evidence_recall@", "ev@").replace("000c", "k")
         for m in METRICS}
LIGHT, DARK = "#a8c4e0", "#4878a8"


def _table(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _show(value) -> str:
    return "–" if value is None else f"{value:.3f}"


def _title(summary: dict) -> str:
    return (f"{summary['dataset']} · n={summary['records']} · llm {summary['llm_spec']} · "
            f"scorer {summary['scorer']}" + (" (small-model judge)" if summary.get("judge_note") else ""))


def _bars(ax, names: list, series: list, fmt) -> None:
    """Horizontal grouped bars, one group per name; each value printed at its bar's end.

    `series` is [(label, values, color)]; a None value draws no bar and prints "n/a"."""
    height = 0.8 / len(series)
    top = max([v for _, values, _ in series for v in values if v is not None] + [0.0]) or 1.0
    for k, (label, values, color) in enumerate(series):
        ys = [i - 0.4 + height * (k + 0.5) for i in range(len(names))]
        ax.barh(ys, [v or 0.0 for v in values], height=height * 0.9, color=color, label=label)
        for y, v in zip(ys, values):
            if v == 0:  # a zero bar has no width: a marker on the axis and its printed value show it
                ax.plot([0], [y], marker=">", color=color, markersize=6, markeredgecolor=DARK, clip_on=False)
            ax.text((v or 0.0) + top * 0.02, y, "n/a" if v is None else fmt(v), va="center", fontsize=7)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.18)


def _finish(fig, ax, title: str, path: Path, columns: int) -> None:
    _fit_title(fig, ax, title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=columns, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _fit_title(fig, ax, title: str) -> None:
    """The title on as many lines as it needs to fit the figure's width (long specs and paths
    would otherwise be cut on both sides)."""
    renderer = fig.canvas.get_renderer()
    for width in range(len(title), 19, -4):
        ax.set_title(textwrap.fill(title, width), fontsize=9)
        if ax.title.get_window_extent(renderer).width <= 0.96 * fig.bbox.width:
            return


def _plots(summary: dict, out: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []
    by_type = {**summary["by_type"], "all": summary["overall"]}
    if summary["by_type"]:
        names = list(by_type)
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.55 * len(names)))
        _bars(ax, names, [(f"accuracy ({summary['scorer']})", [by_type[t]["accuracy"] for t in names], DARK),
                          ("evidence in context", [by_type[t]["evidence_in_context"] for t in names], LIGHT)],
              lambda v: f"{v:.2f}")
        ax.set_xlabel("share of questions")
        _finish(fig, ax, f"Accuracy per question type — {_title(summary)}", out / "accuracy.png", 2)
        plt.close(fig)
        made.append("accuracy.png")
    stages = summary["profile"]["stages"]
    names = list(stages)
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.5 * len(names)))
    _bars(ax, names, [("p50", [stages[s]["p50"] for s in names], DARK),
                      ("p90", [stages[s]["p90"] for s in names], LIGHT)], lambda v: f"{v:.3g} s")
    ax.set_xlabel("seconds per record" + (" (extract: records that ran it, not llama memo hits)"
                                           if summary["profile"].get("extract_memo_hits") else ""))
    _finish(fig, ax, f"Time per stage — {_title(summary)}", out / "stages.png", 2)
    plt.close(fig)
    return made + ["stages.png"]


def _accuracy_table(summary: dict) -> str:
    refined = "refined_f1" in summary["overall"]
    header = ["question type", "n", "accuracy", "token F1"] + (
        ["LoCoMo-Refined F1", "LoCoMo-Refined BLEU-1"] if refined else []) + ["evidence in context"]

    def row(name, m, bold=False):
        acc = f"**{_show(m['accuracy'])}**" if bold else _show(m["accuracy"])
        extra = [_show(m.get("refined_f1")), _show(m.get("refined_bleu"))] if refined else []
        return [name, m["n"], acc, _show(m["f1"]), *extra, _show(m["evidence_in_context"])]
    rows = [row(t, m) for t, m in summary["by_type"].items()] + [row("**all**", summary["overall"], True)]
    return _table(header, rows)


def render(summary: dict) -> str:
    prof = summary["profile"]
    stage_rows = [[s, v["p50"], v["p90"], v["max"]] for s, v in prof["stages"].items()]
    llm = summary.get("llm", {})
    return "\n\n".join([
        f"# {summary['dataset']}: {summary['records']} records",
        f"llm `{summary['llm_spec']}`, embedder `{summary['embedder']}`, scorer **{summary['scorer']}**"
        + (" (lexical: token F1 ≥ 0.5 or correct abstention; not an LLM judge)"
           if summary["scorer"] == "lexical" else "")
        + (f" ({summary['judge_note']})" if summary.get("judge_note") else ""),
        _accuracy_table(summary),
        f"Evidence in context: the share of the {summary['overall'].get('evidence_n', 0)} questions with evidence "
        "turns whose packed context held every one of them; questions without evidence (abstention) are left out.",
        "![accuracy per type](accuracy.png)",
        "## Time per stage (seconds per record)",
        _table(["stage", "p50", "p90", "max"], stage_rows) + "".join(
            "\n\n" + note for note in [profiler.extract_note(prof)] if note),
        f"answer_time p50 {prof['answer_time']['p50']} s, p90 {prof['answer_time']['p90']} s; "
        + profiler.projection_note(prof, summary["llm_spec"]),
        "![time per stage](stages.png)",
        "## LLM tokens",
        _table(["calls", "prompt tokens", "output tokens", "calls/dialogue", "prompt/dialogue", "output/dialogue"],
               [[llm.get(k, 0) for k in ("calls", "prompt_tokens", "output_tokens", "calls_per_dialogue",
                                          "prompt_tokens_per_dialogue", "output_tokens_per_dialogue")]]),
        f"fallbacks: {summary['fallbacks'] or 'none'}",
    ]) + "\n"


def write(summary: dict, out: Path) -> list[str]:
    """report.md and its plots in OUT; the names of the files written."""
    plots = _plots(summary, out)
    (out / "report.md").write_text(render(summary), encoding="utf-8")
    return ["report.md", *plots]


def missed_row(m) -> dict:
    """One line of missed.jsonl: a question whose evidence is not all in the packed context."""
    return {"id": m.id, "question_type": m.question_type, "question": m.question,
            "evidence": [{"name": e.name, "session_id": e.session_id, "rank": e.rank,
                          "session_rank": e.session_rank, "in_context": e.in_context} for e in m.evidence]}


def render_retrieval(summary: dict, measured: list) -> str:
    """The six metrics per type, then every missed question with the rank of each evidence turn."""
    budget = summary["context_chars"]
    rows = [[t, m["n"], *(_show(m[k]) for k in METRICS)] for t, m in summary["by_type"].items()]
    overall = summary["overall"]
    if overall.get("n"):
        rows.append(["**all**", overall["n"], *(f"**{_show(overall[k])}**" for k in METRICS)])
    missed = [m for m in measured if m.missed]
    lines = [f"- `{m.id}` ({m.question_type}) {m.question} — " + "; ".join(
        f"{e.describe()}, {'in context' if e.in_context else 'missing'}" for e in m.evidence) for m in missed]
    return "\n\n".join([
        f"# {summary['dataset']}: retrieval ({summary['retrieval_method']}, embedder `{summary['embedder']}`), "
        f"{overall.get('n', 0)} questions with evidence",
        "sess@k: every evidence session among the k best-ranked sessions; ev@N: every evidence turn inside "
        "the context packed at N characters (shares of questions; abstention questions have no evidence "
        "and are left out). No LLM: the ranking and packing of the submission, on the raw turns.",
        _table(["question type", "n", *(SHORT[k] for k in METRICS)], rows),
        f"## Missed at {budget} characters: {len(missed)} of {len(measured)}",
        "Every question whose evidence is not all inside the context packed at the budget (`--context-chars`), "
        "each evidence turn with its rank among all ranked turns and its session's rank among sessions "
        "(1 = best); the same in `missed.jsonl`.",
        "\n".join(lines) or "none",
    ]) + "\n"


def write_retrieval(summary: dict, measured: list, out: Path) -> list[str]:
    """report.md and missed.jsonl of a retrieval run, beside its summary.json."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render_retrieval(summary, measured), encoding="utf-8")
    (out / "missed.jsonl").write_text("".join(json.dumps(missed_row(m), ensure_ascii=False) + "\n"
                                              for m in measured if m.missed), encoding="utf-8")
    return ["report.md", "missed.jsonl"]
