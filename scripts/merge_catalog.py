"""Append researched rows (models, heads, drafts, GPUs) to the embedded catalog and apply head corrections.

One-off maintenance script, not part of the installed package; run it after
``scripts/build_catalog.py`` (which rebuilds the first 55 models / 61 heads / 21 GPUs
from the team's fact tables). New rows go after the existing ones so every
existing name keeps resolving to the row it resolved to before
(``tests/test_catalog.py`` checks it). Each appended row keeps its own ``source``.

What the script changes on the way in, and why (also listed in tools/data/README.md):
- rows whose verifier cannot be named, or whose model cannot be verified, are dropped (DROP_HEADS);
- EAGLE-1 heads keep trtllm in runtimes (TRT-engine backend) with the restriction in engine_versions
  (TRTLLM_ENGINE_ONLY) rather than losing it, as their correction rows asked;
- a method name outside the catalog's set is mapped to the method the engines load it as (METHOD_FIX);
- draft rows name the verifier family as models.csv spells it (FAMILY_FIX);
- hybrid-layer fields and ``params_note`` are filled per model (HYBRID, PARAMS_NOTE) from each row's notes
  (config ``full_attention_interval`` / ``hybrid_override_pattern``) and the config shapes cited there.

Usage: python scripts/merge_catalog.py STAGING_DIR tools/data
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

NEW_MODEL_FIELDS = [
    "linear_attention_layer_fraction", "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel", "attn_output_gate", "hybrid_note", "params_note",
]

QWEN_NEXT_GDN = dict(linear_attention_layer_fraction=0.75, linear_num_key_heads=16, linear_num_value_heads=32,
                     linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel=4, attn_output_gate="true",
                     hybrid_note="Gated DeltaNet: 3 of 4 layers linear attention (full_attention_interval=4)")
QWEN35_FRACTION = dict(linear_attention_layer_fraction=0.75, attn_output_gate="true",
                       hybrid_note="Gated DeltaNet: 3 of 4 layers linear attention (full_attention_interval=4)")
_GDN_27B_SRC = ("Qwen3.5-27B text_config (qwen3_5_text) linear_num_key_heads 16, linear_num_value_heads 48, "
                "linear_key/value_head_dim 128, linear_conv_kernel_dim 4, attn_output_gate true, as reproduced in "
                "public code building Qwen3_5Config for the 27B shape (the Qwen3.6-27B config has the same fields)")


def _mamba(attention_layers: int, layers: int, pattern: str) -> dict[str, str | float]:
    return dict(linear_attention_layer_fraction=round(1 - attention_layers / layers, 4),
                hybrid_note=f"Mamba-2 hybrid ({pattern}): only {attention_layers} of {layers} layers hold a KV cache")


# repo_id -> hybrid-layer fields. Values from the row's own notes (which cite the config) unless stated.
HYBRID: dict[str, dict] = {
    **{r: QWEN_NEXT_GDN for r in ("Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3-Next-80B-A3B-Thinking",
                                   "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8")},
    "Qwen/Qwen3.5-397B-A17B": {**QWEN_NEXT_GDN, "linear_num_value_heads": 64},
    "Qwen/Qwen3.5-27B": {**QWEN_NEXT_GDN, "linear_num_value_heads": 48},
    **{r: QWEN35_FRACTION for r in ("Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-4B", "Qwen/Qwen3.5-0.8B")},
    "MiniMaxAI/MiniMax-M1-80k": dict(linear_attention_layer_fraction=0.875,
                                     hybrid_note="lightning (linear) attention in 7 of every 8 layers"),
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2": _mamba(4, 56, "27 Mamba-2, 4 attention, 25 MLP layers"),
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2": _mamba(6, 62, "28 Mamba-2, 6 attention, 28 MLP layers"),
    "nvidia/Nemotron-H-8B-Base-8K": _mamba(4, 52, "24 Mamba-2, 4 attention, 24 MLP layers"),
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": _mamba(6, 52, "23 Mamba-2, 23 MoE, 6 attention layers"),
}
# Extra arch_source text for rows whose hybrid shapes come from somewhere other than the row's notes.
ARCH_SOURCE_EXTRA = {"Qwen/Qwen3.5-27B": _GDN_27B_SRC}

_NOMINAL = "card size is a nominal label; config arithmetic gives {0}B"
# repo_id -> why the counter cannot reproduce the published total (tests/test_params.py reads this column).
PARAMS_NOTE: dict[str, str] = {
    "Qwen/Qwen3.5-9B": "Gated DeltaNet head counts not in the sources read; linear layers counted as GQA; "
                       "card total includes a vision tower of approximate size",
    "Qwen/Qwen3.5-4B": "Gated DeltaNet head counts not in the sources read; linear layers counted as GQA; "
                       "card total includes a vision tower of approximate size",
    "Qwen/Qwen3.5-0.8B": "Gated DeltaNet head counts not in the sources read; linear layers counted as GQA; "
                         "card total includes a vision tower of approximate size",
    "MiniMaxAI/MiniMax-M1-80k": "lightning-attention layers carry gate/projection weights the GQA formula misses "
                                "(total within 2.1%, active 38.7B vs card 45.9B)",
    "nvidia/Llama-3_3-Nemotron-Super-49B-v1_5": "NAS-heterogeneous blocks (some without attention, varied FFN "
                                                "widths) cannot be expressed; fields are the 70B parent's",
    "google/gemma-3n-E4B-it": "per-layer embeddings, AltUp/LAuReL and audio/vision encoders are outside the "
                              "counter; computed value is the core decoder ('effective' size)",
    "google/gemma-3n-E2B-it": "per-layer embeddings, AltUp/LAuReL and audio/vision encoders are outside the "
                              "counter; computed value is the core decoder ('effective' size)",
    "google/gemma-4-E4B-it": "per-layer embeddings and audio/vision encoders are outside the counter",
    "google/gemma-4-E2B-it": "per-layer embeddings and audio/vision encoders are outside the counter",
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2": "Mamba-2 and squared-ReLU (non-gated) MLP layers are not modelled",
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2": "Mamba-2 and squared-ReLU (non-gated) MLP layers are not modelled",
    "nvidia/Nemotron-H-8B-Base-8K": "Mamba-2 and squared-ReLU (non-gated) MLP layers are not modelled",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": "Mamba-2 layers and non-gated squared-ReLU experts are not "
                                                  "modelled",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16": "LatentMoE (experts in a 1024-wide latent space) and Mamba-2 "
                                                     "layers are not modelled",
    "baidu/ERNIE-4.5-21B-A3B-PT": _NOMINAL.format(21.8),
    "baidu/ERNIE-4.5-21B-A3B-Thinking": _NOMINAL.format(21.8),
    "moonshotai/Kimi-K2-Instruct": _NOMINAL.format(1026),
    "moonshotai/Kimi-K2-Instruct-0905": _NOMINAL.format(1026),
    "moonshotai/Kimi-K2-Base": _NOMINAL.format(1026),
    "moonshotai/Kimi-K2-Thinking": _NOMINAL.format(1026),
    "moonshotai/Kimi-K2.5": _NOMINAL.format(1027),
    "inclusionAI/Ling-flash-2.0": _NOMINAL.format(102.9),
}

# head_repo_id -> why it is left out.
DROP_HEADS = {
    "AngelSlim/Hy3-DFly-Block8": "verifier repo id not stated by the source",
    "AngelSlim/Hy3-DFly-Block8-High": "verifier repo id not stated by the source",
    "AngelSlim/Hy3-DFly-Block8-Think-High": "verifier repo id not stated by the source",
    "seabit-ai/Qwen3.8-27B-MTP-draft": "verifier Qwen/Qwen3.8-27B not confirmed by any engine recipe; MLX only",
}
# head_repo_id -> (method, why)
METHOD_FIX = {
    "Dogacel/specdrift-gpt-oss-20b-eagle3": ("eagle3", "EAGLE-3.1-style config toggles; engines load it through "
                                                       "--method eagle3 (row's own ATOM docs citation)"),
}
# A correction that drops trtllm from an EAGLE-1 head: its own source says the legacy TRT-engine flow
# (examples/eagle, checkpoint conversion) still loads EAGLE-1; only the PyTorch backend does not. The catalog's
# "trtllm" covers the TRT-engine backend (Medusa and lookahead run only there), so the row keeps trtllm and
# records the restriction in engine_versions instead.
TRTLLM_ENGINE_ONLY = "trtllm: legacy TRT-engine backend only (examples/eagle checkpoint conversion); not the PyTorch backend"


def _keeps_trtllm(fix: dict[str, str]) -> bool:
    return (fix["field"] == "runtimes" and "trtllm" in fix["old_value"].split(";")
            and "trtllm" not in fix["new_value"].split(";") and "legacy TensorRT-engine flow" in fix["source"])


# drafts_new verifier_family -> models.csv family
FAMILY_FIX = {
    "qwen3-next": "qwen3-next (hybrid)", "glm4.5": "glm-4.5 (MoE+MTP)", "kimi-k2": "kimi-k2 (MoE+MLA)",
    "mistral-small3": "mistral-small-3", "llama4": "llama4 (MoE)",
}


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows({k: r.get(k, "") for k in fields} for r in rows)


def _new_only(existing: list[dict[str, str]], new: list[dict[str, str]], key: str) -> list[dict[str, str]]:
    seen = {r[key].lower() for r in existing}
    out = []
    for r in new:
        if r[key].lower() not in seen:
            seen.add(r[key].lower())
            out.append(r)
    return out


def merge_models(staging: Path, data: Path) -> None:
    fields, rows = _read(data / "models.csv")
    _, new = _read(staging / "models_new.csv")
    fields = fields[: fields.index("tokenizer_family")] + [f for f in NEW_MODEL_FIELDS if f not in fields] + \
        fields[fields.index("tokenizer_family"):]
    for r in _new_only(rows, new, "repo_id"):
        r.update({k: str(v) for k, v in HYBRID.get(r["repo_id"], {}).items()})
        r["params_note"] = PARAMS_NOTE.get(r["repo_id"], "")
        if r["repo_id"] in ARCH_SOURCE_EXTRA:
            r["arch_source"] += "; " + ARCH_SOURCE_EXTRA[r["repo_id"]]
        rows.append(r)
    _write(data / "models.csv", fields, rows)


def merge_heads(staging: Path, data: Path) -> None:
    _, rows = _read(data / "heads.csv")
    fields, new = _read(staging / "heads_new.csv")
    _, fixes = _read(staging / "heads_corrections.csv")
    by_id = {r["head_repo_id"]: r for r in rows}
    for fix in fixes:
        row = by_id.get(fix["head_repo_id"])
        if row is None or fix["field"] not in fields:
            raise SystemExit(f"correction for unknown head or field: {fix}")
        if row.get(fix["field"], "") not in (fix["old_value"], fix["new_value"]):
            raise SystemExit(f"correction's old value does not match the row: {fix}")
        field = fix["field"]
        if _keeps_trtllm(fix):
            field, row["engine_versions"] = "engine_versions", TRTLLM_ENGINE_ONLY
        else:
            row[field] = fix["new_value"]
        if fix["source"] not in row["source"]:
            row["source"] += f"; {field} corrected: {fix['source']}"
    for r in _new_only(rows, new, "head_repo_id"):
        if r["head_repo_id"] in DROP_HEADS:
            continue
        if r["head_repo_id"] in METHOD_FIX:
            method, why = METHOD_FIX[r["head_repo_id"]]
            r["notes"] = f"filed as {r['method']} by the source; {why}. {r['notes']}".strip()
            r["method"] = method
        rows.append(r)
    _write(data / "heads.csv", fields, rows)


def merge_drafts(staging: Path, data: Path) -> None:
    fields, rows = _read(data / "drafts.csv")
    _, new = _read(staging / "drafts_new.csv")
    seen = {(r["verifier_family"], r["draft_repo_id"]) for r in rows}
    added = []
    for r in new:
        r["verifier_family"] = FAMILY_FIX.get(r["verifier_family"], r["verifier_family"])
        if (r["verifier_family"], r["draft_repo_id"]) not in seen:
            seen.add((r["verifier_family"], r["draft_repo_id"]))
            added.append(r)
    # Same columns: append, so the existing lines stay byte for byte.
    with open(data / "drafts.csv", "a", encoding="utf-8", newline="") as f:
        csv.DictWriter(f, fieldnames=fields, lineterminator="\n").writerows(added)


def merge_gpus(staging: Path, data: Path) -> None:
    fields, rows = _read(data / "gpus.csv")
    new_fields, new = _read(staging / "gpus_new.csv")
    _, backfill = _read(staging / "gpus_fp4_backfill.csv")
    if "fp4_tflops" not in fields:
        fields.insert(fields.index("fp8_tflops") + 1, "fp4_tflops")
    by_key = {r["key"]: r for r in rows}
    for b in backfill:
        row = by_key[b["key"]]
        if b["fp4_tflops"]:
            row["fp4_tflops"] = b["fp4_tflops"]
            row["source"] += f"; FP4: {b['source']}"
            row["notes"] = f"{row['notes']} FP4 dense: {b['notes']}".strip()
    rows.extend(_new_only(rows, new, "key"))
    _write(data / "gpus.csv", fields, rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    staging, data = Path(argv[0]), Path(argv[1])
    merge_models(staging, data)
    merge_heads(staging, data)
    merge_drafts(staging, data)
    merge_gpus(staging, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
