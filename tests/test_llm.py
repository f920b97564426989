"""LLM backends: spec parsing, the cache/replay store, the OpenAI-compatible client, tokens."""
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from local_eval.specs import make_llm
from submit.memory.llm import BackendUnavailable, Ledger, ScriptedLLM, StopRun
from submit.memory.llm_backends import shorten_chat, strip_junk
from local_eval.llms.store import prompt_key, settings_of
from conftest import send_json

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


def test_cache_stores_replies_and_replay_answers_from_them(tmp_path):
    inner = "scripted"
    cached = make_llm(f"cache:{tmp_path}+{inner}")
    assert cached.generate([CHAT], max_tokens=5)[0].text == ScriptedLLM.default_answer(CHAT)
    again = make_llm(f"cache:{tmp_path}+{inner}")
    again.inner.enqueue("would be different")
    assert again.generate([CHAT], max_tokens=5)[0].text == ScriptedLLM.default_answer(CHAT)  # from the store
    assert make_llm(f"replay:{tmp_path}").generate([CHAT], max_tokens=5)[0].text == ScriptedLLM.default_answer(CHAT)


def test_replay_miss_writes_pending_and_stops_then_accepts_dropped_in_replies(tmp_path):
    replay = make_llm(f"replay:{tmp_path}")
    with pytest.raises(StopRun, match="1 prompt"):
        replay.generate([CHAT], max_tokens=7, schema={"type": "object"})
    (row,) = [json.loads(x) for x in (tmp_path / "pending.jsonl").read_text().splitlines()]
    assert row == {"key": prompt_key(CHAT, settings_of(7, {"type": "object"})), "messages": CHAT,
                   "settings": {"max_tokens": 7, "schema": {"type": "object"}}}
    (tmp_path / "replies.jsonl").write_text(json.dumps({"key": row["key"], "reply": "{}"}) + "\n")
    assert make_llm(f"replay:{tmp_path}").generate([CHAT], max_tokens=7, schema={"type": "object"})[0].text == "{}"


def test_unavailable_backends_say_what_is_missing(tmp_path):
    with pytest.raises(BackendUnavailable, match="no model"):
        make_llm(f"hf:{tmp_path}/missing")
    with pytest.raises(BackendUnavailable, match="openai:http"):
        make_llm("openai:http://localhost:1")
    with pytest.raises(BackendUnavailable, match="cache:DIR"):
        make_llm(f"cache:{tmp_path}")


class FakeServer(BaseHTTPRequestHandler):
    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeServer.seen.append(body)
        send_json(self, {"choices": [{"message": {"content": "<|message_sep|>Luna"}}],
                         "usage": {"prompt_tokens": 12, "completion_tokens": 2}})

    def log_message(self, *args):
        pass


def test_openai_backend_talks_to_a_compatible_server_on_loopback():
    server = HTTPServer(("127.0.0.1", 0), FakeServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = make_llm(f"openai:http://127.0.0.1:{server.server_port}/v1#tiny")
        (g,) = llm.generate([CHAT], max_tokens=9, schema={"type": "object"})
    finally:
        server.shutdown()
    assert (g.text, g.prompt_tokens, g.output_tokens) == ("Luna", 12, 2)
    body = FakeServer.seen[-1]
    assert (body["model"], body["max_tokens"], body["temperature"], body["seed"]) == ("tiny", 9, 0.0, 42)
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


def test_gigachat_markers_are_stripped_but_brackets_kept():
    assert strip_junk('<s>{"facts": []}<|message_sep|>') == '{"facts": []}'


def test_shorten_chat_cuts_only_the_last_message_keeping_head_and_tail():
    chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "A" * 1000 + "B" * 1000}]
    short = shorten_chat(chat, 0.5)
    assert short[0] == chat[0] and short[1]["content"].startswith("A" * 500)
    assert short[1]["content"].endswith("B" * 500) and len(short[1]["content"]) < 1100


def test_ledger_totals_by_purpose():
    ledger, llm = Ledger(), ScriptedLLM(["abcdefgh"])
    ledger.add("answer", llm.generate([CHAT], max_tokens=5))
    # chars/4, at least 1 per message: "Be brief." -> 2, "Hi" -> 1; "abcdefgh" -> 2
    assert ledger.totals() == {"calls": 1, "prompt_tokens": 3, "output_tokens": 2,
                               "by_purpose": {"answer": {"calls": 1, "prompt_tokens": 3, "output_tokens": 2}}}


def test_scripted_default_reply_follows_the_prompts_language():
    ru = [{"role": "user", "content": "Контекст: —\nВопрос: Как зовут мою собаку?"}]
    en = [{"role": "user", "content": "Context: —\nQuestion: What is my dog's name?"}]
    replies = ScriptedLLM().generate([ru, en], max_tokens=20)
    assert [r.text for r in replies] == ["У меня нет такой информации.", "I don't have that information."]


def test_an_english_dialogue_is_answered_in_english_by_the_scripted_llm():
    from conftest import make_model
    from models import Message
    model, llm = make_model()
    model.write_to_memory([Message("user", "Caroline: I adopted a dog named Max.", "1"),
                           Message("assistant", "Melanie: How lovely!", "1")], "d1")
    assert model.answer_to_question("d1", "What is the name of Caroline's dog?") == "I don't have that information."
    assert "One-sentence answer:" in llm.history[-1][0][-1]["content"]  # the English answer prompt reached the LLM


def test_split_sends_the_structured_calls_to_the_first_backend_and_the_rest_to_the_second(tmp_path):
    from submit.memory.decide import CITE_SCHEMA
    llm = make_llm(f"split:scripted;cache:{tmp_path}+scripted")
    structured, text = llm.structured, llm.text.inner
    structured.enqueue('{"facts": []}')
    text.enqueue("Вы живёте в Омске.", '{"quotes": []}')
    schema_reply = llm.generate([CHAT], max_tokens=5, schema={"type": "object"}, purpose="extract")[0].text
    answer = llm.generate([CHAT], max_tokens=5)[0].text
    # the cite ask carries a schema, but it reads the answer's material: the reader's call
    check = llm.generate([CHAT], max_tokens=5, schema=CITE_SCHEMA, purpose="answer")[0].text
    assert (schema_reply, answer, check) == ('{"facts": []}', "Вы живёте в Омске.", '{"quotes": []}')
    assert (list(structured.purposes), list(text.purposes)) == (["extract"], ["answer", "answer"])
    assert llm.text.store.replies  # the answer side kept its own store


def test_a_call_says_its_purpose():
    with pytest.raises(ValueError, match="purpose"):
        ScriptedLLM().generate([CHAT], max_tokens=5, purpose="guess")


def test_a_split_spec_without_two_sides_is_refused():
    for spec in ("split:scripted", "split:;scripted", "split:scripted;"):
        with pytest.raises(BackendUnavailable):
            make_llm(spec)
