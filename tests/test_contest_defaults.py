"""The contest's defaults, pinned by their literal values: a change to any field of the settings
tree a contest run starts from (`Config()`, and `Config.from_env()` with no GIGAMEMORY_* variable)
fails here, whatever the options table or the bench scripts say, since they start from the same
tree. A deliberate change updates this table in the same commit, and the commit says why."""
from submit.config import ENV, Config, leaves

CONTEST = {
    "llm": "auto", "embedder": "auto", "embed_cache_dir": None, "embedder_fallback": True, "time_budget": True,
    "vllm_max_model_len": 131072,
    "memory.context_chars": 8000, "memory.max_turn_chars": 1200, "memory.answer_max_tokens": 100,
    "memory.facts": True, "memory.extract_max_tokens": 256, "memory.extract_filter": "all", "memory.versions": True,
    "memory.versions_max_tokens": 256, "memory.versions_check": True, "memory.shorten": False,
    "memory.calibration_cache": "", "memory.gate": "calibrated", "memory.gate_max_false": 0.05,
    "memory.gate_no_answer_share": 0.25, "memory.gate_min_auc": 0.7, "memory.calibration_dir": "", "memory.decline_speaker": True, "memory.lists": "list", "memory.max_fact_lines": 30, "memory.fact_chars": 2400,
    "memory.nearest_facts_first": 5, "memory.topic_labels": 1, "memory.fact_turns_min_ratio": 2.0,
    "memory.index.chunk_chars": 600, "memory.index.max_chunks": 3, "memory.index.assistant_dense_max_chars": 400,
    "memory.retrieve.method": "hybrid", "memory.retrieve.lexical_weight": 0.1,
    "memory.retrieve.lexical_only_weight": 0.05, "memory.retrieve.assistant_question_weight": 0.3,
    "memory.profiles.peer.kind": "peer", "memory.profiles.peer.extract_roles": ("user", "assistant"),
    "memory.profiles.peer.fact_context": "turn", "memory.profiles.peer.named": True,
    "memory.profiles.peer.extract_prompt": "extract_peer", "memory.profiles.peer.answer_prompt": "answer_peer",
    "memory.profiles.peer.query.nameless_weight": 1.0, "memory.profiles.peer.query.centroid_weight": 0.3,
    "memory.profiles.peer.query.hits": 2, "memory.profiles.peer.query.hit_weight": 0.2,
    "memory.profiles.peer.stages.neighbour.name": "neighbour", "memory.profiles.peer.stages.neighbour.weight": 0.5,
    "memory.profiles.peer.stages.neighbour.after_days": 0, "memory.profiles.peer.stages.neighbour.max_days": 0,
    "memory.profiles.peer.stages.session.name": "session", "memory.profiles.peer.stages.session.weight": 0.5,
    "memory.profiles.peer.stages.session.after_days": 0, "memory.profiles.peer.stages.session.max_days": 0,
    "memory.profiles.peer.stages.speaker.name": "speaker", "memory.profiles.peer.stages.speaker.weight": 0.12,
    "memory.profiles.peer.stages.speaker.after_days": 0, "memory.profiles.peer.stages.speaker.max_days": 0,
    "memory.profiles.peer.stages.period.name": "period", "memory.profiles.peer.stages.period.weight": 0.2,
    "memory.profiles.peer.stages.period.after_days": 3, "memory.profiles.peer.stages.period.max_days": 31,
    "memory.profiles.peer.stages.favoured.name": "favoured", "memory.profiles.peer.stages.favoured.weight": 0.05,
    "memory.profiles.peer.stages.favoured.after_days": 0, "memory.profiles.peer.stages.favoured.max_days": 0,
    "memory.profiles.assistant.kind": "assistant", "memory.profiles.assistant.extract_roles": ("user",),
    "memory.profiles.assistant.fact_context": "exchange", "memory.profiles.assistant.named": False,
    "memory.profiles.assistant.extract_prompt": "extract", "memory.profiles.assistant.answer_prompt": "answer",
    "memory.profiles.assistant.query.keys": 3, "memory.profiles.assistant.query.weight": 0.5,
    "memory.profiles.assistant.query.terms": 5, "memory.profiles.assistant.query.terms_weight": 1.0,
    "memory.profiles.assistant.stages.session.name": "session",
    "memory.profiles.assistant.stages.session.weight": 0.3,
    "memory.profiles.assistant.stages.session.after_days": 0,
    "memory.profiles.assistant.stages.session.max_days": 0,
    "memory.profiles.assistant.stages.speaker.name": "speaker",
    "memory.profiles.assistant.stages.speaker.weight": 0.12,
    "memory.profiles.assistant.stages.speaker.after_days": 0,
    "memory.profiles.assistant.stages.speaker.max_days": 0,
    "memory.profiles.assistant.stages.favoured.name": "favoured",
    "memory.profiles.assistant.stages.favoured.weight": 0.05,
    "memory.profiles.assistant.stages.favoured.after_days": 0,
    "memory.profiles.assistant.stages.favoured.max_days": 0,
    "budget.hours": 6.5, "budget.expected_dialogues": 1200, "budget.answer_ceiling_s": 150.0,
    "budget.ceiling_share": 0.7, "budget.window": 20, "budget.calibration_prompts": 16, "budget.min_top_turns": 4,
    "budget.remeasure_every": 10,
}


def test_the_contest_starts_from_these_values():
    assert leaves(Config()) == CONTEST


def test_the_contest_environment_without_variables_gives_the_same_values(monkeypatch):
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    assert leaves(Config.from_env()) == CONTEST
    assert leaves(Config.from_env({})) == CONTEST
