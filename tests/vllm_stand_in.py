"""The vLLM stand-in (local_eval/shim/vllm) for tests: put in place of `vllm` (`install`), and a model
folder to give it (`write`): config.json and a real Hugging Face tokenizer, made in a second.

The tokenizer is a byte-level BPE (every text encodes and decodes back exactly) trained on the
demo dialogues and our prompt files, so a reply of a few words is a few tokens; its chat template
writes the messages as JSON, so a prompt rendered with it reads back into its messages exactly
(`messages_of`). What `AutoTokenizer.from_pretrained(folder)` and the vLLM stand-in read, as they
read a real model folder.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT / "local_eval" / "shim"
MODULES = ("vllm", "vllm.sampling_params", "vllm.outputs", "vllm.engine_args")
TEMPLATE = "{{ messages | tojson }}"
CONTEXT = 131072


def texts() -> list:
    found = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "submit" / "prompts").rglob("*")) if p.is_file()]
    found += [p.read_text(encoding="utf-8")[:200_000] for p in sorted((ROOT / "local_eval" / "data" / "demo").glob("*"))]
    return found + ['{"replaces": false}', '{"facts": []}', '{"answer": ""}', "У меня нет такой информации."]


def write(folder: Path) -> Path:
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts(), vocab_size=3000, min_frequency=2, show_progress=False)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, chat_template=TEMPLATE,
                                        model_max_length=CONTEXT)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(folder))
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2", "max_position_embeddings": CONTEXT}))
    return folder


def messages_of(prompt: str) -> list:
    """The messages a prompt rendered by this folder's template holds."""
    return json.loads(prompt)


def install(monkeypatch):
    """The stand-in as `vllm` for one test (taken away after it); returns the module, to `configure`."""
    monkeypatch.syspath_prepend(str(SHIM))
    for name in MODULES:  # each put back as it was when the test ends: gone, or what it was
        monkeypatch.setitem(sys.modules, name, None)
        del sys.modules[name]
    import vllm
    return vllm


class WordTokenizer:
    """One id per word, punctuation mark or whitespace character, the vocabulary growing as it meets
    them; decode gives the text back. The chat template is Qwen's shape."""

    def __init__(self):
        import re
        self.pattern = re.compile(r"\w+|[^\w\s]|\s", re.UNICODE)
        self.vocab: dict = {}
        self.words: list = []

    def encode(self, text: str, add_special_tokens: bool = True) -> list:
        ids = []
        for token in self.pattern.findall(text):
            if token not in self.vocab:
                self.vocab[token] = len(self.words)
                self.words.append(token)
            ids.append(self.vocab[token])
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return "".join(self.words[i] for i in ids)

    def apply_chat_template(self, chat, add_generation_prompt: bool = False, **_) -> list:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat)
        return self.encode(text + ("<|im_start|>assistant\n" if add_generation_prompt else ""))
