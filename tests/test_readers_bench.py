"""bench/readers.py end to end on two prompts with the scripted LLM: answers (with and without
the abstention check), the items a judge must read, and the table from its verdicts; the same
judge and table over the local model's rows (`read`: ways and the gate's P(yes)); the gate fitted."""
import json
from pathlib import Path

import pytest

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
    assert [r.split(" | ")[2] for r in rows[1:]] == ["plain", "plain + check before", "plain + check after",
                                                     "plain"]  # the plain file asked no check
    assert all(r.endswith("| 0/1 | 1/1 | 1/2 |") for r in rows[1:] if r.split(" | ")[2] == "plain")
    assert "no verdict" not in out.read_text(encoding="utf-8")


def reading_row(id_, question, qtype, way, **found):
    return {"id": id_, "set": "ru_dev", "way": way, "question": question, "gold": "Вы работаете сварщиком",
            "question_type": qtype, "answerable": qtype != "no_info", "model": "qwen2.5-coder-1.5b", **found}


def test_the_gate_declines_below_its_threshold_in_the_judge_and_the_table(tmp_path, capsys):
    rows = [reading_row("1", "Кем я работаю?", "info_updating", "plain", answer="Сварщиком"),
            reading_row("1", "Кем я работаю?", "info_updating", "gate", p_yes=0.9),
            reading_row("2", "Как зовут кота?", "no_info", "plain", answer="Барсик"),
            reading_row("2", "Как зовут кота?", "no_info", "gate", p_yes=0.3)]
    read = tmp_path / "q15.jsonl"
    read.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    no_info = readers.answer_step.NO_INFO["ru"]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": ok}, ensure_ascii=False) for q, a, ok in
                                  [("Кем я работаю?", "Сварщиком", True), ("Как зовут кота?", "Барсик", False),
                                   ("Как зовут кота?", no_info, True)]), encoding="utf-8")
    pending = tmp_path / "pending.jsonl"
    assert readers.main(["judge", str(read), "--verdicts", str(verdicts), "--pending", str(pending),
                         "--gate", "p_yes<0.61"]) == 0
    assert lines(pending) == []  # the gate's decline is the one answer the gate adds: judged already
    capsys.readouterr()
    assert readers.main(["table", str(read), "--verdicts", str(verdicts), "--gate", "p_yes<0.61"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| q15 ")]
    assert table == ["| q15 | ru_dev | plain | 1/1 | 0/1 | 1/2 |",
                     "| q15 | ru_dev | plain + gate p_yes<0.61 | 1/1 | 1/1 | 2/2 |"]


def test_the_gate_fit_reports_the_best_threshold_at_the_false_rate(tmp_path, capsys):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("\n".join(json.dumps({"id": str(i), "set": "ru_dev", "answerable": ok,
                                             "signals": {"fact_dense": score}}) for i, (ok, score) in
                                  enumerate([(True, 0.9), (True, 0.8), (False, 0.5), (False, 0.85)])), encoding="utf-8")
    assert readers.main(["gate", "--prompts", str(prompts)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "fact_dense" in line)
    assert row == "| ru_dev | 4 (2) | fact_dense | 0.50 | 0.00 | 0.8 |"  # below 0.8: one of two declined, none answerable


def test_items_ranks_the_gold_facts_of_a_list_run(tmp_path, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"_about": "stems", "q1": ["футбол", "пинг"]}, ensure_ascii=False), encoding="utf-8")
    judged = [{"fact": "Пользователь играет в футбол.", "p_yes": 0.9, "kept": True},
              {"fact": "Фамилия пользователя — Смирнов.", "p_yes": 0.8, "kept": True},
              {"fact": "Пользователь играет в пинг-понг.", "p_yes": 0.7, "kept": True},
              {"fact": "Жена пользователя — врач.", "p_yes": 0.2, "kept": False}]
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in
                                 [{"id": "q1", "stats": {"items": judged}}, {"id": "q2", "stats": {}}]), encoding="utf-8")
    assert readers.main(["items", str(results), "--gold", str(gold)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "| q1 | 4 | 3 | 2 | 1, 3 | 0.75 |" in out  # gold ranks 1 and 3; 3 of 4 pairs ordered right
    assert out[-1] == "mean AUC 0.75 over 1 list questions"


def test_empty_counts_the_answers_the_contest_would_decline_by_kind(tmp_path, capsys):
    rows = [{"question": "Как зовут мопса моей бабушки?", "answer": "Мопс моей бабушки — мопс.", "question_type": "no_info"},
            {"question": "Какая у меня фамилия?", "answer": "Ваша фамилия — Росляков.", "question_type": "fact_equal_session"},
            {"question": "Где я живу?", "answer": "У меня нет такой информации.", "question_type": "no_info"},
            {"question": "Где я живу?", "answer": None, "way": "gate", "p_yes": 0.3}]
    answers = tmp_path / "a.jsonl"
    answers.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    assert readers.main(["empty", str(answers)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 files, 2 answers: answerable 0 of 1 declined, no answer 1 of 1 declined"
    assert out[1:] == ["  no answer: Как зовут мопса моей бабушки? | Мопс моей бабушки — мопс."]


def test_unrelated_counts_someone_elses_values_against_the_prompts_material(tmp_path, capsys):
    material = ("Факты о пользователе по темам:\nдрузья:\n- [сессия 2] Друга пользователя зовут Сергей.\n"
                "жена:\n- [сессия 1] Жену пользователя зовут Людмила.\n\nВыдержки из диалогов:\n—\n\n")
    prompts = [{"id": q, "question": q, "answerable": answerable, "messages": [
        {"role": "user", "content": material + f"Вопрос пользователя: {q}\nОтвет одним предложением:"}]}
        for q, answerable in (("Как зовут мою жену?", True), ("Как зовут моего сына?", False))]
    rows = [{"id": "Как зовут моего сына?", "question": "Как зовут моего сына?", "answer": "Сергей"},
            {"id": "Как зовут мою жену?", "question": "Как зовут мою жену?", "answer": "Сергей", "correct": False},
            {"id": "Как зовут мою жену?", "question": "Как зовут мою жену?", "answer": "Людмила"}]  # resumed
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in prompts), encoding="utf-8")
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(json.dumps({"question": "Как зовут мою жену?", "answer": "Людмила", "correct": True},
                                   ensure_ascii=False), encoding="utf-8")
    assert readers.main(["unrelated", str(tmp_path / "a.jsonl"), "--prompts", str(tmp_path / "p.jsonl"),
                         "--verdicts", str(verdicts)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["  no answer: Как зовут моего сына? | Сергей",
                   f"{tmp_path / 'a.jsonl'}: answerable 0 of 1 declined (0 judged right), no answer 1 of 1",
                   "ALL 1 files: answerable 0 of 1 declined (0 judged right), no answer 1 of 1"]


def test_coverage_sweeps_the_gate_after_the_call_free_declines(tmp_path, capsys):
    rows = [reading_row("1", "Кем я работаю?", "info_updating", "plain", answer="Сварщиком."),
            reading_row("1", "Кем я работаю?", "info_updating", "gate", answer=None, p_yes=0.9),
            reading_row("2", "Где я живу?", "fact_equal_session", "plain", answer="В Омске."),
            reading_row("2", "Где я живу?", "fact_equal_session", "gate", answer=None, p_yes=0.6),
            reading_row("3", "Как зовут мопса моей бабушки?", "no_info", "plain", answer="Мопс моей бабушки — мопс."),
            reading_row("3", "Как зовут мопса моей бабушки?", "no_info", "gate", answer=None, p_yes=0.3),
            reading_row("4", "Как зовут кота?", "no_info", "plain", answer="Барсик."),
            reading_row("4", "Как зовут кота?", "no_info", "gate", answer=None, p_yes=0.5)]
    answers, verdicts = tmp_path / "a.jsonl", tmp_path / "v.jsonl"
    answers.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": c}, ensure_ascii=False) for q, a, c in
                                  (("Кем я работаю?", "Сварщиком.", True), ("Где я живу?", "В Омске.", False),
                                   ("Как зовут кота?", "Барсик.", False))), encoding="utf-8")
    out = tmp_path / "cov"
    assert readers.main(["coverage", str(answers), "--verdicts", str(verdicts), "--out", str(out)]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "P(yes)" not in line]
    # the mops answer names nothing new: declined before any threshold; then the cat, the city, the job
    assert table == ["| 0.000 | 0.75 | 0.33 | 2/4 |", "| 0.300 | 0.75 | 0.33 | 2/4 |", "| 0.500 | 0.75 | 0.33 | 2/4 |",
                     "| 0.600 | 0.50 | 0.50 | 3/4 |", "| 0.900 | 0.25 | 1.00 | 3/4 |", "| 1.010 | 0.00 | – | 2/4 |"]
    assert out.with_suffix(".png").stat().st_size > 0 and out.with_suffix(".md").is_file()


def test_the_list_way_joins_the_items_the_contest_keeps_to_every_answer_of_its_question(tmp_path, capsys):
    question = "В каких городах я был?"
    prompts = [{"id": "1", "question": question, "gold": "Тверь и Кострома", "question_type": "info_consolidation",
                "messages": [{"role": "user", "content": "Факты:\n- Пользователь был в Твери.\n- Пользователь был в "
                              "Костроме.\n- Пользователь был в Ярославле.\n\nВыдержки из диалогов:\nПользователь: Москва!\n\nВопрос пользователя: "
                              f"{question}\nОтвет одним предложением:"}]}]
    raw = json.dumps({"items": ["Тверь", "Кострома", "Москва", "Сочи"]}, ensure_ascii=False)
    rows = [reading_row("1", question, "info_consolidation", "plain", answer="Вы были в Твери."),
            reading_row("1", question, "info_consolidation", "list_late", items=["old"],
                        raw=json.dumps({"items": ["Ярославль", "Кострома"]}, ensure_ascii=False)),
            reading_row("1", question, "info_consolidation", "list", items=["stale"], raw=raw)]
    (tmp_path / "p.jsonl").write_text(json.dumps(prompts[0], ensure_ascii=False), encoding="utf-8")
    read = tmp_path / "q15.jsonl"
    read.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    found = {way: text for _, way, _, text in readers.answered([str(read)], "", True, [str(tmp_path / "p.jsonl")])}
    # Москва stands only in the excerpts the list prompt cuts, Сочи nowhere: neither is kept; the
    # latest-first ask adds Ярославль after the first ask's items
    assert found["plain + list"] == found["plain + empty + unrelated + list"] == \
        "Вы были в Твери (также: Кострома, Ярославль)."
    assert found["plain"] == "Вы были в Твери."
    without = {way: text for _, way, _, text in readers.answered([str(read)], "")}
    assert without["plain + list"] == "Вы были в Твери (также: stale, old)."  # no prompts: the items as recorded
    # a question whose form the contest no longer asks a list of replays without the recorded items
    current = "В каком городе я сейчас живу?"
    read.write_text("\n".join(json.dumps({**r, "question": current}, ensure_ascii=False) for r in rows), encoding="utf-8")
    now = {way: text for _, way, _, text in readers.answered([str(read)], "")}
    assert "plain + list" not in now and now["plain"] == "Вы были в Твери."


def test_an_answer_reads_the_prompt_of_its_own_set_where_two_sets_ask_the_same_question(tmp_path):
    question = "В каких странах я побывала?"
    prompts = [{"id": i, "set": name, "question": question, "messages": [{"role": "user", "content": text}]}
               for i, name, text in (("4-dev-03", "ru_dev", "Факты:\n- Была в Финляндии."),
                                     ("4-list-01", "probe_lists", "Факты:\n- Была в Италии."))]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in prompts), encoding="utf-8")
    material = readers.load_material([str(path)])
    def read(row):
        return readers.prompt_of(material, row)["id"]
    assert read({"id": "4-list-01", "set": "probe_lists", "question": question}) == "4-list-01"
    assert read({"id": "4-dev-03", "set": "ru_dev", "question": question}) == "4-dev-03"
    assert read({"question": question}) == "4-dev-03"  # no set: the first file's


def test_a_second_verdicts_file_replaces_the_first_ones_verdicts_of_the_same_answers(tmp_path):
    first, second = tmp_path / "v.jsonl", tmp_path / "strict.jsonl"
    first.write_text('{"question": "q", "answer": "a (также: b)", "correct": true}\n'
                     '{"question": "q", "answer": "a", "correct": false}\n', encoding="utf-8")
    second.write_text('{"question": "q", "answer": "a (также: b)", "correct": false}\n', encoding="utf-8")
    assert readers.verdicts(f"{first},{second}") == {("q", "a (также: b)"): False, ("q", "a"): False}
    assert readers.verdicts(str(first))[("q", "a (также: b)")] is True and readers.verdicts("") == {}


def test_a_prompt_signal_declines_through_the_gate_spec_calibrated_on_the_sets_recorded_margins(tmp_path, capsys):
    cal = tmp_path / "en.c8000.jsonl"
    cal.write_text("\n".join(json.dumps({"id": f"c{i}", "question": "What did Caroline do?", "answerable": a,
                                         "speaker_margin": m}) for i, (a, m) in
                             enumerate([(True, 0.1 * i) for i in range(20)] + [(False, -0.3)] * 8)), encoding="utf-8")
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("\n".join(json.dumps({"id": i, "set": "locomo", "question": q, "speaker_margin": m,
                                            "messages": [{"role": "user", "content": f"Question: {q}"}],
                                            "answerable": True})
                                 for i, q, m in (("1", "What did Caroline paint?", -0.2),
                                                 ("2", "What did Melanie paint?", 0.4),
                                                 ("3", "What was painted?", None))), encoding="utf-8")
    answers = tmp_path / "a.jsonl"
    answers.write_text("\n".join(json.dumps({"id": i, "set": "locomo", "way": "plain", "question": q, "gold": "g",
                                             "question_type": "single-hop", "answerable": True, "answer": "A sunset."})
                                 for i, q in (("1", "What did Caroline paint?"), ("2", "What did Melanie paint?"),
                                              ("3", "What was painted?"))), encoding="utf-8")
    gate, note = readers.calibrated(f"speaker_margin<@{cal}")
    assert gate == "speaker_margin<0.1" and "28 prompts" in note
    found = {(row["id"], way): text for row, way, _, text in readers.answered([str(answers)], gate, False, [str(prompts)])}
    assert found["1", "plain + gate speaker_margin<0.1"] == "I don't have that information."
    assert found["2", "plain + gate speaker_margin<0.1"] == found["3", "plain + gate speaker_margin<0.1"] == "A sunset."
    # `declines` counts the prompt signal's declines as the table reads them (a gate row beside it or not)
    with answers.open("a", encoding="utf-8") as out:
        out.write("\n" + json.dumps({"id": "2", "set": "locomo", "way": "gate", "question": "What did Melanie paint?",
                                     "answerable": True, "p_yes": 0.05}))  # below the margin's threshold: not read
    assert readers.main(["declines", str(answers), "--prompts", str(prompts), "--gate", f"speaker_margin<@{cal}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "| a | + gate speaker_margin<0.1 | 0/0 | 1/3 | 0 |" in lines


def test_declines_counts_each_stage_and_the_cross_validated_gate_fits_without_the_questions_dialogue(tmp_path, capsys):
    asked = [("cal-1-01", "Кем я работаю?", "Сварщиком.", 0.8), ("cal-1-02", "Где я живу?", "В Омске.", 0.7),
             ("cal-1-03", "Как зовут мопса моей бабушки?", "Мопс моей бабушки — мопс.", 0.65),  # names nothing
             ("cal-1-04", "Как зовут кота?", "Барсик.", 0.3),
             ("cal-2-01", "Как зовут жену?", "Людмила.", 0.6), ("cal-2-02", "Какая у меня машина?", "Шкода.", 0.9),
             ("cal-2-03", "Как зовут сына?", "У меня нет такой информации.", 0.2),  # the reader's own
             ("cal-2-04", "Где живёт брат?", "В Твери.", 0.5)]
    answerable = {"cal-1-01", "cal-1-02", "cal-2-01", "cal-2-02"}
    facts = "Факты:\n- работа: сварщик\n- город: Омск\n- жена: Людмила\n- машина: Шкода\n- кот: Барсик\n\n"
    prompts = [{"id": i, "question": q, "answerable": i in answerable, "question_type": "fact_equal_session",
                "messages": [{"role": "user", "content": f"{facts}Вопрос: {q}\nОтветь."}]} for i, q, _, _ in asked]
    rows = [reading_row(i, q, "fact_equal_session" if i in answerable else "no_info", way, **found)
            for i, q, a, p in asked for way, found in (("plain", {"answer": a}), ("gate", {"p_yes": p}))]
    for name, found in (("p.jsonl", prompts), ("a.jsonl", rows)):
        (tmp_path / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in found), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(json.dumps({"question": "Как зовут жену?", "answer": "Людмила.", "correct": True},
                                   ensure_ascii=False), encoding="utf-8")
    assert readers.main(["declines", str(tmp_path / "a.jsonl"), "--prompts", str(tmp_path / "p.jsonl"),
                         "--gate", "cv", "--verdicts", str(verdicts)]) == 0
    out = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    # Тверь stands in no line: the brother's answer is ungrounded. Dialogue 1 is read with the threshold
    # dialogue 2 gives (its lowest answerable, 0.6) and back (0.7): the cat (0.3) declined, and the
    # wife (0.6 < 0.7), a right answer, lost
    assert out[2:] == ["| a | the reader's own | 1/4 | 0/4 | 0 |", "| a | + empty | 2/4 | 0/4 | 0 |",
                       "| a | + unrelated | 2/4 | 0/4 | 0 |", "| a | + ungrounded | 3/4 | 0/4 | 0 |",
                       "| a | + gate p_yes, each dialogue held out | 4/4 | 1/4 | 1 |",
                       "a: thresholds by held-out dialogue: 1: 0.6, 2: 0.7"]


def test_a_second_look_that_holds_up_takes_back_its_rules_or_the_readers_decline_in_declines_and_the_table(tmp_path, capsys):
    material = ("Факты о пользователе по темам:\nдрузья:\n- [сессия 2] Друга пользователя зовут Сергей.\n"
                "жена:\n- [сессия 1] Жену пользователя зовут Людмила.\n\nВыдержки из диалогов:\n—\n\n")
    asked = [("1", "Как зовут мою жену?", "fact_equal_session", "Сергей", "Вашу жену зовут Людмила."),
             ("2", "Как зовут моего сына?", "no_info", "Сергей", None),  # no line about a son: no second call
             ("3", "Как зовут мою жену?", "fact_equal_session", "У меня нет такой информации.", "Людмила.")]  # the reader's own
    prompts = [{"id": i, "set": "ru_dev", "question": q, "answerable": kind != "no_info", "question_type": kind,
                "messages": [{"role": "user", "content": material + f"Вопрос пользователя: {q}\nОтвет одним предложением:"}]}
               for i, q, kind, _, _ in asked]
    rows = [reading_row(i, q, kind, way, **found) for i, q, kind, first, again in asked
            for way, found in (("plain", {"answer": first}), ("second", {"answer": again}))]
    for name, found in (("p.jsonl", prompts), ("a.jsonl", rows)):
        (tmp_path / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in found), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": ok}, ensure_ascii=False) for q, a, ok in (
        ("Как зовут мою жену?", "Вашу жену зовут Людмила.", True), ("Как зовут мою жену?", "Сергей", False),
        ("Как зовут моего сына?", "Сергей", False), ("Как зовут моего сына?", readers.no_info(rows[0]), True),
        ("Как зовут мою жену?", readers.no_info(rows[0]), False), ("Как зовут мою жену?", "Людмила.", True))),
        encoding="utf-8")
    assert readers.main(["declines", str(tmp_path / "a.jsonl"), "--prompts", str(tmp_path / "p.jsonl")]) == 0
    out = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert out[-5:] == ["| a | the reader's own | 0/1 | 1/2 | 0 |", "| a | + empty | 0/1 | 1/2 | 0 |",
                        "| a | + unrelated | 1/1 | 2/2 | 0 |", "| a | + ungrounded | 1/1 | 2/2 | 0 |",
                        "| a | + second look | 1/1 | 0/2 | 0 |"]
    assert readers.main(["table", str(tmp_path / "a.jsonl"), "--verdicts", str(verdicts), "--empty",
                         "--prompts", str(tmp_path / "p.jsonl")]) == 0
    table = capsys.readouterr().out
    assert "| a | ru_dev | plain + empty + unrelated + ungrounded | 0/2 | 1/1 | 1/3 |" in table
    assert "| a | ru_dev | plain + empty + unrelated + ungrounded + second look | 2/2 | 1/1 | 3/3 |" in table


def test_the_gate_asked_in_other_words_is_scored_with_each_asks_sense(tmp_path, capsys):
    """`bench/gate_asks.py auc`: an ask whose «да» means "something is lacking" counts 1 - P(yes);
    a recorded file reads without a model (`read` has nothing left to ask)."""
    from bench import gate_asks
    gate_rows, asks = tmp_path / "gate.jsonl", tmp_path / "asks.jsonl"
    answerable = {"a1": True, "a2": True, "n1": False, "n2": False}
    gate_rows.write_text("\n".join(json.dumps({"id": i, "way": "gate", "question": "?", "p_yes": p}) for i, p in
                                   (("a1", 0.9), ("a2", 0.4), ("n1", 0.5), ("n2", 0.3))), encoding="utf-8")
    lacking = {"a1": 0.1, "a2": 0.2, "n1": 0.8, "n2": 0.9}  # «да, не хватает» where there is no answer: it separates
    asks.write_text("\n".join(json.dumps({"id": i, "ask": name, "question": "?", "answerable": answerable[i],
                                          "p_yes": lacking[i] if name == "lacking" else 0.5})
                              for i in answerable for name in gate_asks.ASKS), encoding="utf-8")
    assert gate_asks.main(["auc", str(asks), "--gate-rows", str(gate_rows)]) == 0
    shown = capsys.readouterr().out
    assert "| contest ask | 0.750 |" in shown and "| lacking | 1.000 |" in shown and "| strict | 0.500 |" in shown
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("\n".join(json.dumps({**prompt(i, "Кем я работаю?", "info_updating"), "answerable": a})
                                 for i, a in answerable.items()), encoding="utf-8")
    assert gate_asks.main(["read", "--prompts", str(prompts), "--out", str(asks)]) == 0
    assert "0 call(s) made" in capsys.readouterr().out


def test_the_gate_asked_in_other_words_needs_prompts_that_say_whether_they_are_answerable(tmp_path):
    from bench import gate_asks
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps(prompt("1", "Кем я работаю?", "info_updating")), encoding="utf-8")
    with pytest.raises(SystemExit, match="answerable"):
        gate_asks.main(["read", "--prompts", str(prompts), "--out", str(tmp_path / "asks.jsonl")])


def test_a_second_look_recorded_as_not_asked_is_read_again_where_a_rule_now_declines_its_answer():
    """`read --way second` re-asks a `second` row recorded with no look where the rules as they are
    now decline the plain answer, or the reader declined, and a line is about the question: the
    contest path would ask."""
    material = ("Факты о пользователе по темам:\nдрузья:\n- [сессия 2] Друга пользователя зовут Сергей.\n"
                "жена:\n- [сессия 1] Жену пользователя зовут Людмила.\n\nВыдержки из диалогов:\n—\n\n")
    asked = [("1", "Как зовут мою жену?", "Сергей", None),  # the friend's name: declined now, lines about her
             ("2", "Как зовут моего сына?", "Сергей", None),  # declined, but no line is about a son
             ("3", "Как зовут мою жену?", "Вашу жену зовут Людмила.", None),  # no rule declines it
             ("4", "Как зовут мою жену?", "Сергей", "Людмила"),  # looked at already
             ("5", "Как зовут мою жену?", "У меня нет такой информации.", None)]  # the reader's own decline
    prompts = {i: {"id": i, "question": q, "messages": [
        {"role": "user", "content": material + f"Вопрос пользователя: {q}\nОтвет одним предложением:"}]}
        for i, q, _, _ in asked}
    recorded = [reading_row(i, q, "fact_equal_session", way, answer=found) for i, q, first, again in asked
                for way, found in (("plain", first), ("second", again))]
    assert readers.stale_seconds(recorded, prompts) == {"1", "5"}


def test_a_second_look_over_the_readers_own_decline_is_held_to_the_questions_verbs_in_replay():
    """`second_looked` reads a look at the reader's own "no information" as the contest does
    (`answer.second_answer(..., overrules=True)`): «Кофе.» stands after a rule's decline, not after
    the reader's own, where the line only says the coffee ran out."""
    material = ("Факты о пользователе по темам:\nнапиток:\n- [сессия 1] У пользователя закончился кофе.\n\n"
                "Выдержки из диалогов:\n—\n\n")
    question = "Какой напиток я ненавижу?"
    prompts = {("ru_dev", i): {"id": i, "set": "ru_dev", "question": question, "messages": [
        {"role": "user", "content": material + f"Вопрос пользователя: {question}\nОтвет одним предложением:"}]}
        for i in ("1", "2")}
    rows = [{**reading_row(i, question, "fact_equal_session", way, answer=found), "file": "a"}
            for i, first in (("1", "Сергей"), ("2", readers.answer_step.NO_INFO["ru"]))
            for way, found in (("plain", first), ("second", "Кофе."))]
    assert readers.second_looked(rows, prompts) == {("a", "ru_dev", "1"): "Кофе.", ("a", "ru_dev", "2"): None}


def test_a_cited_answer_replays_through_the_contests_decision_with_every_check_and_as_calibrated(tmp_path, capsys):
    material = ("Факты о пользователе по темам:\nработа:\n- [сессия 2] Пользователь работает сварщиком.\n"
                "жена:\n- [сессия 1] Жену пользователя зовут Людмила.\n\nВыдержки из диалогов:\n—\n\n")
    asked = [("1", "Кем я работаю?", "fact_equal_session", "Вы работаете сварщиком.",
              {"quotes": ["[сессия 2] Пользователь работает сварщиком."]}),
             ("2", "Как зовут моего сына?", "no_info", "Вашего сына зовут Петя.", {"quotes": []}),  # on no line
             ("3", "Как зовут мою жену?", "fact_equal_session", "У меня нет такой информации.", None)]  # no cite call
    prompts = [{"id": i, "set": "ru_dev", "question": q, "answerable": kind != "no_info", "question_type": kind,
                "messages": [{"role": "user", "content": material + f"Вопрос пользователя: {q}\nОтвет одним предложением:"}]}
               for i, q, kind, _, _ in asked]
    rows = [reading_row(i, q, kind, way, **found) for i, q, kind, draft, cite in asked
            for way, found in (("plain", {"answer": draft, "raw": draft}),
                               ("cite", {"answer": draft, "draft": draft,
                                         "raw": json.dumps(cite, ensure_ascii=False) if cite else ""}))]
    for name, found in (("p.jsonl", prompts), ("a.jsonl", rows)):
        (tmp_path / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in found), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": ok}, ensure_ascii=False) for q, a, ok in (
        ("Кем я работаю?", "Вы работаете сварщиком.", True), ("Как зовут моего сына?", "Вашего сына зовут Петя.", False),
        ("Как зовут моего сына?", readers.no_info(rows[0]), True),
        ("Как зовут мою жену?", "У меня нет такой информации.", False))), encoding="utf-8")
    both = [str(tmp_path / "a.jsonl"), "--prompts", str(tmp_path / "p.jsonl")]
    calibration = f"{tmp_path / 'a.jsonl'}@{tmp_path / 'p.jsonl'}"
    assert readers.main(["declines", *both, "--switches", calibration]) == 0
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| a | cite")]
    # the son's made-up name rests on no line: `unquoted` declines it, and earns its switch
    assert out == ["| a | cite: the reader's own | 0/1 | 1/2 | 0 |", "| a | cite: + unquoted | 1/1 | 1/2 | 0 |",
                   "| a | cite: + empty | 1/1 | 1/2 | 0 |", "| a | cite: + elsewhere | 1/1 | 1/2 | 0 |",
                   "| a | cite: + ungrounded | 1/1 | 1/2 | 0 |", "| a | cite: + unquoted_number | 1/1 | 1/2 | 0 |",
                   "| a | cite: calibrated (unquoted) | 1/1 | 1/2 | 0 |"]
    assert readers.main(["table", *both, "--verdicts", str(verdicts), "--switches", calibration]) == 0
    table = capsys.readouterr().out
    # the columns: fact_equal_session, no_info, all
    assert "| a | ru_dev | cite | 1/2 | 0/1 | 1/3 |" in table
    assert "| a | ru_dev | cite + checks | 1/2 | 1/1 | 2/3 |" in table
    assert "| a | ru_dev | cite + calibrated | 1/2 | 1/1 | 2/3 |" in table


def test_keep_writes_the_calibration_a_calibrated_run_keeps_and_a_kept_run_takes_it(tmp_path, capsys):
    """`readers.py keep`: a read of the calibration set becomes the kept file of that llama model, which
    the contest class of a later run takes (`--gate kept`) without asking the set's prompts."""
    from local_eval.backends import seed_calibrations
    from models import Message
    from submit import SubmitModelWithMemory
    from submit.config import Config, replaced
    from submit.memory import gate
    from submit.memory.embed import HashEmbedder
    from submit.memory.llm import CALIBRATE, ScriptedLLM

    path = gate.calibration_file("ru", 8000)
    rows = []
    for item in gate.load_set(path):
        said = "Вы работаете сварщиком."
        rows += [{"id": item["id"], "way": "gate", "question": item["question"], "model": "x.gguf",
                  "p_yes": 0.9 if item["answerable"] else 0.2},
                 {"id": item["id"], "way": "cite", "question": item["question"], "model": "x.gguf", "answer": said,
                  "draft": said, "raw": json.dumps({"quotes": []})}]
    reading = tmp_path / "read.jsonl"
    reading.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[:-1]), encoding="utf-8")
    with pytest.raises(SystemExit, match="1 of the set's 64 prompts have no gate or cite row"):
        readers.main(["keep", f"{reading}@{path}", "--out", str(tmp_path / "shipped")])
    reading.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert readers.main(["keep", f"{reading}@{path}", "--out", str(tmp_path / "shipped")]) == 0
    seed_calibrations(str(tmp_path / "cache"), shipped=tmp_path / "shipped")  # as local_eval starts a run

    class Llama(ScriptedLLM):  # the scripted reader as the llama model the reading was made with
        name, model_file = "llama", "x.gguf"

    llm = Llama(["Вы работаете бухгалтером.", json.dumps({"quotes": ["Я работаю бухгалтером"]}, ensure_ascii=False)],
                scores=[0.9])
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False),
                      {"memory.facts": False, "memory.gate": "kept", "memory.calibration_cache": str(tmp_path / "cache")})
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    m.write_to_memory([Message("user", "Я работаю бухгалтером.", 1), Message("assistant", "Понятно.", 1)], "d")
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете бухгалтером."
    assert CALIBRATE not in llm.purposes and m.calibrations["ru"].on and m.calibrations["ru"].threshold == 0.9
    # every reply quoted nothing: declining the unquoted would cost as many answers as it saves
    assert "unquoted" not in m.switches["ru"].on and "32/32 answerable" in m.switches["ru"].why["unquoted"]
    # a calibration a run kept in the cache itself is never replaced by the shipped one
    kept = next((tmp_path / "cache").glob("ru.*.json"))
    kept.write_text("{}")
    seed_calibrations(str(tmp_path / "cache"), shipped=tmp_path / "shipped")
    assert kept.read_text() == "{}"
    (tmp_path / "file").write_text("")  # a cache folder that cannot be made: said, not raised
    seed_calibrations(str(tmp_path / "file" / "calibrated"), shipped=tmp_path / "shipped")
    assert "could not be copied" in capsys.readouterr().err


def test_every_shipped_calibration_is_named_by_the_key_a_run_of_its_model_looks_for():
    """A shipped kept calibration whose set or asks changed since it was made would never be taken:
    make it again (`bench/readers.py keep`, after reading the set again with the new asks)."""
    from pathlib import Path

    from submit.calibrating import kept_path
    from submit.memory import gate
    from submit.memory.dialogue import Settings

    shipped = sorted((Path(readers.ROOT) / "local_eval" / "calibrated").glob("*.json"))
    assert shipped
    for found in shipped:
        data = json.loads(found.read_text(encoding="utf-8"))
        lang, path = found.name.split(".")[0], gate.CALIBRATION_DIR / data["set"]
        assert kept_path(found.parent, data["model"], Settings(gate="kept"), lang, path) == found, found.name
        assert len(data["replies"]) == len(gate.load_set(path))


def test_the_ablation_replays_the_stage_with_one_part_taken_out(tmp_path, capsys):
    """bench/ablate.py: a son's made-up name rests on no line and `unquoted` earns its switch on the
    same rows; taken out, the check declines nothing and the answer stands, counted wrong (English:
    `ungrounded`, Russian only, would decline it in its place)."""
    from bench import ablate
    material = "Facts about the user by topic:\nwork:\n- [session 2] The user works as a welder.\n\n"
    asked = [("1", "What is my job?", "fact_equal_session", "You work as a welder.",
              {"quotes": ["[session 2] The user works as a welder."]}),
             ("2", "What is my son's name?", "no_info", "Your son is Pete.", {"quotes": []})]
    prompts = [{"id": i, "set": "ru_dev", "question": q, "answerable": kind != "no_info", "question_type": kind,
                "messages": [{"role": "user", "content": material + f"User's question: {q}\nAnswer in one sentence:"}]}
               for i, q, kind, _, _ in asked]
    rows = [reading_row(i, q, kind, "cite", answer=draft, draft=draft, raw=json.dumps(cite, ensure_ascii=False))
            for i, q, kind, draft, cite in asked]
    for name, found in (("p.jsonl", prompts), ("a.jsonl", rows)):
        (tmp_path / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in found), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": ok}, ensure_ascii=False) for q, a, ok in (
        ("What is my job?", "You work as a welder.", True), ("What is my son's name?", "Your son is Pete.", False),
        ("What is my son's name?", readers.no_info(rows[0]), True))), encoding="utf-8")
    reading = f"{tmp_path / 'a.jsonl'}|{tmp_path / 'p.jsonl'}|{tmp_path / 'a.jsonl'}@{tmp_path / 'p.jsonl'}"
    assert ablate.main(["--reading", reading, "--verdicts", str(verdicts), "--rule", "check unquoted",
                        "--rule", "offered"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "| nothing | a | 2/2 | 1/1 | 0/1 | unquoted | 1/1 / 0/1 |" in out
    assert "| check unquoted | a | 1/2 | 0/1 | 0/1 | nothing | 0/1 / 0/1 |" in out
    assert "| offered | a | 2/2 | 1/1 | 0/1 | unquoted | 1/1 / 0/1 (no change) |" in out
    assert "unquoted" in ablate.decide.CHECKS  # put back


def test_the_ablation_puts_a_rule_back_when_a_reading_fails(tmp_path):
    from bench import ablate
    offered = ablate.answer_step.offered
    with pytest.raises(SystemExit):  # no calibration rows there: `readers.calibrated_switches` stops
        ablate.ablated("offered", [ablate.Reading("none", f"{tmp_path / 'c.jsonl'}@x", (), {})], {})
    assert ablate.answer_step.offered is offered


def test_every_ablation_stand_in_takes_the_arguments_of_the_part_it_replaces():
    """A stand-in of the wrong arity would raise only where its rule is reached: bound here instead."""
    import inspect
    from bench import ablate
    for rule, (module, attribute, stand_in) in ablate.RULES.items():
        if stand_in is None:  # a whole check: `CHECKS` less it
            continue
        required = [p for p in inspect.signature(getattr(module, attribute)).parameters.values()
                    if p.default is p.empty]
        stand_in(*[set() for _ in required])  # never fires, whatever it is given


def test_the_ablation_on_the_calibration_users_reads_each_reading_as_its_own_calibration(tmp_path, capsys,
                                                                                         monkeypatch):
    """`--calibration-users`: the readers' readings of users 21-26, each its own calibration on the set
    it read, their gold taken from the calibration questions by id; with no verdicts, right answers print «—»."""
    from bench import ablate
    for spec in ablate.CALIBRATION_READINGS:
        answers, prompts, calibration = spec.split("|")
        assert Path(answers).is_file() and Path(prompts).is_file(), spec
        assert calibration == f"{answers}@{prompts}"
    gold = ablate.calibration_gold()
    reading = ablate.load(ablate.CALIBRATION_READINGS[0])
    assert len(reading.replies) == 64 and all(row["gold"] == gold[row["id"]] for row, _, _, _ in reading.replies)
    monkeypatch.setattr(ablate, "CALIBRATION_READINGS", ablate.CALIBRATION_READINGS[:1])
    (tmp_path / "none.jsonl").write_text("", encoding="utf-8")
    assert ablate.main(["--calibration-users", "--rule", "kin", "--verdicts", str(tmp_path / "none.jsonl")]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split(" | ") for line in out if line.startswith("|") and "calibration_users" in line]
    assert [row[0] for row in rows] == ["| nothing", "| kin"] and {row[2] for row in rows} == {"—"}
    assert all(row[3].endswith("/32") and row[4].endswith("/32") for row in rows)
    assert any(line.startswith("- q15_calibration_users_c4000: right 0/64, `no_info` declined ")
               for line in out)  # the reader alone, after the table


def test_the_join_is_counted_by_what_it_does_to_each_answer(tmp_path, capsys):
    """bench/appended.py: a city the answer left out, joined, turns it right; a second sport joined
    to an update's answer turns it wrong and is listed twice: as a question asking one value, and
    as an answer the join turned wrong."""
    from bench import appended
    material = ("Факты о пользователе по темам:\nпоездки:\n- [сессия 2] Пользователь был в Твери.\n"
                "- [сессия 3] Пользователь был в Костроме.\nспорт:\n- [сессия 4] Пользователь бегает.\n"
                "- [сессия 5] Пользователь плавает в бассейне.\n\n")
    asked = [("1", "В каких городах я был?", "info_consolidation", "Вы были в Твери.",
              ["[сессия 2] Пользователь был в Твери."], ["Тверь", "Кострома"]),
             ("2", "Чем я занимаюсь по выходным?", "info_updating", "Вы бегаете.",
              ["[сессия 4] Пользователь бегает."], ["бег", "плавание в бассейне"])]
    prompts = [{"id": i, "set": "ru_dev", "question": q, "answerable": True, "question_type": kind,
                "messages": [{"role": "user", "content": material + f"Вопрос пользователя: {q}\nОтвет:"}]}
               for i, q, kind, _, _, _ in asked]
    rows = [row for i, q, kind, draft, quotes, listed in asked for row in (
        reading_row(i, q, kind, "cite", answer=draft, draft=draft, raw=json.dumps({"quotes": quotes}, ensure_ascii=False)),
        reading_row(i, q, kind, "list", items=listed, raw=json.dumps({"items": listed}, ensure_ascii=False)))]
    for name, found in (("p.jsonl", prompts), ("a.jsonl", rows)):
        (tmp_path / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in found), encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("\n".join(json.dumps({"question": q, "answer": a, "correct": ok}, ensure_ascii=False) for q, a, ok in (
        ("В каких городах я был?", "Вы были в Твери.", False), ("В каких городах я был?", "Вы были в Твери (также: Кострома).", True),
        ("Чем я занимаюсь по выходным?", "Вы бегаете.", True),
        ("Чем я занимаюсь по выходным?", "Вы бегаете (также: плавание в бассейне).", False))), encoding="utf-8")
    reading = f"{tmp_path / 'a.jsonl'}|{tmp_path / 'p.jsonl'}|{tmp_path / 'a.jsonl'}@{tmp_path / 'p.jsonl'}"
    assert appended.main(["--reading", reading, "--verdicts", str(verdicts)]) == 0
    out = capsys.readouterr().out
    assert "| a | 2 | info_consolidation 1, info_updating 1 | 1 | 1 | 0 | 0 | 0 |" in out
    assert "Questions asking for one value with items joined: 1\n- a, info_updating: «Чем я занимаюсь" in out
    assert "Answers the join turned wrong: 1\n- a, info_updating:" in out


def test_the_join_on_the_calibration_users_reads_their_gold(capsys):
    """`appended.py --calibration-users`: the 1.5B's list asks on users 21-26, their rows given the
    calibration questions' gold, so every changed answer finds its verdict."""
    from bench import appended
    assert appended.main(["--calibration-users"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| q15_calibration_users_c8000 |"))
    assert row.split(" | ")[-1] == "0 |"  # unjudged: none
