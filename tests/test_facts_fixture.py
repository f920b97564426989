"""The facts path on realistic extraction output: the recorded fixture as the LLM, through the
contest harness, over the 4 sample dialogues and every question asked about them."""
import json
from collections import Counter

import pytest

from local_eval import benchmarks, harness
from submit import SubmitModelWithMemory
from submit.config import Config
from submit.memory.dialogue import Settings
from submit.memory import facts as F
from local_eval.specs import make_llm
from local_eval.llms.fixture import ANSWER, FixtureLLM, normalize

from conftest import ROOT

VERSIONS = ROOT / "bench" / "fixtures" / "versions_fixture.jsonl"
CHECKS = ROOT / "bench" / "fixtures" / "versions_check_fixture.jsonl"


@pytest.fixture(scope="module")
def fixture_path(shared_data_dir):
    return shared_data_dir / "gigamemory" / "extraction_fixture.jsonl"


@pytest.fixture(scope="module")
def shared_data_dir():
    from conftest import SHARED_DATA
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    return SHARED_DATA


def recorded(fixture_path) -> dict:
    """Normalized message -> normalized statements recorded for it."""
    out = {}
    with fixture_path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out[normalize(row["message"])] = {normalize(x["statement"]) for x in row["facts"]}
    return out


def test_the_fixture_answers_extraction_prompts_by_the_message_they_hold(fixture_path):
    llm = FixtureLLM(str(fixture_path))
    turn = F.Turn(0, "1", 0, 0, "user", "жена моя Людмила говорит, что я слишком много работаю")
    chat = F.build_prompts([F.Candidate(turn, "а, ну ладно.", "вчера с семьей из Твери вернулись")], "ru")[0]
    assert json.loads(llm.generate([chat], max_tokens=9, schema=F.FACTS_SCHEMA, purpose="extract")[0].text) == {"facts": []}
    known = "жена моя расстроилась из-за этого, что в паспортах у нас разные фамилии, а мы уже 20 лет женаты"
    chat = F.build_prompts([F.Candidate(turn, known, "")], "ru")[0]
    facts = json.loads(llm.generate([chat], max_tokens=9, schema=F.FACTS_SCHEMA, purpose="extract")[0].text)["facts"]
    assert [f["slot"] for f in facts] == ["семья.брак.стаж", "жена.переживания"]
    assert llm.generate([[{"role": "user", "content": "Как меня зовут?"}]], max_tokens=9)[0].text == ANSWER
    assert llm.stats == Counter(matched=2, answer_prompts=1)


def test_contest_path_on_the_fixture_never_falls_back_and_every_fact_line_has_its_turn(fixture_path):
    records = (benchmarks.load("gigamemory", str(fixture_path.parent / "format_example.jsonl"))
               + benchmarks.load("gigamemory", str(fixture_path.parent / "ru_dev_questions.jsonl")))
    llm = make_llm(f"fixture:{fixture_path},{VERSIONS},{CHECKS}")
    # The fixture's answer is a placeholder, the same for every question and quoting nothing: it
    # stands, or a check the run's own calibration on it turned on declines it (`empty`, which
    # declines a measure asked and no number given: the set's questions without an answer ask
    # more measures than the others).
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash", memory=Settings()), llm=llm)
    said = recorded(fixture_path)
    for record in records:
        messages, _ = harness.flatten(record)  # a turn's idx is its place in this list
        result = harness.run_record(model, record)
        by = result.trace.declined_by
        assert (result.answer, by) == (ANSWER, None) or by in model.switches["ru"].on, record.id
        assert result.trace.facts, record.id  # facts reached the answer prompt
        for line in result.trace.facts:
            for fact, turn_idx in zip((line.fact, *line.replaced), line.turn_ids):
                turn = messages[turn_idx]
                assert turn.role == "user"
                assert normalize(fact.statement) in said[normalize(F.user_text(turn.content.strip()))]
    assert not model.fallbacks, dict(model.fallbacks)
    assert llm.stats["unknown_messages"] == 0 and llm.stats["versions_unknown"] == 0
    assert llm.stats["checks_matched"] > 0 and llm.stats["checks_unknown"] == 0


def test_the_fixture_answers_a_check_by_its_two_statements(tmp_path):
    from submit.memory import versions
    path = tmp_path / "checks.jsonl"
    path.write_text(json.dumps({"earlier": "Пользователь живёт в Казани.", "later": "Пользователь живёт в Перми.",
                                "reply": '{"replaces": true}'}, ensure_ascii=False) + "\n"
                    + json.dumps({"earlier": "У пользователя есть друг Коля.", "later": "У пользователя есть друг Витя.",
                                  "replaces": False}, ensure_ascii=False) + "\n", encoding="utf-8")
    llm = FixtureLLM(str(path))
    kazan, perm, kolya, vitya, other = (
        F.Fact("город", v, s, 0, order, 0) for v, s, order in
        (("Казань", "Пользователь живёт в Казани.", 1), ("Пермь", "Пользователь живёт в Перми.", 4),
         ("Коля", "У пользователя есть друг Коля.", 1), ("Витя", "У пользователя есть друг Витя.", 2),
         ("Уфа", "Пользователь живёт в Уфе.", 5)))
    chats = versions.check_prompts([(kazan, perm), (kolya, vitya), (perm, other)], "ru")
    replies = [g.text for g in llm.generate(chats, max_tokens=16, schema=versions.CHECK_SCHEMA, purpose="versions_check")]
    assert [versions.parse_check(r) for r in replies] == [True, False, None]  # an unknown pair: unusable
    assert llm.stats == Counter(checks_matched=2, checks_unknown=1)
