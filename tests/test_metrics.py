"""LoCoMo-Refined's F1 and BLEU-1 and best-of-several golds, on hand-computed values."""
import math

from local_eval import metrics


def test_refined_tokens_keep_punctuation_and_articles():
    assert metrics.refined_tokens("The cat, Luna!") == ["the", "cat", ",", "luna", "!"]


def test_refined_f1_and_bleu1_by_hand():
    # pred [she, went, on, 7, may, 2023, .] (7 tokens), ref [7, may, 2023]: overlap 3
    pred, ref = "She went on 7 May 2023.", "7 May 2023"
    assert metrics.refined_f1(pred, ref) == 2 * (3 / 7) * 1 / (3 / 7 + 1)  # = 0.6
    assert metrics.refined_bleu1(pred, ref) == 3 / 7  # c=7 >= r=3: no brevity penalty
    # shorter than the reference: p = 1, r = 2/3, brevity penalty exp(1 - 3/2)
    assert math.isclose(metrics.refined_f1("May 2023", ref), 0.8)
    assert metrics.refined_bleu1("May 2023", ref) == math.exp(1 - 3 / 2)
    # "the" counts here (SQuAD's token_f1 drops it): p = 1/2, r = 1
    assert metrics.refined_f1("the Luna", "Luna") == 2 * 0.5 / 1.5
    assert metrics.refined_f1("", "Luna") == metrics.refined_bleu1("Luna", "") == 0.0


def test_refined_scores_pick_one_candidate_for_both_numbers():
    assert metrics.refined_scores("last year", ["2022", "last year"]) == {"refined_f1": 1.0, "refined_bleu": 1.0}
    assert metrics.refined_scores("  ", ["2022"]) == {"refined_f1": 0.0, "refined_bleu": 0.0}
    # "x y z" vs "x": F1 2*(1/3)*1/(4/3) = 0.5, BLEU 1/3; vs the 8-token answer: overlap 3,
    # F1 2*1*(3/8)/(11/8) = 6/11, BLEU exp(1 - 8/3). The best F1 wins and brings its own BLEU.
    got = metrics.refined_scores("x y z", ["x", "x y z a b c d e"])
    assert got == {"refined_f1": 6 / 11, "refined_bleu": math.exp(1 - 8 / 3)}
    # the evaluator reads past a reasoning block and a "Final answer:" line
    assert metrics.refined_scores("<think>maybe 2021</think> 2022", ["2022"])["refined_f1"] == 1.0
    assert metrics.refined_scores("Work... Final answer: 2022", ["2022"])["refined_bleu"] == 1.0
    assert metrics.refined_prediction(r"so \boxed{7 {May}} 2023") == "7 {May}"


def test_lexical_score_takes_the_best_gold():
    assert metrics.lexical_score("Luna", ["Max", "Luna"], abstention=False) == {"f1": 1.0, "em": 1.0, "correct": 1.0}
    one = metrics.lexical_score("It was last year", ["2022", "last year"], abstention=False)
    assert one == {"f1": 2 * (2 / 4) * 1 / (2 / 4 + 1), "em": 0.0, "correct": 1.0}  # "it was last year": p 2/4, r 1
    assert metrics.lexical_score("Luna", "Luna", abstention=False)["em"] == 1.0  # one string still works
