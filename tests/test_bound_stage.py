"""The bound stage, replayed from its recordings (bench/bound.py): its reply read as it was, and its
listed items joined only where the question asks for several things."""
import json

from bench import bound
from submit.memory.decide import Switches

LIST_LINES = [("хобби", "Пользователь увлекается фотографией."), ("хобби", "Пользователь ходит в бассейн."),
              ("хобби", "Пользователь вяжет.")]


def test_parse_reads_the_fields_and_keeps_what_a_cut_reply_completed():
    whole = json.dumps({"quotes": ["Пользователь работает бухгалтером"], "answer": "Вы бухгалтер.", "items": []},
                       ensure_ascii=False)
    said = bound.Bound("Вы бухгалтер.", ("Пользователь работает бухгалтером",))
    assert bound.parse(whole) == said
    assert bound.parse(whole[:whole.index("\"items\"") + 4]) == said
    # a quote cut by the token cap keeps its whole words, and no answer was completed
    assert bound.parse('{"quotes": ["Пользователь работает", "и ещё') == bound.Bound(None, ("Пользователь работает", "и"))
    assert bound.parse("Вы бухгалтер.") == bound.Bound("Вы бухгалтер.")  # no JSON: an answer without quotes
    assert bound.parse("") == bound.Bound(None)
    assert bound.ask("ru").startswith("Ответь в JSON") and bound.SCHEMA["required"] == ["quotes", "answer", "items"]


def test_items_are_joined_only_to_a_question_for_several_things_and_only_where_they_stand():
    listed = bound.Bound("Вы увлекаетесь фотографией.", ("увлекается фотографией", "ходит в бассейн"),
                         items=("фотография", "бассейн", "шахматы"))
    verdict = bound.decided("Какие у меня хобби?", listed, LIST_LINES, Switches())
    assert verdict.text == "Вы увлекаетесь фотографией (также: бассейн)." and not verdict.declined
    choice = bound.Bound("Вы выбрали фотографию.", ("увлекается фотографией",), items=("фотография", "бассейн"))
    none = Switches(frozenset())  # no check: the items' joining alone
    assert bound.decided("Какое у меня хобби — фотография или бассейн?", choice, LIST_LINES,
                         none).text == "Вы выбрали фотографию."
    assert bound.decided("Где я живу?", listed, LIST_LINES, none).text == "Вы увлекаетесь фотографией."
    # a declined answer gets no items: quoting nothing, it rests on no line
    assert bound.decided("Какие у меня хобби?", bound.Bound("Вы вяжете.", items=("вязание", "бассейн")),
                         LIST_LINES, Switches()).declined_by == "unquoted"
