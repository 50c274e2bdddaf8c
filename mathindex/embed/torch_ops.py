"""The torch side of an embedder: tokenising, one padded forward pass to unit vectors, int8
quantisation, bf16 support. torch is imported inside each function: it is the heavy optional
dependency that a server encoding queries through ONNX (embed/queries.py) never loads."""

from __future__ import annotations

import numpy as np


def forward(model, tokenizer, encoded: dict, idx, device, bf16: bool = False) -> np.ndarray:
    """Unit vectors of the pre-tokenised rows `idx` of `encoded`, padded as one batch; `bf16`: the
    matrix products in bfloat16 with float32 accumulation (torch autocast: layer norms, softmax and
    pooling stay float32)."""
    import torch  # heavy, optional: only an embedder that runs on torch gets here

    rows = [{k: encoded[k][i] for k in encoded} for i in idx]
    features = tokenizer.pad(rows, padding=True, return_tensors="pt")
    features = {k: v.to(device) for k, v in features.items()}
    autocast = torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=bf16)
    with torch.inference_mode(), autocast:
        emb = model.forward(features)["sentence_embedding"]
        emb = torch.nn.functional.normalize(emb, p=2, dim=1)
    return emb.float().cpu().numpy()


def tokenise(tokenizer, texts: list[str], max_length: int) -> dict:
    return dict(tokenizer(texts, truncation=True, max_length=max_length, padding=False,
                          return_attention_mask=True, return_token_type_ids=True))


def quantise_int8(model):
    """The model with every Linear layer in int8 (per output channel weights, activations quantised
    per batch at run time); embeddings, layer norms and attention products stay float."""
    import torch  # heavy, optional: only an embedder that runs on torch gets here
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic  # heavy, optional: as torch

    return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, inplace=True)


def native_bf16() -> bool:
    """Whether this CPU has bfloat16 matrix units (AVX512-BF16 or AMX) that oneDNN uses; without
    them bf16 still gives the same vectors, only slower than fp32."""
    import torch  # heavy, optional: only an embedder that runs on torch gets here

    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else False
    except RuntimeError:
        return False
