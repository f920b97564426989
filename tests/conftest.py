import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))
import local_eval  # noqa: E402,F401  (puts the contest stand-ins `models`, `submit_interface` on sys.path)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    return SHARED_DATA


def make_model(replies=(), embedder="hash", **config):
    """A submission on the scripted LLM and the hash embedder: the real code path, no model."""
    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.llm import ScriptedLLM
    llm = ScriptedLLM(replies)
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder=embedder, **config), llm=llm)
    return model, llm
