"""The device a model's inputs go to.

One device: where its parameters are. Dispatched by accelerate (``device_map``): the execution
device of the input embeddings (the first module a token meets), not ``model.device`` (the first
parameter's, which is ``meta`` when that module's weights are offloaded to CPU or disk).
Accelerate's hooks move activations between the later modules; scores are brought back with
``.cpu()`` by the scorers.
"""
from __future__ import annotations

import torch

from mmbench_lib.scoring.hf_internals import hook_device


def _hook_device(module):
    return hook_device(module)


def input_device(model) -> torch.device:
    """Where input ids, masks and pixel values go (see module doc)."""
    try:
        emb = model.get_input_embeddings()
    except (AttributeError, NotImplementedError):
        emb = None
    if emb is not None and getattr(model, "hf_device_map", None):
        path = next((n for n, m in model.named_modules() if m is emb), "")
        hooked = [(len(n), _hook_device(m)) for n, m in model.named_modules()
                  if n and (path == n or path.startswith(n + ".")) and _hook_device(m) is not None]
        if hooked:  # the innermost hooked module holding the embeddings
            return max(hooked, key=lambda x: x[0])[1]
    if emb is not None and getattr(emb, "weight", None) is not None and emb.weight.device.type != "meta":
        return emb.weight.device
    for p in model.parameters():
        if p.device.type != "meta":
            return p.device
    return torch.device("cpu")


def to_device(t: torch.Tensor, device) -> torch.Tensor:
    """``t`` on ``device``; a CPU tensor bound for a GPU goes through pinned memory without blocking the host
    (the copy is ordered on the device's stream before any kernel that reads it)."""
    device = torch.device(device)
    if device.type == "cuda" and t.device.type == "cpu":
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)
