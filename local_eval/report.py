"""A Markdown report per run, with PNG plots (accuracy per type, time per stage).

    report.write(summary, rows, out_dir)  ->  out_dir/report.md, accuracy.png, stages.png
Readable without a notebook; called by run.py.
"""
from __future__ import annotations

from pathlib import Path


def _table(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _plots(summary: dict, out: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []
    by_type = summary["accuracy_by_type"]
    if by_type:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        names = list(by_type)
        rows = range(len(names))
        ax.barh([r + 0.2 for r in rows], [by_type[t]["accuracy"] or 0 for t in names], height=0.4,
                color="#4878a8", label=f"accuracy ({summary['scorer']})")
        ax.barh([r - 0.2 for r in rows], [by_type[t]["evidence_in_context"] or 0 for t in names], height=0.4,
                color="#a8c4e0", label="evidence in context")
        ax.set_yticks(list(rows), names)
        ax.set_xlim(0, 1)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "accuracy.png", dpi=100)
        plt.close(fig)
        made.append("accuracy.png")
    stages = summary["profile"]["stages"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    names = list(stages)
    ax.bar(names, [stages[s]["p50"] for s in names], label="p50", color="#4878a8")
    ax.bar(names, [stages[s]["p90"] - stages[s]["p50"] for s in names],
           bottom=[stages[s]["p50"] for s in names], label="p90", color="#a8c4e0")
    ax.set_ylabel("seconds per dialogue")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "stages.png", dpi=100)
    plt.close(fig)
    return made + ["stages.png"]


def render(summary: dict) -> str:
    acc = summary["accuracy_by_type"]
    show = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
    rows = [[t, m["n"], show(m["accuracy"]), show(m["f1"]), show(m["evidence_in_context"])]
            for t, m in acc.items()]
    overall = summary["accuracy"]
    rows.append(["**all**", overall["n"], f"**{show(overall['accuracy'])}**", show(overall["f1"]),
                 show(overall["evidence_in_context"])])
    prof = summary["profile"]
    stage_rows = [[s, v["p50"], v["p90"], v["max"]] for s, v in prof["stages"].items()]
    proj = prof["projection"]
    llm = summary.get("llm", {})
    return "\n\n".join([
        f"# {summary['dataset']}: {summary['records']} records",
        f"llm `{summary['llm_spec']}`, embedder `{summary['embedder']}`, scorer **{summary['scorer']}**"
        + (" (lexical: token F1 ≥ 0.5 or correct abstention; not an LLM judge)" if summary["scorer"] == "lexical" else ""),
        _table(["question type", "n", "accuracy", "token F1", "evidence in context"], rows),
        "![accuracy per type](accuracy.png)",
        "## Time per stage (seconds per dialogue)",
        _table(["stage", "p50", "p90", "max"], stage_rows),
        f"answer_time p50 {prof['answer_time']['p50']} s, p90 {prof['answer_time']['p90']} s; "
        f"projected for {proj['dialogues']} dialogues: {proj['hours']} h of {proj['limit_hours']:.0f} h "
        f"({'fits' if proj['fits'] else 'DOES NOT FIT'})",
        "![time per stage](stages.png)",
        "## LLM tokens",
        _table(["calls", "prompt tokens", "output tokens", "calls/dialogue", "prompt/dialogue", "output/dialogue"],
               [[llm.get(k, 0) for k in ("calls", "prompt_tokens", "output_tokens", "calls_per_dialogue",
                                          "prompt_tokens_per_dialogue", "output_tokens_per_dialogue")]]),
        f"fallbacks: {summary['fallbacks'] or 'none'}",
    ]) + "\n"


def write(summary: dict, out: Path) -> Path:
    _plots(summary, out)
    path = out / "report.md"
    path.write_text(render(summary), encoding="utf-8")
    return path
