"""The shorten step: a second call cuts the answer to what the question asks, and the cut is
kept only when it is shorter and made of the draft's own words."""
import pytest

from submit.memory.answer import NO_INFO, shorten_prompt, shortened
from submit.memory.dialogue import Settings
from models import Message

from conftest import make_model

Q = "Where will Tim go for a semester abroad?"
DRAFT = "Ireland (Galway), where he will study literature for a semester."


def test_a_cut_made_of_the_drafts_words_is_kept():
    assert shortened(DRAFT, Q, "Ireland.") == "Ireland."
    assert shortened("Getting more endorsements and building his brand.", "What are his goals?",
                     "Get endorsements, build his brand.") == "Get endorsements, build his brand."


@pytest.mark.parametrize("reply", [
    "Dublin.",                   # a word the draft does not have: invented, not cut
    "No.",                       # a yes/no the draft never said
    DRAFT + " He is excited.",   # longer: nothing was cut
    "",                          # empty reply
    '"..."',                     # no letter or digit
])
def test_a_cut_that_invents_or_does_not_cut_leaves_the_draft(reply):
    assert shortened(DRAFT, Q, reply) == DRAFT


def test_short_drafts_and_the_no_information_reply_are_not_sent():
    assert shorten_prompt(Q, "Ireland, for a semester.", "en") is None
    assert shorten_prompt(Q, NO_INFO["en"], "en") is None
    chat = shorten_prompt(Q, DRAFT, "en")
    assert Q in chat[-1]["content"] and DRAFT in chat[-1]["content"]


def dialogue(model):
    model.write_to_memory([Message("user", "Я живу в Томске, в старом доме у реки", 1),
                           Message("assistant", "Как здорово!", 1)], "d")


def test_the_answer_is_cut_when_the_step_is_on_and_the_call_is_counted():
    model, llm = make_model(['{"facts": []}', "Вы живёте в Томске, в старом доме у реки.", "В Томске."],
                            memory=Settings(shorten=True))
    dialogue(model)
    assert model.answer_to_question("d", "В каком городе я живу?") == "В Томске."
    assert "Черновик ответа: Вы живёте в Томске, в старом доме у реки." in llm.history[-1][0][-1]["content"]
    assert model.memory_stats("d")["llm"]["by_purpose"]["shorten"]["calls"] == 1


def test_the_step_is_off_by_default_as_in_the_contest():
    model, llm = make_model(['{"facts": []}', "Вы живёте в Томске, в старом доме у реки."])
    dialogue(model)
    assert model.answer_to_question("d", "В каком городе я живу?") == "Вы живёте в Томске, в старом доме у реки."
    assert "shorten" not in model.memory_stats("d")["llm"]["by_purpose"]
    assert len(llm.history) == 3  # extraction, the answer, its cite
