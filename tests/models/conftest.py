"""Real-model tests: offline, one thread, small sizes (T <= 64, at most 2 layers)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
