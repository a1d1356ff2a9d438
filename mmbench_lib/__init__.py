"""mmbench: evaluate multimodal LLMs on SEED-Bench, SEED-Bench-2, MMMU and CMMMU."""
__version__ = "0.1.0"
