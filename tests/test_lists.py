"""List questions (issue 30): the facts of the topic a question names reach the prompt, their
turns reach the excerpts, and in a peer chat the best hits query again on their own."""
import numpy as np
import pytest

from submit.memory import topics
from submit.memory.dialogue import DialogueMemory, Settings
from submit.memory.embed import HashEmbedder
from submit.memory.facts import Fact
from submit.memory.index import KeyIndex
from submit.memory.llm import ScriptedLLM
from submit.memory import retrieve as search_module
from submit.memory.profiles import ASSISTANT_CHAT, Profiles
from submit.memory.retrieve import search
from models import Message

from test_retrieval import store_of


def fact(slot, statement, turn_idx, session=0):
    return Fact(slot, statement, statement, turn_idx, session, turn_idx)


def test_topic_words_are_the_questions_lemmas_less_the_peoples_names():
    assert topics.topic_words("Какие у меня хобби?") == {"хобби"}
    assert topics.topic_words("What is Caroline's job?", ["Caroline", "Melanie"]) == {"job"}


def test_a_fact_is_of_the_topic_by_a_word_of_its_key_or_by_its_first_word():
    photo = fact("хобби.фотография", "Пользователь купил фотоаппарат.", 0)
    fishing = fact("рыбалка", "Пользователь рыбачит по субботам.", 1)
    assert topics.in_topic(photo, frozenset({"хобби"}), frozenset())
    assert topics.in_topic(photo, frozenset({"фотография"}), frozenset())  # any word of the key
    assert not topics.in_topic(fishing, frozenset({"хобби"}), frozenset())
    assert topics.in_topic(fishing, frozenset(), frozenset({"рыбалка"}))
    assert topics.nearest_labels(["а", "б", "в"], np.array([0.2, 0.9, 0.9]), 2) == {"б", "в"}


def test_select_takes_the_nearest_then_the_topic_then_the_rest_within_the_budget():
    near = [fact(f"k{i}", f"s{i}", i) for i in range(6)]  # nearest first
    topical = {near[3], near[5]}
    chars = {f: 10 for f in near} | {near[4]: 50}
    pick = lambda budget, lines: topics.select(near, topical.__contains__, chars.__getitem__, budget, lines, 1)  # noqa: E731
    assert pick(1000, 10) == [near[0], near[3], near[5], near[1], near[2], near[4]]
    assert pick(1000, 3) == [near[0], near[3], near[5]]
    assert pick(60, 10) == [near[0], near[3], near[5], near[1], near[2]]  # near[4] (50 chars) no longer fits


def memory_with_facts(facts, **settings):
    """A memory of one user turn per fact (session = the fact's session), facts added as extraction would."""
    memory = DialogueMemory(ScriptedLLM(), HashEmbedder(), Settings(**settings))
    for f in facts:
        memory.write([Message("user", f.statement, str(f.session_order + 1)),
                      Message("assistant", "Понятно.", str(f.session_order + 1))])
    memory.add_facts(facts)
    return memory


HOBBIES = [fact("хобби.фотография", "Пользователь купил себе фотоаппарат.", 0, 0),
           fact("работа", "Пользователь работает сварщиком.", 2, 1),
           fact("хобби.резьба", "Пользователь вырезает игрушки из дерева.", 4, 2),
           fact("поиск", "Пользователь ищет себе хобби.", 6, 3),
           fact("машина", "У пользователя машина Шкода.", 8, 4),
           fact("хобби.рыбалка", "По субботам пользователь ездит на рыбалку.", 10, 5),
           fact("жена", "Жену пользователя зовут Людмила.", 12, 6),
           fact("сын", "Сына пользователя зовут Рома.", 14, 7)]


def test_a_question_naming_a_topic_brings_its_facts_the_nearest_first():
    memory = memory_with_facts(HOBBIES, max_fact_lines=4, nearest_facts_first=1, topic_labels=0)
    question = "Какие у меня хобби?"
    nearest = memory.nearest_facts(question)
    assert {f.turn_idx for f in nearest[:4]} != {0, 4, 10, nearest[0].turn_idx}  # dense alone misses some
    lines, favoured = memory.choose_facts(question)
    # the one nearest fact, then every fact filed under «хобби.…», though they share no word with
    # the question; grouped by topic in the order topics were chosen, each topic oldest first
    assert [line.fact.turn_idx for line in lines] == [nearest[0].turn_idx, 0, 4, 10]
    assert [line.label for line in lines][1:] == ["хобби", "хобби", "хобби"]
    assert favoured == {nearest[0].turn_idx, 0, 4, 10}  # 8 facts, 4 shown: a selection, so favoured


def test_the_nearest_topic_of_two_facts_or_more_counts_as_the_questions_topic():
    facts = HOBBIES + [fact("жена.работа", "Она работает учительницей.", 16, 8)]
    memory = memory_with_facts(facts, max_fact_lines=2, nearest_facts_first=0, topic_labels=1)
    assert memory.topic_labels("Как зовут мою жену?", facts) == {"жена"}
    assert memory.topic_labels("Какая у меня машина?", facts) <= {"жена", "хобби"}  # «машина»: one fact
    assert [line.fact.turn_idx for line in memory.fact_lines("Как зовут мою жену?")] == [12, 16]


def test_facts_that_are_nearly_all_the_dialogues_favour_no_turn():
    memory = memory_with_facts(HOBBIES[:4], max_fact_lines=4)  # 4 facts, all shown: no selection
    lines, favoured = memory.choose_facts("Какие у меня хобби?")
    assert len(lines) == 4 and favoured == frozenset()


def test_favoured_turns_get_the_fact_turn_weight():
    store = store_of([("Я люблю рыбалку", "Отлично")], [("Купил фотоаппарат", "Здорово")])
    embedder = HashEmbedder()
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    vector = embedder.embed_queries(["Какие у меня хобби?"])[0]
    plain = {h.turn_idx: h.score for h in search(index, store, "Какие у меня хобби?", vector)}
    profile = ASSISTANT_CHAT.with_stage("favoured", weight=0.25)
    favoured = {h.turn_idx: h.score for h in search(index, store, "Какие у меня хобби?", vector,
                                                    profile=profile, favoured={2})}
    assert {t: round(favoured[t] - plain[t], 6) for t in plain} == {0: 0, 1: 0, 2: 0.25, 3: 0}


def test_the_facts_shown_bring_their_sessions_turns_into_a_small_context():
    question, budget = "Какие у меня хобби?", 300
    memory = memory_with_facts(HOBBIES, max_fact_lines=4, nearest_facts_first=1, topic_labels=0,
                               context_chars=budget,
                               profiles=Profiles(assistant=ASSISTANT_CHAT.with_stage("favoured", weight=1.0)))
    answer = memory.answer(question)
    shown = {idx for line in answer.facts for idx in line.turn_ids}
    assert {0, 4, 10} < shown <= set(answer.context.turn_ids)  # every item's turn, from sessions 1, 3, 6
    bare = memory_with_facts(HOBBIES, context_chars=budget).build_context(question, "ru")
    assert not {0, 4, 10} & set(bare.turn_ids)  # by the ranking alone the context holds none of them


def test_each_best_hit_queries_on_its_own_and_lifts_the_keys_near_it():
    store = store_of([("Caroline: I went to a support group for trans people.", "Melanie: How was it?")],
                     [("Caroline: The pride parade last week was amazing!", "Melanie: Wow!")],
                     [("Caroline: I bought a new bike.", "Melanie: Cool.")])
    embedder = HashEmbedder()
    index = KeyIndex(embedder)
    index.add_turns(store.turns)
    scores, keys = index.dense_search(embedder.embed_queries(["support group"])[0])
    lifted = search_module.with_hit_queries(index, scores, keys, 1, 0.5)
    best = int(np.argmax(scores))
    near = index.dense_search_many(index.vectors([best]))[0]
    assert lifted == pytest.approx(0.5 * scores + 0.5 * near)
    assert lifted[best] == pytest.approx(0.5 * scores[best] + 0.5)  # the hit itself is nearest to itself
    assert search_module.with_hit_queries(index, scores, keys, 0, 0.5) is scores

