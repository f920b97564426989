"""The organizers' baseline (ai-forever/memory_aij2025, src/submit/model_inference.py), restated with
its prompt text, message layout and sampling unchanged: every message of the dialogue, as
`role: content` lines, in one system message; the instruction «Отвечай КРАТКО …» and the question
as the user message; the tokenizer's chat template; greedy decoding of at most 100 tokens with
`truncate_prompt_tokens=131072`. An error in inference comes back as the answer text, as there."""
from collections import defaultdict
from dataclasses import asdict
from typing import List

from transformers import AutoTokenizer
from vllm import LLM, SamplingParams

from models import Message
from submit_interface import ModelWithMemory

SYSTEM = ("Твоя задача - ответить на вопрос пользователя. Для этого тебе подается на вход твоя история общения "
          "с пользователем.Пользователь разрешил использовать ее для ответа на вопрос. Используй историю диалога, "
          "чтобы ответить на вопрос.\nИстория диалога: \n{memory}")
ASK = "Отвечай КРАТКО без предложений и размышлений, используй ТОЛЬКО ОДНО предложение для ответа.\n"


class SubmitModelWithMemory(ModelWithMemory):
    def __init__(self, model_path: str) -> None:
        self.memory = defaultdict(list)
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)
        self.model = LLM(model=model_path, trust_remote_code=True)
        self.sampling_params = SamplingParams(temperature=0.0, max_tokens=100, seed=42, truncate_prompt_tokens=131072)

    def write_to_memory(self, messages: List[Message], dialogue_id: str) -> None:
        self.memory[dialogue_id] += messages

    def clear_memory(self, dialogue_id: str) -> None:
        self.memory[dialogue_id] = []

    def answer_to_question(self, dialogue_id: str, question: str) -> str:
        history = "\n".join(f"{m.role}: {m.content}" for m in self.memory.get(dialogue_id, []))
        chat = [Message("system", SYSTEM.format(memory=history)), Message("user", ASK + question)]
        try:
            ids = self.tokenizer.apply_chat_template([asdict(m) for m in chat], add_generation_prompt=True)
            outputs = self.model.generate(prompt_token_ids=ids, sampling_params=self.sampling_params, use_tqdm=False)
            return outputs[0].outputs[0].text.strip()
        except Exception as e:
            return f"Ошибка при инференсе локальной модели: {str(e)}"
