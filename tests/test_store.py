"""The reply store (`cache:`, `replay:`, `collect:`): damaged lines, fresh-line appends, batch mode."""
import json
import logging
import subprocess
import sys

import pytest

from conftest import HANG_GUARD, ROOT
from submit.memory.answer import NO_INFO
from local_eval.specs import make_llm
from submit.memory.llm import BackendUnavailable, ScriptedLLM, StopRun
from local_eval.llms.store import CollectLLM, Store, answer_pending, line_prints, prompt_key, settings_of

CHAT = [{"role": "user", "content": "Как меня зовут?"}]
OTHER = [{"role": "user", "content": "Где я живу?"}]
SCRIPTED_REPLY = NO_INFO["ru"]  # what `scripted` answers a Russian prompt that is not a schema prompt
SCHEMA = {"type": "object", "properties": {"facts": {"type": "array"}}, "required": ["facts"]}


def key(chat, max_tokens=5, schema=None):
    return prompt_key(chat, settings_of(max_tokens, schema))


def line(**row) -> bytes:
    return (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")


def cut_inside_a_character(row: dict) -> bytes:
    """A JSON line cut in the middle of a two-byte Cyrillic letter, as a kill mid-write leaves it."""
    data = json.dumps(row, ensure_ascii=False).encode("utf-8")
    at = data.index("ё".encode("utf-8")) + 1
    return data[:at]


@pytest.mark.parametrize("name", ["store.jsonl", "replies.jsonl"])
def test_a_cut_last_line_is_skipped_counted_once_and_the_rest_answers(tmp_path, caplog, name):
    (tmp_path / name).write_bytes(line(key=key(CHAT), reply="Ольга")
                                  + b'"just a string"\n' + line(key="k-without-reply")
                                  + cut_inside_a_character({"key": key(OTHER), "reply": "Всё ещё Томск"}))
    with caplog.at_level(logging.WARNING, logger="gigamemory"):
        replay = make_llm(f"replay:{tmp_path}")
    (warning,) = [r.message for r in caplog.records]  # said once: which file, how many lines
    assert str(tmp_path / name) in warning and "skipped 3 damaged lines (2, 3, 4) in" in warning
    assert replay.generate([CHAT], max_tokens=5)[0].text == "Ольга"
    with pytest.raises(StopRun):
        replay.generate([OTHER], max_tokens=5)  # the cut reply is gone, not half-read


def test_store_appends_after_a_cut_line_on_a_fresh_line(tmp_path):
    (tmp_path / "store.jsonl").write_bytes(line(key=key(CHAT), reply="Ольга") + b'{"key": "cut')
    cached = make_llm(f"cache:{tmp_path}+scripted")
    cached.generate([OTHER], max_tokens=5)
    lines = (tmp_path / "store.jsonl").read_bytes().split(b"\n")
    assert lines[1] == b'{"key": "cut'
    row = json.loads(lines[2])
    assert {k: row.pop(k) for k in ("prompt_tokens", "output_tokens")} == {"prompt_tokens": 2, "output_tokens": 7}
    assert row.pop("seconds") >= 0
    assert row == {"key": key(OTHER), "reply": SCRIPTED_REPLY, "lines": line_prints(OTHER)}
    store = Store(str(tmp_path))
    assert store.replies == {key(CHAT): "Ольга", key(OTHER): SCRIPTED_REPLY}


def test_a_replay_reports_the_tokens_the_model_counted_when_it_was_recorded(tmp_path):
    (tmp_path / "store.jsonl").write_bytes(line(key=key(CHAT), reply="Ольга") + line(
        key=key(OTHER), reply="Да", prompt_tokens=321, output_tokens=2, seconds=4.5))
    recorded, estimated = make_llm(f"replay:{tmp_path}").generate([OTHER, CHAT], max_tokens=5)
    assert (recorded.prompt_tokens, recorded.output_tokens) == (321, 2)
    assert estimated.prompt_tokens == max(1, len(CHAT[0]["content"]) // 4)  # an older row: estimated


def test_replay_needs_an_existing_folder_and_its_miss_is_one_line(tmp_path):
    with pytest.raises(BackendUnavailable, match="no reply store"):
        make_llm(f"replay:{tmp_path}/missing")
    with pytest.raises(StopRun) as stop:
        make_llm(f"replay:{tmp_path}").generate([CHAT], max_tokens=5)
    assert "\n" not in str(stop.value) and "1 prompt(s)" in str(stop.value)
    with pytest.raises(StopRun):
        make_llm(f"replay:{tmp_path}").generate([CHAT], max_tokens=5)
    assert len((tmp_path / "pending.jsonl").read_text().splitlines()) == 1  # queued once per key


def test_collect_answers_from_the_store_and_queues_the_rest_once_with_placeholders(tmp_path):
    (tmp_path / "replies.jsonl").write_bytes(line(key=key(CHAT), reply="Ольга"))
    llm = make_llm(f"collect:{tmp_path}")
    assert isinstance(llm, CollectLLM)
    out = llm.generate([CHAT, OTHER, OTHER], max_tokens=5)
    assert [g.text for g in out] == ["Ольга", CollectLLM.MARKER, CollectLLM.MARKER]
    llm.next_record()
    assert llm.generate([OTHER], max_tokens=9, schema=SCHEMA)[0].text == '{"facts": []}'
    pending = [json.loads(x) for x in (tmp_path / "pending.jsonl").read_text().splitlines()]
    assert pending == [{"key": key(OTHER), "messages": OTHER, "settings": {"max_tokens": 5, "schema": None}},
                       {"key": key(OTHER, 9, SCHEMA), "messages": OTHER,
                        "settings": {"max_tokens": 9, "schema": SCHEMA}}]
    assert (llm.placeholders, llm.queued) == (3, 2)
    again = make_llm(f"collect:{tmp_path}")
    again.generate([OTHER], max_tokens=5)
    assert again.queued == 0 and len((tmp_path / "pending.jsonl").read_text().splitlines()) == 2


def test_collect_queues_one_layer_per_record(tmp_path):
    """After a miss, the record's later prompts read placeholder data: answered, not queued."""
    llm = make_llm(f"collect:{tmp_path}")
    llm.generate([CHAT], max_tokens=5, schema=SCHEMA)  # extraction: queued
    llm.generate([OTHER], max_tokens=5)  # the answer built on it: a placeholder only
    llm.next_record()
    llm.generate([OTHER], max_tokens=7)  # the next record's first prompt: queued
    keys = [json.loads(x)["key"] for x in (tmp_path / "pending.jsonl").read_text().splitlines()]
    assert keys == [key(CHAT, 5, SCHEMA), key(OTHER, 7)]
    assert llm.placeholders == 3


def test_collect_behind_split_queues_every_records_answer(tmp_path):
    """`split:FIXTURE;collect:DIR` (ours with a stand-in reader): each record's answer prompt is
    queued, not only the first record's, and the run counts the placeholders the text side gave."""
    from local_eval.llms import store
    llm = make_llm(f"split:scripted;collect:{tmp_path}")
    for chat in (CHAT, OTHER):
        store.next_record(llm)
        llm.generate([chat], max_tokens=5, purpose="answer")
    keys = [json.loads(x)["key"] for x in (tmp_path / "pending.jsonl").read_text().splitlines()]
    assert keys == [key(CHAT), key(OTHER)]
    assert store.placeholders(llm) == 2
    assert [(n, q) for n, q, _ in store.pending_state(llm)] == [(2, 2)]


def test_a_collect_pass_drops_answered_and_damaged_lines_from_pending(tmp_path):
    rows = [{"key": key(c), "messages": c, "settings": settings_of(5, None)} for c in (CHAT, OTHER)]
    (tmp_path / "pending.jsonl").write_bytes(line(**rows[0]) + line(**rows[1]) + line(**rows[1]) + b'{"key": ')
    (tmp_path / "replies.jsonl").write_bytes(line(key=rows[0]["key"], reply="Ольга"))
    make_llm(f"collect:{tmp_path}")
    assert [json.loads(x) for x in (tmp_path / "pending.jsonl").read_text().splitlines()] == [rows[1]]


def test_answer_pending_replies_to_waiting_prompts_with_their_settings(tmp_path):
    collect = make_llm(f"collect:{tmp_path}")
    collect.generate([CHAT], max_tokens=5, schema=SCHEMA)
    collect.next_record()
    collect.generate([OTHER, CHAT], max_tokens=9)
    (tmp_path / "replies.jsonl").write_bytes(line(key=key(CHAT, 9), reply="уже есть"))
    scripted = ScriptedLLM([lambda chat: "ответ: " + chat[0]["content"]] * 5)
    assert answer_pending(str(tmp_path), scripted) == 2
    assert [(chat, max_tokens, schema) for chat, max_tokens, schema in scripted.history] == [
        (CHAT, 5, SCHEMA), (OTHER, 9, None)]
    store = Store(str(tmp_path))
    assert store.replies == {key(CHAT, 9): "уже есть", key(CHAT, 5, SCHEMA): "ответ: Как меня зовут?",
                             key(OTHER, 9): "ответ: Где я живу?"}
    assert store.outstanding() == [] and answer_pending(str(tmp_path), scripted) == 0


def test_answer_pending_tool_runs_any_backend_spec(tmp_path):
    make_llm(f"collect:{tmp_path}").generate([CHAT], max_tokens=5)
    proc = subprocess.run([sys.executable, "tools/answer_pending.py", str(tmp_path), "--llm", "scripted"],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    assert Store(str(tmp_path)).replies == {key(CHAT): SCRIPTED_REPLY}
    assert len((tmp_path / "replies.jsonl").read_text().splitlines()) == 1
    bad = subprocess.run([sys.executable, "tools/answer_pending.py", str(tmp_path / "nope"), "--llm", "scripted"],
                         cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_answer_pending_on_a_server_that_is_down_is_one_line(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    make_llm(f"collect:{tmp_path}").generate([CHAT], max_tokens=5)
    spec = f"openai:http://127.0.0.1:{port}/v1#x"
    proc = subprocess.run([sys.executable, "tools/answer_pending.py", str(tmp_path), "--llm", spec],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert f"--llm {spec}" in proc.stderr and "URLError" in proc.stderr  # which backend, and why
    assert not (tmp_path / "replies.jsonl").exists() or (tmp_path / "replies.jsonl").read_text() == ""


def test_stand_in_export_and_import_round_trip(tmp_path):
    import json
    import subprocess
    import sys
    from conftest import ROOT
    from local_eval.specs import make_llm
    from local_eval.llms.store import Store
    chats = [[{"role": "user", "content": f"Q{i}"}] for i in range(3)]
    make_llm(f"collect:{tmp_path}").generate(chats, max_tokens=5)
    tool = [sys.executable, str(ROOT / "tools/stand_in.py")]
    out = subprocess.run([*tool, "export", str(tmp_path), "--out", str(tmp_path / "p.jsonl"), "--parts", "2"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    exported = [json.loads(x) for part in (1, 2) for x in (tmp_path / f"p.{part}.jsonl").read_text().splitlines()]
    assert [(r["id"], r["messages"]) for r in exported] == [("p0001", chats[0]), ("p0002", chats[1]), ("p0003", chats[2])]
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"id": r["id"], "reply": "A" + r["id"]}) + "\n" for r in exported))
    assert subprocess.run([*tool, "import", str(tmp_path), str(answers)], capture_output=True).returncode == 0
    replay = make_llm(f"replay:{tmp_path}")
    assert [g.text for g in replay.generate(chats, max_tokens=5)] == ["Ap0001", "Ap0002", "Ap0003"]
    assert Store(str(tmp_path)).outstanding() == []
    imported = [json.loads(x) for x in (tmp_path / "replies.jsonl").read_text().splitlines()]
    assert all(r["lines"] and len(r["lines"]) == 1 for r in imported)  # line prints kept for miss diagnosis


def test_a_replay_miss_names_the_line_that_changed_against_the_nearest_recorded_prompt(tmp_path):
    recorded = [{"role": "system", "content": "Answer from the excerpts."},
                {"role": "user", "content": "Session 1\nAnna: I moved to Kazan.\nAnna: I have a cat.\n\nQuestion: Where?"}]
    other = [{"role": "system", "content": "Answer from the excerpts."},
             {"role": "user", "content": "Session 9\nBob: I like tea.\n\nQuestion: What does Bob drink?"}]
    cached = make_llm(f"cache:{tmp_path}+scripted")
    cached.generate([recorded, other], max_tokens=5)
    rows = [json.loads(x) for x in (tmp_path / "store.jsonl").read_text().splitlines()]
    assert all(len(r["lines"]) == 6 if r["key"] == key(recorded) else "lines" in r for r in rows)
    changed = [recorded[0], {"role": "user", "content": recorded[1]["content"].replace("a cat", "a dog")}]
    with pytest.raises(StopRun) as stop:
        make_llm(f"replay:{tmp_path}").generate([changed], max_tokens=5)
    text = str(stop.value)
    assert key(recorded)[:12] in text and "Anna: I have a dog." in text  # the nearest prompt, and the new line
    assert "\n" not in text
    # a store without line prints (recorded before they existed) still gives the plain message
    (tmp_path / "store.jsonl").write_text("".join(json.dumps({"key": r["key"], "reply": r["reply"]}) + "\n" for r in rows))
    with pytest.raises(StopRun) as plain:
        make_llm(f"replay:{tmp_path}").generate([changed], max_tokens=5)
    assert str(plain.value).endswith("then run again.")


class OneByOne(ScriptedLLM):
    """A backend that answers a batch prompt after prompt, and breaks on the third prompt it is asked."""
    one_at_a_time = True

    def __init__(self):
        super().__init__()
        self.asked = 0

    def _generate(self, chats, **kwargs):
        self.asked += len(chats)
        if self.asked > 2:
            raise KeyboardInterrupt  # the recording stopped by hand, an hour into a batch
        return super()._generate(chats, **kwargs)


def test_a_store_over_a_one_at_a_time_backend_keeps_each_reply_as_it_comes(tmp_path):
    from local_eval.llms.store import CachingLLM
    cached = CachingLLM(str(tmp_path), OneByOne())
    third = [{"role": "user", "content": "Кем я работаю?"}]
    with pytest.raises(KeyboardInterrupt):
        cached.generate([CHAT, OTHER, third], max_tokens=5)
    assert set(Store(str(tmp_path)).replies) == {key(CHAT), key(OTHER)}  # the two made before the stop
