"""A run folder's manifest, OUT/run.json: the settings that shape its rows, so runs never mix.

    {"dataset", "data", "data_sha256", "mode", "settings": {...}, "code": [{"commit", "dirty"}],
     "merged_from": [...]}

Written when a run starts writing rows; a resume (or a --merge) whose dataset, data
content, mode or settings differ is refused, naming the fields. Selection options
(--limit, --shard, --types) are not settings: a resume may widen or narrow them. The
code version is recorded (every version that wrote rows) but never refused: a commit
between two passes should not strand a long run. Called by run.py.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import specs
from .errors import UsageError
from .options import OWN, RETIRED, ROWS, SETTINGS, TREE  # the options that shape the rows of each mode

MANIFEST = "run.json"


@dataclass(frozen=True)
class Manifest:
    dataset: str
    data: str  # the path as given; compared by content (data_sha256), not by name
    data_sha256: str
    mode: str
    settings: dict
    code: tuple = ()  # of {"commit": str | None, "dirty": bool | None}, every version that wrote rows
    merged_from: tuple = ()  # source folders, for a --merge

    def differences(self, other: "Manifest") -> list[str]:
        """`field: old -> new` for every field that shapes rows and differs."""
        pairs = [("dataset", self.dataset, other.dataset), ("data", self.data_sha256, other.data_sha256),
                 ("mode", self.mode, other.mode)]
        keys = list(dict.fromkeys([*self.settings, *other.settings]))
        pairs += [(k, self.settings.get(k), other.settings.get(k)) for k in keys]
        return [f"{name}: {_show(name, a, self)} -> {_show(name, b, other)}" for name, a, b in pairs if a != b]

    def with_code(self, version: dict) -> "Manifest":
        return self if version in self.code else dataclasses.replace(self, code=(*self.code, version))


def _show(name: str, value, manifest: Manifest) -> str:
    return f"{manifest.data} (sha256 {value[:12]})" if name == "data" else json.dumps(value)


def of_run(options, data: Path) -> Manifest:
    """The manifest of this invocation: the data file's content and the options of its mode."""
    names = SETTINGS[options.mode]
    if options.submission:  # another submission reads none of our own settings (options.OWN refuses them)
        names = [name for name in names if name not in OWN]
    values = {name: getattr(options, name) for name in names}
    if options.submission:  # keyed on the folder's files, not its path: an edited folder is another run
        from .submission import fingerprint, package_dir
        values["submission"] = "files sha256 " + fingerprint(package_dir(options.submission))
    for name in ("llm", "judge"):
        if name in values:
            values[name] = specs.identity(values[name])
    refined = options.refined  # LoCoMo-Refined's questions: another question set
    values["refined_sha256"] = sha256(Path(refined)) if refined and Path(refined).is_file() else None
    return Manifest(dataset=options.dataset, data=str(data), data_sha256=sha256(data), mode=options.mode,
                    settings=values, code=(code_version(),))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_version(root: Optional[Path] = None) -> dict:
    """`git rev-parse HEAD` and whether the tree has changes; None for both where git is absent."""
    root = root or Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                                timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if head.returncode or status.returncode:
        return {"commit": None, "dirty": None}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def read(out: Path) -> Optional[Manifest]:
    """The folder's manifest, None when it has none; a damaged one is the user's to resolve."""
    path = out / MANIFEST
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Manifest(**{**raw, "code": tuple(raw.get("code", ())),
                           "merged_from": tuple(raw.get("merged_from", ()))})
    except (ValueError, TypeError) as e:
        raise UsageError(f"{path} is damaged ({e}); pass --fresh to start over, or another --out") from None


def write(out: Path, manifest: Manifest) -> None:
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dataclasses.asdict(manifest), ensure_ascii=False, indent=1)
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)  # never a half-written manifest


def check(out: Path, new: Manifest, products: tuple) -> Optional[Manifest]:
    """The folder's manifest when it matches `new`; UsageError when the settings differ, or when
    the folder holds results (`products`) but no manifest to compare with."""
    old = read(out)
    if old is None:
        found = [name for name in products if (out / name).exists()]
        if found:
            raise UsageError(f"{out} holds {found[0]} but no {MANIFEST} (made before manifests), so its "
                             "settings are unknown; pass --fresh to start over there, or another --out")
        return None
    diff = with_new_settings(old, new).differences(new)
    changed = [line for line in diff if line.startswith("submission:")]
    if changed:
        raise UsageError(f"{out} holds rows of the submission folder as its files were before ({changed[0]}); "
                         "its files have changed since, and rows of two versions are not mixed: pass --fresh to "
                         "start over there, or another --out")
    if diff:
        raise UsageError(f"{out} was made with other settings ({'; '.join(diff)}); pass --fresh to start "
                         "over there, or another --out")
    return old


def with_new_settings(old: Manifest, new: Manifest) -> Manifest:
    """`old` with every setting it predates at the settings tree's default (a knob added after a run
    was made is what that run was made with, so the run may go on where it is left at its default),
    and without each setting that has left the code where it holds the value the code behaves as
    since (`options.RETIRED`)."""
    added = {name: ROWS[name].start() for name in new.settings
             if name not in old.settings and name in ROWS and ROWS[name].default is TREE}
    current = _current(old)
    return dataclasses.replace(current, settings={**added, **current.settings}) if added else current


def _current(manifest: Manifest) -> Manifest:
    """The manifest without the settings that left the code, where each holds the value the code has
    behaved as since (`options.RETIRED`)."""
    kept = {name: value for name, value in manifest.settings.items()
            if name not in RETIRED or RETIRED[name] != value}
    return dataclasses.replace(manifest, settings=kept) if kept != manifest.settings else manifest


def common(sources: list, out: Path) -> Manifest:
    """The manifest several shard folders share, for their merge into `out`; a UsageError naming
    the folder (and the differing fields) for a source that is missing, unknown or different."""
    found = [_source(source, out) for source in sources]
    first = found[0]
    for source, other in zip(sources[1:], found[1:]):
        diff = _current(first).differences(_current(other))  # a shard made before a setting left: the same
        if diff:
            raise UsageError(f"--merge {source}: its settings differ from {sources[0]}'s ({'; '.join(diff)})")
    merged = dataclasses.replace(_current(first), code=(), merged_from=tuple(str(s) for s in sources))
    for version in (v for m in found for v in m.code):
        merged = merged.with_code(version)
    return merged


def _source(source: Path, out: Path) -> Manifest:
    if not source.is_dir():
        raise UsageError(f"--merge {source}: no such folder")
    if source.resolve() == out.resolve():
        raise UsageError(f"--merge {source}: it is also --out; merge into a new folder")
    found = read(source)
    if found is None:
        raise UsageError(f"--merge {source}: no {MANIFEST}, so its settings are unknown; only runs "
                         "made with manifests merge")
    if found.mode != "answer":
        raise UsageError(f"--merge {source}: a {found.mode} run; only answer runs have rows to merge")
    return found
