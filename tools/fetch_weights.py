"""Fetch an embedder into submit/weights/ (needs internet and huggingface_hub): `make weights`.

    .venv/bin/python tools/fetch_weights.py intfloat/multilingual-e5-large

The default, multilingual-e5-large, is the strongest e5 for Russian that fits the A100
beside GigaChat (560M parameters, ~2.2 GB); the submission's `auto` embedder picks the
first model folder in submit/weights/ and loads it offline.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = "intfloat/multilingual-e5-large"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", default=DEFAULT, help="a model id on the Hugging Face hub")
    p.add_argument("--dest", default=str(ROOT / "submit" / "weights"))
    args = p.parse_args(argv)
    target = Path(args.dest) / args.model.split("/")[-1]
    try:
        from huggingface_hub import snapshot_download
        snapshot_download(args.model, local_dir=str(target),
                          allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model", "1_Pooling/*",
                                          "sentencepiece*", "tokenizer*"])
    except Exception as error:  # no hub here: say so plainly
        raise SystemExit(f"could not fetch {args.model} (needs internet and huggingface_hub): "
                         f"{type(error).__name__}: {error}")
    print(f"{args.model} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
