"""The organizers' baseline, restated (see README.md beside this folder)."""
from .model_inference import SubmitModelWithMemory  # noqa: F401
