"""The period a question names (`period.named_period`) and the retrieval bonus it gives."""
from datetime import date

import pytest

from submit.memory.timeref.periods import named_period
from submit.memory.profiles import PEER_CHAT, Stage, profile_of
from submit.memory.retrieve import Ask, period_stage
from submit.memory.turns import TurnStore
from models import Message

D = date


@pytest.mark.parametrize("question, span", [
    ("What did Nate do for Joanna on 25 May, 2022?", (D(2022, 5, 25), D(2022, 5, 25))),
    ("What did they discuss on May 25th, 2022?", (D(2022, 5, 25), D(2022, 5, 25))),
    ("What happened on 2023/05/02?", (D(2023, 5, 2), D(2023, 5, 2))),
    ("Что я делал 25 мая 2022 года?", (D(2022, 5, 25), D(2022, 5, 25))),
    # a day without its year takes the year the question gives elsewhere
    ("Where was John between August 11 and August 15 2023?", (D(2023, 8, 11), D(2023, 8, 15))),
    ("Was the first half of September 2022 a good month?", (D(2022, 9, 1), D(2022, 9, 15))),
    ("What did she do in the second half of February 2024?", (D(2024, 2, 16), D(2024, 2, 29))),
    ("Which event did I attend in mid-March 2023?", (D(2023, 3, 10), D(2023, 3, 21))),
    ("Куда я ездил в сентябре 2022?", (D(2022, 9, 1), D(2022, 9, 30))),
    ("Что было в конце мая 2022 года?", (D(2022, 5, 22), D(2022, 5, 31))),
    ("Which performances did John achieve in 2023?", (D(2023, 1, 1), D(2023, 12, 31))),
])
def test_absolute_periods(question, span):
    assert named_period(question) == span


def test_relative_periods_need_the_questions_date():
    today = D(2023, 5, 20)  # a Saturday
    assert named_period("What did I buy last Saturday?", today) == (D(2023, 5, 13), D(2023, 5, 13))
    assert named_period("Что я купил вчера?", today) == (D(2023, 5, 19), D(2023, 5, 19))
    assert named_period("What did I do on March 3rd?", today) == (D(2023, 3, 3), D(2023, 3, 3))
    assert named_period("What did I do on December 3rd?", today) == (D(2022, 12, 3), D(2022, 12, 3))
    assert named_period("What did I buy last Saturday?") is None


@pytest.mark.parametrize("question", [
    "How many days ago did I go to the gym?",
    "What happened recently?",  # no bounds
    "You may 2x the recipe, right?",  # the verb, not the month
])
def test_no_period(question):
    assert named_period(question, D(2023, 5, 20)) is None


def ask(store, question):
    return Ask(store, question, {}, frozenset())


def dated_store(dates):
    """One pair per session, the sessions dated as given (LoCoMo's date strings)."""
    store = TurnStore()
    for sid, when in enumerate(dates, start=1):
        store.add_pair([Message("user", f"Nate: hi {sid}", sid), Message("assistant", f"Joanna: hey {sid}", sid)])
        store.session_dates[store.turns[-1].session_id] = when
    return store


def test_turns_of_sessions_in_or_just_after_the_period_get_the_bonus():
    store = dated_store(["1:00 pm on 20 May, 2022", "3:00 pm on 25 May, 2022", "9:00 am on 28 May, 2022",
                         "2:00 pm on 10 June, 2022"])
    base = {t: 1.0 for t in range(8)}
    on_day = Stage("period", 0.2, after_days=0, max_days=31)
    boosted = period_stage(base, on_day, ask(store, "What did Nate do for Joanna on 25 May, 2022?"))
    assert [round(boosted[t] - 1.0, 2) for t in range(8)] == [0, 0, 0.2, 0.2, 0, 0, 0, 0]
    after = Stage("period", 0.2, after_days=3, max_days=31)  # 28 May is told of the 25th
    boosted = period_stage(base, after, ask(store, "What did Nate do for Joanna on 25 May, 2022?"))
    assert [round(boosted[t] - 1.0, 2) for t in range(8)] == [0, 0, 0.2, 0.2, 0.2, 0.2, 0, 0]


def test_no_bonus_for_long_periods_undated_sessions_or_no_period():
    store = dated_store(["1:00 pm on 20 May, 2022", "3:00 pm on 25 May, 2022"])
    base = {t: 1.0 for t in range(4)}
    stage = PEER_CHAT.stage("period")
    assert period_stage(base, stage, ask(store, "What did Nate do in 2022?")) == base  # a year: too long
    assert period_stage(base, stage, ask(store, "What did Nate do for Joanna?")) == base
    assert period_stage(base, stage, ask(dated_store([None, None]), "What did Nate do on 25 May, 2022?")) == base
    # the question's own date resolves "yesterday"
    store.question_date = "26 May, 2022"
    boosted = period_stage(base, stage, ask(store, "What did Nate do yesterday?"))
    assert [round(boosted[t] - 1.0, 2) for t in range(4)] == [0, 0, 0.2, 0.2]


def test_search_lifts_the_dated_session_in_peer_chats_only():
    from submit.memory.embed import HashEmbedder
    from submit.memory.index import KeyIndex
    from submit.memory.retrieve import search
    question = "What did Nate do for Joanna on 25 May, 2022?"

    def ranked(store):
        embedder = HashEmbedder()
        index = KeyIndex(embedder)
        index.add_turns(store.turns)
        vector = embedder.embed_queries([question])[0]
        return [h.turn_idx for h in search(index, store, question, vector, profile=profile_of(store))]

    peers = dated_store(["1:00 pm on 20 May, 2022", "3:00 pm on 25 May, 2022", "2:00 pm on 10 June, 2022"])
    assert set(ranked(peers)[:2]) == {2, 3}  # the session of 25 May; nothing else tells them apart
    assistant = TurnStore()
    for sid, when in enumerate(["20 May, 2022", "25 May, 2022"], start=1):
        assistant.add_pair([Message("user", f"hi {sid}", sid), Message("assistant", "hello " * 120, sid)])
        assistant.session_dates[assistant.turns[-1].session_id] = when
    on = {h: i for i, h in enumerate(ranked(assistant))}
    assert on[0] < on[2]  # no bonus outside peer chats: the tie stays in turn order


@pytest.mark.parametrize("question, today", [
    ("What happened on 31 February 2023?", None),
    ("What happened on 0001-01-01 and last week?", D(1, 1, 1)),
    ("Where was I in December 9999 and on 9999-12-31?", D(9999, 12, 31)),
    ("What did I do yesterday?", D(1, 1, 1)),
    ("", D(2023, 5, 20)),
])
def test_odd_dates_give_a_valid_span_or_none(question, today):
    span = named_period(question, today)
    assert span is None or span[0] <= span[1]
