"""llama-server's command line for one speculative setting, as it runs: GGUF in, the release's flag names out.

``llama-server -hf <repo>[:QUANT]`` downloads a GGUF file from a Hub repository; it cannot load a safetensors repo
(tools/server/README.md @00dc805: "-hf, -hfr, --hf-repo <user>/<model>[:quant]  Hugging Face model repository").
So the verifier is loaded the way the user named it: a local ``.gguf`` path with ``-m``, a GGUF repo with ``-hf``.
A safetensors repo (the verifier, or a draft / head repo) gets the conversion steps first: llama.cpp's
``convert_hf_to_gguf.py MODEL_DIR --outfile F.gguf --outtype {f32,f16,bf16,q8_0,tq1_0,tq2_0,auto}`` (its argparse),
then ``llama-quantize IN.gguf OUT.gguf TYPE`` for the K-/IQ-quants the converter does not write.

Flag names by release (``--engine-version bNNNN``, llama.cpp's build tags):
* PR #22397 ("spec : refactor params", merged 2026-04-27) replaced ``--draft-max``/``--draft-min`` with
  ``--spec-draft-n-max``/``--spec-draft-n-min`` and ``--spec-ngram-size-n`` with ``--spec-ngram-simple-size-n``;
* PR #22964 ("spec : update CLI arguments for better consistency", 2026-05-12) named every model-drafting type
  ``draft-*`` (``draft-simple``, ``draft-mtp``, ``draft-eagle3``).
We do not hold the build number either PR landed in, only bounds: b7815 is dated 2026-01-23 (ferranpons/Llamatik#37,
"Updated llama.cpp to tag b7815") and so predates both; a b9626-era build (June 2026) runs ``--spec-draft-n-max``
(engine_measurements.csv LLAMACPP-24593). Builds in between get today's names and a note saying so.
"""

from __future__ import annotations

import re
import shlex

from typing import Any

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.engines.base import EngineSpec, ServeSpec
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.methods import REGISTRY, method_record
from specpick.tools.hub.gguf_ref import is_gguf_name

# Newest build known to predate PR #22397 / #22964 (b7815, 2026-01-23) and oldest known to postdate them (b9626-era).
LAST_BUILD_BEFORE_SPEC_RENAME = 7815
FIRST_BUILD_AFTER_SPEC_RENAME = 9626
# convert_hf_to_gguf.py --outtype choices it writes itself; anything else goes through llama-quantize.
CONVERTER_OUTTYPES = frozenset({"f32", "f16", "bf16", "q8_0"})
# Safetensors weight formats llama-quantize has no type for -> the nearest type it has (tools/vocab.py bits: Q8_0 8.5
# for 8-bit, Q4_K_M 4.89 for 4-bit). A quantized build is converted from its base model's BF16 weights.
SAFETENSORS_ONLY: dict[str, str] = {"fp8": "q8_0", "int8": "q8_0", "int4": "q4_k_m", "nvfp4": "q4_k_m"}
_BUILD_RE = re.compile(r"^b(\d{3,6})$")
# llama-server's drafters that read the verifier's hidden states (EAGLE-3, MTP, DFlash, DSpark) came with PR #22964.
_METHOD_FROM_PR_22964 = frozenset(r.name for r in REGISTRY if r.verifier_bound and r.engine_key("llamacpp"))


def spec_type(method: str) -> str:
    """llama.cpp's --spec-type for ``method``: the registry's engine key (tools/methods.py, llama-server --help)."""
    return method_record(method).engine_names("llamacpp")[0]


def build_number(version: str | None) -> int | None:
    """``b6000`` -> 6000; None for no release or one that is not a llama.cpp build tag."""
    m = _BUILD_RE.fullmatch(version or "")
    return int(m.group(1)) if m else None


def is_gguf_source(name: str | None) -> bool:
    """A name llama-server loads as it is: a ``.gguf`` path or a ``*-GGUF`` repo (optionally ``:QUANT``)."""
    if not name:
        return False

    return is_gguf_name(name)


def _stem(repo_or_path: str) -> str:
    return repo_or_path.rstrip("/").rsplit("/", 1)[-1]


def conversion_steps(repo_id: str, quant: str, target_dir: str | None = None) -> tuple[list[str], str]:
    """(shell lines that turn a safetensors repo into one GGUF file, that file's name).

    ``target_dir``: an EAGLE-3 / DFlash head is converted against its verifier's directory
    (``--target-model-dir``, PR #18039 / #22105).
    """
    stem = _stem(repo_id)
    qtype = quant.upper()
    out = f"{stem}-{qtype}.gguf"
    lines = [shlex.join(["hf", "download", repo_id, "--local-dir", stem])]
    outtype = quant if quant in CONVERTER_OUTTYPES else "bf16"
    first = out if quant in CONVERTER_OUTTYPES else f"{stem}-BF16.gguf"
    conv = ["python", "convert_hf_to_gguf.py", stem, "--outfile", first, "--outtype", outtype]
    if target_dir:
        conv += ["--target-model-dir", target_dir]
    lines.append(shlex.join(conv))
    if quant not in CONVERTER_OUTTYPES:
        lines.append(shlex.join(["llama-quantize", first, out, qtype]))
    return lines, out


def _model_args(source: str) -> list[str]:
    return ["-m", source] if source.lower().endswith(".gguf") else ["-hf", source]


def _verifier(inp: EngineConfigInput) -> tuple[list[str], list[str], list[str]]:
    """(argv words loading the verifier, setup lines, notes)."""
    if is_gguf_source(inp.gguf_source):
        return _model_args(inp.gguf_source or ""), [], []
    quant = inp.gguf_quant or "q8_0"
    source, notes = inp.verifier, []
    if quant in SAFETENSORS_ONLY:  # fp8, int4, nvfp4...: no llama.cpp file type of that name
        from specpick.tools.hub.quant_ref import quant_build_base

        base = quant_build_base(inp.verifier)
        source = base[0].repo_id if base is not None else inp.verifier
        nearest = SAFETENSORS_ONLY[quant]
        notes.append(f"llama.cpp has no {quant} file type: the GGUF is made from {source} at {nearest.upper()}, the "
                     f"nearest llama-quantize type (the estimate was costed at {quant}; pass --quantization "
                     f"{nearest.upper()} to cost this file)")
        quant = nearest
    lines, out = conversion_steps(source, quant)
    return ["-m", out], lines, [f"{source} is a safetensors repo and -hf loads GGUF repos only: convert it "
                                f"first (the lines before the command; convert_hf_to_gguf.py, llama-quantize)", *notes]


def _drafter(inp: EngineConfigInput, old: bool) -> tuple[list[str], list[str]]:
    """(argv words loading the draft / head, setup lines)."""
    draft = inp.draft_model
    # MTP layers ship inside the verifier; so does a drafter named as the verifier itself.
    if not draft or method_record(inp.method).loads in ("verifier_layers", "nothing") or draft == inp.verifier:
        return [], []
    gpu_all = "99" if old else "all"
    if is_gguf_source(draft):
        words = ["-md", draft] if draft.lower().endswith(".gguf") else ["--spec-draft-hf" if not old else "-hfd", draft]
        return [*words, "-ngld" if old else "--spec-draft-ngl", gpu_all], []
    if draft.startswith("<"):  # a head still to be trained: the user converts it once it exists
        return ["-md", draft, "-ngld" if old else "--spec-draft-ngl", gpu_all], []
    # A head or drafter trained on the verifier converts against the verifier's own config.
    target = _stem(inp.verifier) if method_record(inp.method).verifier_bound else None
    quant = "q8_0" if inp.method == "draft_model" else "bf16"
    lines, out = conversion_steps(draft, quant, target_dir=target)
    if target and is_gguf_source(inp.gguf_source):
        # The head's converter reads the verifier's safetensors config, not the GGUF file.
        lines.insert(0, shlex.join(["hf", "download", inp.verifier, "--local-dir", target]))
    return ["-md", out, "-ngld" if old else "--spec-draft-ngl", gpu_all], lines


def _placement(inp: EngineConfigInput) -> tuple[list[str], list[str]]:
    """(-ngl / --n-cpu-moe / split flags, notes) for where the verifier's layers go."""
    flags: list[str] = []
    notes: list[str] = []
    if inp.n_cpu_moe:
        flags += ["-ngl", "99", "--n-cpu-moe", str(inp.n_cpu_moe)]
        notes.append(f"the weights do not fit the GPU memory: the routed experts of the first {inp.n_cpu_moe} "
                     "layers stay in system RAM (--n-cpu-moe), everything else on the GPU; raise it if loading "
                     "fails, lower it while it loads (llama-server logs each device's buffer size)")
    elif inp.gpu_layers is not None:
        flags += ["-ngl", str(inp.gpu_layers)]
        notes.append(f"the weights do not fit the GPU memory: {inp.gpu_layers} layers on the GPU (-ngl), the rest "
                     "run on the CPU from system RAM; decoding then runs at about system-RAM bandwidth")
    if inp.tensor_parallel > 1:
        flags += ["--split-mode", "layer"]
        notes.append(f"{inp.tensor_parallel} GPUs: --split-mode layer puts whole layers on each GPU (only "
                     "activations cross between them, so PCIe without NVLink suffices); it is not tensor parallel")
    return flags, notes


def emit(inp: EngineConfigInput, version: str) -> EngineConfig:
    build = build_number(inp.engine_version)
    old = build is not None and build <= LAST_BUILD_BEFORE_SPEC_RENAME
    notes: list[str] = []
    model, setup, vnotes = _verifier(inp)
    notes += vnotes
    draft, dsetup = _drafter(inp, old)
    setup += dsetup
    if dsetup:
        notes.append(f"{inp.draft_model} is a safetensors repo: converted to GGUF before the launch "
                     "(convert_hf_to_gguf.py" + (" --target-model-dir, PR #18039 / #22105)" if "--target-model-dir"
                                                  in " ".join(dsetup) else ")"))
    flags: list[str] = []
    if old:
        if inp.method in _METHOD_FROM_PR_22964:
            notes.append(f"build b{build} predates the draft-* spec types (PR #22964, 2026-05-12): "
                         f"{spec_type(inp.method)} needs a newer build")
        if spec_type(inp.method) == "ngram-simple":
            flags += ["--spec-type", "ngram-simple", "--draft-max", str(inp.num_draft_tokens),
                      "--spec-ngram-size-n", str(inp.prompt_lookup_max)]
        else:
            if inp.method != "draft_model":
                flags += ["--spec-type", spec_type(inp.method)]
            flags += [*draft, "--draft-max", str(inp.num_draft_tokens)]
        notes.append(f"flags as of build b{build} (<= b{LAST_BUILD_BEFORE_SPEC_RENAME}, before PR #22397 renamed "
                     "--draft-max/--draft-min to --spec-draft-n-max/--spec-draft-n-min)")
    else:
        flags += ["--spec-type", spec_type(inp.method), *draft,
                  "--spec-draft-n-max", str(inp.num_draft_tokens)]
        if spec_type(inp.method) == "ngram-simple":
            flags += ["--spec-ngram-simple-size-n", str(inp.prompt_lookup_max)]
        if build is not None and build < FIRST_BUILD_AFTER_SPEC_RENAME:
            notes.append(f"build b{build} lies between b{LAST_BUILD_BEFORE_SPEC_RENAME} (before) and "
                         f"b{FIRST_BUILD_AFTER_SPEC_RENAME} (after) the flag renames of PR #22397 / #22964: if "
                         "llama-server rejects --spec-draft-n-max, use --draft-max (and drop --spec-type draft-simple)")
        else:
            notes.append("flags as of build @00dc805 (PR #22397 and #22964): builds up to b7815 spelled the draft "
                         "length --draft-max/--draft-min")
    place, pnotes = _placement(inp)
    notes += pnotes
    slots = ["--parallel", str(inp.parallel_slots)] if inp.parallel_slots else []
    if inp.parallel_slots == 1:
        notes.append("--parallel 1: one slot for one user, so the whole context is that user's (more slots split "
                     "-c between them, and draft acceptance falls as drafting slots grow: llama.cpp#27117)")
    if inp.tree_top_k > 1:
        notes.append("llama.cpp drafts a chain only: the tree's depth is used as the chain length")
    if inp.full_schedule() or inp.acceptance_threshold is not None:
        notes.append("llama.cpp has no per-batch draft length or disable threshold; --spec-draft-p-min stops a "
                     "draft early when the drafter is unsure")
    argv = ["llama-server", *model, *place, *slots, *context_args(inp), *flags]
    return EngineConfig(engine="llamacpp", engine_version=version, format="cli-flags",
                        config=shlex.join(flags), launch_command=shlex.join(argv), argv=argv, notes=notes,
                        setup_commands=setup)


def plain_argv(inp: EngineConfigInput) -> tuple[list[str], list[str]]:
    """(llama-server argv with speculation off, setup lines)."""
    model, setup, _ = _verifier(inp)
    place, _ = _placement(inp)
    slots = ["--parallel", str(inp.parallel_slots)] if inp.parallel_slots else []
    return ["llama-server", *model, *place, *slots, *context_args(inp)], setup


def context_args(inp: EngineConfigInput) -> list[str]:
    """``-c``: the KV cache of all slots together (each --parallel slot gets -c / slots, README @00dc805), so the
    checked context per sequence times the slots; unset, llama-server takes the model's whole training context."""
    if not inp.context_tokens:
        return []
    return ["-c", str(inp.context_tokens * (inp.parallel_slots or 1))]


# llama-server's own numbers (tools/server/README.md @00dc805): each response's `timings` ("such as the number of
# tokens predicted_per_second"; draft_n / draft_n_accepted are the speculative counts it adds), GET /slots (on by
# default) and, with --metrics only, Prometheus counters named llamacpp:spec_decode_*.
METRICS = (
    MetricRef(engine="llamacpp", name="timings.draft_n / timings.draft_n_accepted",
              meaning="draft tokens proposed / accepted in one response (/completion, /v1/chat/completions); "
                      "alpha = sum accepted / sum proposed over your requests"),
    MetricRef(engine="llamacpp", name="timings.predicted_per_second",
              meaning="decode tokens per second of the request (speedup = with / without speculation)"),
    MetricRef(engine="llamacpp", name="GET /slots",
              meaning="per slot: n_ctx, speculative (on/off) and params speculative.n_max / n_min / p_min: check "
                      "the server runs the draft settings you passed"),
    MetricRef(engine="llamacpp", name="llamacpp:spec_decode_num_drafts_total (with --metrics)",
              meaning="verify steps; tau = 1 + llamacpp:spec_decode_num_accepted_tokens_total / this (deltas)"),
)
# The response fields ``measure`` reads (tools/measure/metrics.py).
TIMINGS_DRAFTED = "draft_n"
TIMINGS_ACCEPTED = "draft_n_accepted"
# llama-server @00dc805 listens on 9931 by default (README "--port PORT ... default: 9931"; older builds 8080):
# the plan starts it with --port 8080 so one address holds across builds.
PLAN_PORT = 8080


def parse_flags(command: str) -> dict[str, Any] | None:
    """llama-server flags as ``{"spec-type": "draft-simple", "md": "...", ...}`` (single-dash flags too)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    out: dict[str, Any] = {}
    for i, word in enumerate(words):
        if not word.startswith("-") or word.lstrip("-")[:1].isdigit():
            continue
        key, eq, val = word.lstrip("-").partition("=")
        if eq:
            out[key] = val
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            out[key] = words[i + 1]
        else:
            out[key] = True
    return out


def _plan_commands(launch: str, baseline: str, conc: str) -> list[str]:
    # One local GPU holds one server: the speculative and the plain server run one after the other on one port.
    return [
        f"# 1. speculative:  {launch} --port {PLAN_PORT}",
        f"specpick measure --endpoint http://127.0.0.1:{PLAN_PORT} --prompts prompts.jsonl "
        f"--concurrency {conc} --expect recommendation.json   # reads each response's timings.draft_n / "
        "draft_n_accepted",
        f"curl -s http://127.0.0.1:{PLAN_PORT}/slots | python3 -m json.tool   # per slot: n_ctx, speculative, "
        "params speculative.n_max / n_min / p_min (README @00dc805, GET /slots)",
        f"curl -s http://127.0.0.1:{PLAN_PORT}/completion -d '{{\"prompt\": \"...\", \"n_predict\": 256}}' | "
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"timings\"])'   # draft_n, draft_n_accepted, "
        "predicted_per_second of one request",
        f"# 2. stop it, then plain:  {baseline} --port {PLAN_PORT}   and rerun the same specpick measure line",
    ]


class LlamacppEngine(EngineSpec):
    def emit(self, inp: EngineConfigInput, version: str) -> EngineConfig:
        return emit(inp, version)

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        flags = parse_flags(config.launch_command or config.config)
        if flags is None:
            return None
        out: dict[str, Any] = dict(flags)
        n = flags.get("spec-draft-n-max", flags.get("draft-max"))
        draft = next((flags[f] for f in ("md", "model-draft", "spec-draft-hf", "hfd") if f in flags), None)
        out.update(key=flags.get("spec-type"), num_draft_tokens=int(n) if isinstance(n, str) and n.isdigit()
                   else None, draft_model=draft)
        return out

    def plain_argv(self, inp: EngineConfigInput) -> tuple[list[str], list[str]]:
        return plain_argv(inp)

    def context_args(self, inp: Any) -> list[str]:
        return context_args(inp)

    def serve_command(self, serve: ServeSpec, spec_args: list[str]) -> list[str]:
        return [serve.executable, "-m", serve.model, "--alias", serve.served_name, "--host", "127.0.0.1", "--port",
                str(serve.port), "--parallel", "1", *serve.extra_args, *spec_args]

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        return memory_gib, ("llama.cpp: no memory reservation fraction (it allocates the weights, the KV cache for "
                            "-c and its compute buffers)")

    def plan_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int], launch: str,
                      baseline: str) -> list[str]:
        return _plan_commands(launch, baseline, " ".join(str(c) for c in levels))


ENGINE = LlamacppEngine(
    name="llamacpp", label="llama.cpp", format="cli-flags", harness="llamacpp", metrics=METRICS,
    metrics_port=PLAN_PORT,
    read_step="Sum timings.draft_n and timings.draft_n_accepted over the responses: alpha = accepted / drafted. Each "
              "response carries its own counts (nothing is cumulative); tau needs the number of drafts, which the "
              "timings do not give: read it from /metrics (llamacpp:spec_decode_num_drafts_total, with --metrics) or "
              "take tau from alpha at the N you ran.", single_user=True,
    under_load="serve the extra users from a llama-server without --spec-type, or lower --spec-draft-n-max; each "
               "--parallel slot drafts on its own and acceptance falls as drafting slots grow (llama.cpp#27117)",
    kv_rollback=("removes the rejected draft positions from the slot's KV cache after each verify step "
                 "(llama_memory_seq_rm); a draft model keeps its own context", "llama.cpp tools/server (server "
                 "slot speculative loop)"),
    launches=True, sizes_placement=True, layer_split=True, offloads=True, serve_binary="llama-server",
    context_flag="-c",
)
