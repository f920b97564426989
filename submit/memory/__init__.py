"""The memory pipeline, one module per step:

turns (store) -> facts (extraction) -> slots (versions) -> index/retrieve -> context -> answer,
with the backends in `llm` and `embed`, and the whole per-dialogue flow in `dialogue`.
"""
