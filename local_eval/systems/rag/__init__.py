"""A plain retrieval baseline (see README.md beside this folder)."""
from .model_inference import SubmitModelWithMemory  # noqa: F401
