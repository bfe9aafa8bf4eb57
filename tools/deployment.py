"""The deployment an answer is about: one frozen value, resolved once from the user's input.

Every verb (`recommend`, `speedup`, `vram`, `engine-config`, `head-check`) and the calibration cases read the
same ``Deployment``: the verifier as served, the engine and its release, the hardware, the draft or head, the
context while decoding, the workload, the concurrency, the sampling and any measured acceptance. It is built by
one resolver (``tools/deploy/resolve.py``), which also decides every default and lists it in ``defaults``;
nothing downstream picks a default of its own. The speed model's request and the memory check's input are both
derived from it (``tools/deploy/requests.py``), so two verbs given the same input cannot answer for two
different deployments.

Glossary (the code follows it): a *method* is one speculative technique (eagle3, ngram, ...); a *strategy* is
what an answer recommends: a method or ``none``. *Concurrency* is how many sequences the deployment serves at
once; *batch* is the batch one step of the speed model runs at (the sweep moves it). The *engine* is the serving
software the user runs (vllm, sglang, ...); its *release* sets its defaults; the *harness* (runtime) is the set of
per-cycle overhead constants the speed model uses for it (an engine's own, or the papers' eager harness).
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.tools.catalog.specs import GpuSpec, HeadSpec, ModelSpec


@dataclass(frozen=True)
class ServedModel:
    """A model as the engine serves it: its facts and the weight format it is loaded in."""

    spec: ModelSpec
    weight_format: str  # bf16, fp8, int4, ... (the user's quantization, else the checkpoint's dtype)
    bytes_per_param: float
    quantization_given: str | None = None  # the format the user named (None: as published)

    @property
    def repo_id(self) -> str:
        return self.spec.repo_id


@dataclass(frozen=True)
class EngineChoice:
    """The serving engine and the release whose defaults apply.

    ``name`` None: the user named no engine and the planner picks one per method (each then runs at its newest
    tracked release with its defaults); `speedup` and `vram` take vLLM's overheads and reservation then.
    """

    name: str | None
    release: str | None  # the user's release, or None: the newest tracked (``release_text`` says which)
    release_text: str  # "vllm 0.19.0 (newest tracked, engine_support.csv)" or "vllm 0.16.0 (given)"
    overlap_setting: str = "auto"  # auto / on / off (tools/model/overlap.py)
    harness: str | None = None  # overhead set override (paper / compiled), `speedup --harness` only


@dataclass(frozen=True)
class Hardware:
    """GPUs serving one replica and how the verifier is split over them."""

    gpu: GpuSpec
    gpus: int  # total: tensor x pipeline
    pipeline_parallel: int = 1
    dp_attention: bool = False  # data-parallel attention: MLA KV split by sequence across ranks
    reserve_fraction: float | None = None  # the engine's memory knob, when the user overrides it

    @property
    def tensor_parallel(self) -> int:
        return self.gpus // self.pipeline_parallel


@dataclass(frozen=True)
class Drafter:
    """A separate draft model or a speculative head, with its own size and weight format.

    One precision for both the speed model and the memory check: the draft's own format (``--draft-quantization``,
    else its checkpoint's dtype), never the verifier's.
    """

    repo_id: str
    kind: str  # "draft" (a separate language model) or "head"
    spec: ModelSpec | None = None  # architecture (a draft model; a synthetic one sized from params, see note)
    head: HeadSpec | None = None  # the catalog row of a head
    weight_format: str = "bf16"
    bytes_per_param: float = 2.0
    params_b: float | None = None
    note: str = ""  # how it was resolved (catalog row, geometry assumed, ...)


@dataclass(frozen=True)
class Evidence:
    """Acceptance the user measured, and what it was measured with."""

    alpha: float | None = None
    tau: float | None = None
    method: str | None = None  # None: applies to the model-based one-token-per-forward drafters
    num_draft_tokens: int | None = None  # the N it was measured at, when stated


@dataclass(frozen=True)
class Deployment:
    """One resolved deployment (see the module docstring); build it with ``tools.deploy.resolve``."""

    verifier: ServedModel
    engine: EngineChoice
    hardware: Hardware
    workload: str
    context_tokens: int  # tokens in the KV cache while decoding: the memory check and the speed model both use it
    concurrency: int
    temperature: float
    sampling: str = "greedy"
    kv_cache_dtype: str = "auto"
    drafter: Drafter | None = None
    evidence: Evidence | None = None
    defaults: tuple[str, ...] = ()  # every default the resolver decided, in words ("Defaults used")
    notes: tuple[str, ...] = ()  # resolution notes (facts source, geometry assumed, ...)
    facts_source: str = "catalog"

    @property
    def draft_spec(self) -> ModelSpec | None:
        """The separate draft model's architecture, if the drafter is one."""
        return self.drafter.spec if self.drafter is not None and self.drafter.kind == "draft" else None

    @property
    def head(self) -> HeadSpec | None:
        return self.drafter.head if self.drafter is not None else None


__all__ = ["Deployment", "Drafter", "EngineChoice", "Evidence", "Hardware", "ServedModel"]
