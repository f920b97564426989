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
