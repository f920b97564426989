"""Nothing of the development sets ships (issue 58): no question, gold answer or evidence quote of
the dev set, the probes or the calibration source appears in the text of `submit/` (its code,
docstrings, comments, prompts and notes), and the versions prompt's example keys name nobody of the
sample dialogues.

`submit/calibration/*.jsonl` is left out on purpose: the calibration set ships by design, is built
from the calibration users and is tested elsewhere.

A string is compared normalised (lower case, ё as е, whitespace collapsed, punctuation and quotes
stripped at both ends), and only when it is at least `MIN_CHARS` long, so that «Да» or a bare name
does not trip it. A file is read the same way with comment markers dropped at line starts, so a
question a comment wraps over two lines is still found."""
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, SHARED_DATA
from submit.memory.lang import NO_INFO

MIN_CHARS = 12
SUBMIT = ROOT / "submit"
# Where the questions, golds and evidence quotes are read from: the shared ones only where
# ../shared/data is beside the checkout (their test skips without it); the others are the repository's.
SHARED_SOURCES = [
    SHARED_DATA / "gigamemory" / "format_example.jsonl",
    SHARED_DATA / "gigamemory" / "ru_dev_questions.jsonl",
    SHARED_DATA / "gigamemory" / "users" / "questions.jsonl",
]
REPO_SOURCES = [
    ROOT / "bench" / "fixtures" / "probe_lists_ru.jsonl",
    ROOT / "bench" / "fixtures" / "probe_versions_ru.jsonl",
    ROOT / "tools" / "calibration" / "questions_ru.jsonl",
]
SAMPLE = SHARED_DATA / "gigamemory" / "format_example.jsonl"
# Persons of the sample dialogues a prompt once used as example keys (dialogue 4's nephews): named
# here so the check holds where ../shared/data is missing too.
KNOWN_SAMPLE_NAMES = ("Коля", "Витя")
# The contest's own wording of a declined answer (the format example's gold for its `no_info`
# question, and the calibration golds): the answer the module must give, no dev content.
CONTEST_WORDING = set(NO_INFO.values())
_EDGE = " \t\r\n.,;:!?…«»\"'„“”()[]—–-"


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower().replace("ё", "е")).strip(_EDGE)


def dev_strings(path: Path) -> list[tuple[str, str, str, str]]:
    """(normalised, kind, record id, the string as written) for each question, gold answer and
    evidence quote of a JSONL file (and each list item and its quote, where the record has them)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        rid = str(row.get("id", f"line {n}"))
        found = [("question", row.get("question")), ("gold", row.get("ans"))]
        found += [("evidence", e.get("quote")) for e in row.get("evidence") or []]
        for item in row.get("items") or []:
            found += [("item", item.get("item")), ("evidence", item.get("quote"))]
        for kind, text in found:
            if isinstance(text, str) and len(normalise(text)) >= MIN_CHARS:
                out.append((normalise(text), kind, rid, text))
    return out


def shipped_files() -> list[Path]:
    files = set(SUBMIT.rglob("*.py")) | set((SUBMIT / "prompts").glob("*.yaml")) | set(SUBMIT.rglob("*.md"))
    return sorted(p for p in files if "__pycache__" not in p.parts and p.is_file())


def flattened(text: str) -> tuple[str, list[int]]:
    """The text normalised as one line (comment markers at line starts dropped), and for each of its
    characters the 1-based line it came from."""
    chars, lines = [], []
    for n, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"^\s*#+", "", line)
        for ch in line.lower().replace("ё", "е") + " ":
            if ch.isspace():
                if chars and chars[-1] == " ":
                    continue
                ch = " "
            chars.append(ch)
            lines.append(n)
    return "".join(chars), lines


def hits(sources: list[Path], files: list[Path] | None = None) -> list[str]:
    """One line per dev string found in a shipped file: file:line, kind, where it comes from, the
    string."""
    strings, exempt = {}, {normalise(text) for text in CONTEST_WORDING}
    for path in sources:
        for norm, kind, rid, text in dev_strings(path):
            if norm not in exempt:
                strings.setdefault(norm, (kind, f"{path.name} {rid}", text))
    out = []
    for file in shipped_files() if files is None else files:
        flat, lines = flattened(file.read_text(encoding="utf-8"))
        for norm, (kind, origin, text) in strings.items():
            for m in re.finditer(re.escape(norm), flat):
                where = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file
                out.append(f"{where}:{lines[m.start()]}: {kind} of {origin}: {text!r}")
    return sorted(out)


def test_the_sources_are_read():
    for path in REPO_SOURCES:
        kinds = {kind for _, kind, _, _ in dev_strings(path)}
        assert {"question", "gold"} <= kinds, f"{path}: no questions or golds read"
    assert any(kind == "evidence" for _, kind, _, _ in dev_strings(REPO_SOURCES[0]))
    assert shipped_files() and all(p.suffix in (".py", ".yaml", ".md") for p in shipped_files())
    assert not any(p.parent.name == "calibration" and p.suffix == ".jsonl" for p in shipped_files())


def test_a_wrapped_comment_is_found(tmp_path):
    source = tmp_path / "q.jsonl"
    source.write_text(json.dumps({"id": "x", "question": "Какого цвета мой велосипед?", "ans": "Да"},
                                  ensure_ascii=False) + "\n", encoding="utf-8")
    shipped = tmp_path / "m.py"
    shipped.write_text("x = 1\n# a question such as «Какого цвета\n    # мой Велосипед?» reads ...\n", encoding="utf-8")
    found = hits([source], [shipped])
    assert len(found) == 1 and ":2: question of q.jsonl x" in found[0], found
    shipped.write_text("# «Какого цвета мой самокат?»\n# Да\n", encoding="utf-8")
    assert hits([source], [shipped]) == []


def test_no_probe_or_calibration_string_ships():
    found = hits(REPO_SOURCES)
    assert not found, "dev strings in what ships:\n" + "\n".join(found)


def test_no_dev_or_sample_string_ships():
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    found = hits(SHARED_SOURCES)
    assert not found, "dev strings in what ships:\n" + "\n".join(found)


def sample_user_words() -> set[str]:
    words = set()
    with SAMPLE.open(encoding="utf-8") as f:
        for line in f:
            for session in json.loads(line)["sessions"]:
                for message in session["messages"]:
                    if message["role"] == "user":
                        words.update(re.findall(r"[А-ЯЁ][а-яё]+", message["content"]))
    return words


def example_key_names(text: str) -> list[tuple[int, str]]:
    """(line, name) for each capitalised part of a dotted example key (друг.Коля.работа)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for key in re.findall(r"\w+(?:\.\w+)+", line):
            out += [(n, part) for part in key.split(".")[1:] if part[:1].isupper()]
    return out


def test_no_prompt_names_a_sample_person():
    prompts = sorted((SUBMIT / "prompts").glob("*.yaml"))
    found = [f"{p.relative_to(ROOT)}:{n}: {name!r}" for p in prompts
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             for name in KNOWN_SAMPLE_NAMES if re.search(rf"(?<!\w){name}(?!\w)", line)]
    assert not found, "a sample dialogue's person in a prompt:\n" + "\n".join(found)


def test_the_versions_keys_name_nobody_of_the_sample():
    if not SAMPLE.is_file():
        pytest.skip("../shared/data is not beside the checkout")
    words = sample_user_words()
    assert set(KNOWN_SAMPLE_NAMES) <= words, "the sample's user messages are not read as expected"
    prompt = SUBMIT / "prompts" / "versions.ru.yaml"
    names = example_key_names(prompt.read_text(encoding="utf-8"))
    assert names, f"{prompt}: no example key with a name read"
    # a name also counts in another form of it (Арсений, Арсения, Арсению)
    found = [f"{prompt.relative_to(ROOT)}:{n}: {name!r} ({', '.join(sorted(same))})" for n, name in names
             if (same := {w for w in words if w == name or (len(name) > 3 and w.startswith(name[:-1])
                                                             and len(w) - len(name) <= 2)})]
    assert not found, "the versions prompt's example keys name a person of the sample dialogues:\n" + "\n".join(found)
