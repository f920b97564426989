"""LLM backends of local evaluation: the contest's own, plus what only evaluation needs.

Every kind `submit/memory/llm_backends.py` knows (`scripted`, `vllm`, `hf`), and, none of which
ships in the contest zip: `openai:` (`openai.py`), the reply stores `cache:`, `replay:`,
`collect:` (`store.py`), `fixture:` (`fixture.py`), `split:` (`split.py`) and `llama:`
(`llama.py`, docs/local_model.md). Their specs and the one table of kinds: `local_eval/specs.py`,
whose `make_llm(spec)` builds any of them. Built for `local_eval/run.py` (readers and judges),
`tools/` and `bench/`.
"""
