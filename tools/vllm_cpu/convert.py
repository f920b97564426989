"""A GGUF model as a Hugging Face folder vLLM can load: weights dequantized to bf16, tokenizer
with its chat template. Run by tools/vllm_cpu/setup.sh (step `model`):

    .vllm-cpu/python tools/vllm_cpu/convert.py MODEL.gguf OUT_DIR
"""
from __future__ import annotations

import argparse
import os
import sys


def convert(gguf: str, out: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    folder, name = os.path.dirname(os.path.abspath(gguf)), os.path.basename(gguf)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.bfloat16)
    partial = out + ".partial"  # a folder with config.json is a finished one (setup.sh skips it)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    os.replace(partial, out)
    params = sum(p.numel() for p in model.parameters())
    print(f"{out}: {model.config.architectures[0]}, {params / 1e6:.0f} M parameters, bf16, "
          f"max_position_embeddings {model.config.max_position_embeddings}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("gguf")
    p.add_argument("out")
    args = p.parse_args(argv)
    convert(args.gguf, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
