"""The contest submission: the harness does `from submit import SubmitModelWithMemory`."""
from .model_inference import SubmitModelWithMemory

__all__ = ["SubmitModelWithMemory"]
