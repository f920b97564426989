"""tools/vllm_cpu/setup.sh's `house` step on a fresh environment: a full vLLM build is far too slow
for the tests, but the step that makes the house importable there (issue 37: `make vllm-rehearsal`
failed at once with "No module named 'local_eval'") is not."""
import os
import subprocess
import venv

from conftest import ROOT

SETUP = ROOT / "tools" / "vllm_cpu" / "setup.sh"


def test_the_house_step_makes_the_project_importable_from_anywhere(tmp_path):
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    script = 'source "$1" && D="$2" && PIP="$D/venv/bin/python -m pip --quiet" && step_house'
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(["bash", "-c", script, "setup", str(SETUP), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"house: local_eval -> {ROOT / 'local_eval' / '__init__.py'}" in done.stdout
    # and really imported, from elsewhere, by the environment's own Python (the two with no dependencies)
    code = "import models, submit_interface; print(models.__file__, submit_interface.ModelWithMemory.__name__)"
    imported = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert imported.stdout.split() == [str(ROOT / "local_eval" / "contest" / "models.py"), "ModelWithMemory"]


def test_sourcing_the_script_runs_no_step(tmp_path):
    """Sourced, it only defines its steps (the test above and docker_rehearsal rely on it)."""
    done = subprocess.run(["bash", "-c", 'source "$0" && declare -F step_house base_python', str(SETUP)],
                          env={**os.environ, "VLLM_CPU_DIR": str(tmp_path)}, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split() == ["step_house", "base_python"]
    assert list(tmp_path.iterdir()) == []  # no step ran: nothing was written into VLLM_CPU_DIR
