"""bench/readers.py end to end on two prompts with the scripted LLM: answers (with and without
the abstention check), the items a judge must read, and the table from its verdicts."""
import json

from bench import readers


def prompt(id_, question, qtype):
    return {"id": id_, "question": question, "gold": "Вы работаете сварщиком", "question_type": qtype,
            "messages": [{"role": "system", "content": "Отвечай кратко."},
                         {"role": "user", "content": "Факты:\n- работа: сварщик\n\nВопрос: " + question + "\nОтветь."}]}


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_answer_judge_table(tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("\n".join(json.dumps(prompt(*p), ensure_ascii=False) for p in
                                 [("1", "Кем я работаю?", "info_updating"), ("2", "Как зовут кота?", "no_info")]),
                       encoding="utf-8")
    checked, plain = tmp_path / "checked.jsonl", tmp_path / "plain.jsonl"
    assert readers.main(["answer", "--prompts", str(prompts), "--llm", "scripted", "--out", str(checked)]) == 0
    assert readers.main(["answer", "--prompts", str(prompts), "--llm", "scripted", "--out", str(plain),
                         "--no-checks"]) == 0
    assert [set(r) >= {"found_before", "found_after"} for r in lines(checked)] == [True, True]
    assert not any("found_before" in r for r in lines(plain))
    assert readers.main(["answer", "--prompts", str(prompts), "--llm", "scripted", "--out", str(plain),
                         "--no-checks"]) == 0
    assert len(lines(plain)) == 2  # a rerun reads only what is missing

    pending = tmp_path / "pending.jsonl"
    assert readers.main(["judge", str(checked), str(plain), "--pending", str(pending)]) == 0
    items = lines(pending)
    assert items and len({(i["question"], i["answer"]) for i in items}) == len(items)  # each item once
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": i["question"], "answer": i["answer"],
                                              "correct": i["question"] == "Как зовут кота?"}, ensure_ascii=False)
                                  for i in items), encoding="utf-8")
    assert readers.main(["judge", str(checked), str(plain), "--verdicts", str(verdicts),
                         "--pending", str(pending)]) == 0
    assert lines(pending) == []  # every answer has its verdict now

    out = tmp_path / "table.md"
    assert readers.main(["table", str(checked), str(plain), "--verdicts", str(verdicts), "--out", str(out)]) == 0
    rows = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    assert all(kind in rows[0] for kind in ("info_updating", "no_info", "ALL"))  # a column per question type
    assert [r.split(" | ")[1] for r in rows[1:]] == ["off", "before", "after", "off"]  # plain asked no check
    assert all(r.endswith("| 0/1 | 1/1 | 1/2 |") for r in rows[1:] if r.split(" | ")[1] == "off")
    assert "no verdict" not in out.read_text(encoding="utf-8")
