"""The timing profile splits answer_time into stages and projects the hidden set's total."""
from local_eval import profiler


def test_percentiles_are_nearest_rank():
    assert profiler.percentile([4, 1, 3, 2], 0.5) == 2
    assert profiler.percentile([4, 1, 3, 2], 0.9) == 4
    assert profiler.percentile([], 0.5) == 0.0


def test_stages_and_projection():
    rows = [{"answer_time": 10.0, "stats": {"timings": {"extract": 6.0, "answer": 2.0, "embed": 1.0}}},
            {"answer_time": 20.0, "stats": {"timings": {"extract": 15.0, "answer": 3.0}}}]
    prof = profiler.profile(rows, project_n=1000)
    assert prof["stages"]["extract"] == {"p50": 6.0, "p90": 15.0, "max": 15.0, "mean": 10.5}
    assert prof["stages"]["other"]["max"] == 2.0  # 20 - 15 - 3
    assert prof["projection"] == {"dialogues": 1000, "seconds": 15000.0, "hours": 4.17, "limit_hours": 7.0,
                                  "fits": True}


def test_the_projection_says_what_it_was_measured_under():
    rows = [{"answer_time": 1.0, "conditions": {"embed_cache_hits": 3, "embed_cache_misses": 1, "load_per_core": 0.5}},
            {"answer_time": 1.0, "conditions": {"embed_cache_hits": 0, "embed_cache_misses": 4, "load_per_core": 1.5}},
            {"answer_time": 1.0}]  # a row from before conditions were recorded
    under = profiler.profile(rows)["measured_under"]
    assert (under["embed_cache_hit_rate"], under["load_per_core"]) == (0.375, 1.0) and under["cores"] >= 1
    assert profiler.describe(under).startswith("embedding cache 38% warm, load 1.0 per core on ")
    uncached = [{"answer_time": 1.0, "conditions": {"embed_cache_hits": None, "embed_cache_misses": None,
                                                     "load_per_core": 2.0}}]
    assert profiler.describe(profiler.profile(uncached)["measured_under"]).startswith("no embedding cache, load 2.0")


def test_the_projection_is_the_contests_budget_on_this_backend_and_none_for_a_local_model():
    prof = profiler.profile([{"answer_time": 90.0}], project_n=1000)
    assert profiler.projection_note(prof, "llama:qwen2.5-coder-1.5b").startswith(
        "no projection against the contest's 7 h: --llm llama:qwen2.5-coder-1.5b is a local CPU model")
    assert profiler.projection_note(prof, "split:replay:d;llama:m").startswith("no projection")
    note = profiler.projection_note(prof, "openai:http://h:8000/v1#GigaChat")
    assert note.startswith("projected 25.0 h for 1000 dialogues against the contest's 7 h on its GPU "
                           "(does not fit), measured on this machine with --llm openai:http://h:8000/v1#GigaChat")


def test_extraction_a_llama_memo_answered_is_left_out_of_the_extract_stage():
    def row(extract_s, calls=100):
        return {"answer_time": extract_s + 1.0, "stats": {"timings": {"extract": extract_s},
                                                          "llm": {"by_purpose": {"extract": {"calls": calls}}}}}
    rows = [row(77.0), row(0.0033), row(0.002), row(60.0)]  # two dialogues, each asked twice
    assert profiler.uses_memo("llama:m") and not profiler.uses_memo("llama:m,memo=0")
    assert not profiler.uses_memo("replay:d")
    prof = profiler.profile(rows, memo=True)
    assert (prof["stages"]["extract"]["p50"], prof["stages"]["extract"]["p90"]) == (60.0, 77.0)
    assert prof["extract_memo_hits"] == 2 and "2 more reused" in profiler.extract_note(prof)
    plain = profiler.profile(rows)  # a replay: every record's own time, nothing set apart
    assert plain["stages"]["extract"]["p50"] == 0.0033 and plain["extract_memo_hits"] == 0
    assert profiler.extract_note(plain) == ""
