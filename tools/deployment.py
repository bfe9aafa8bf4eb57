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
    # A derived verifier (fine-tune, RL, merge, LoRA): the id the user serves, printed in configs and commands,
    # while ``spec`` is the base model's facts row (``--base-model``).
    served_id: str | None = None
    change: str = "none"  # none, full-finetune, rl, lora, merge
    adapters: int | None = None

    @property
    def repo_id(self) -> str:
        """The facts row's id (the base model for a derived verifier): catalog and head look-ups use it."""
        return self.spec.repo_id

    @property
    def served_repo_id(self) -> str:
        """The id the engine loads: the user's own for a derived verifier."""
        return self.served_id or self.spec.repo_id


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
class HostMemory:
    """The machine's system RAM: where llama.cpp keeps the layers the GPUs cannot hold (tools/checks/offload.py).

    None: the user did not say; ``tools/checks/offload.host_memory`` takes its stated default then.
    """

    memory_gib: float | None = None
    bandwidth_gbps: float | None = None


@dataclass(frozen=True)
class HostRead:
    """Weights of ``repo_id`` that a forward reads from system RAM (partial offload): the step time adds the read."""

    repo_id: str
    offloaded_fraction: float  # share of the model's weight bytes in system RAM, 0..1
    bandwidth_gbps: float


@dataclass(frozen=True)
class Hardware:
    """GPUs serving one replica and how the verifier is split over them."""

    gpu: GpuSpec
    gpus: int  # total: tensor x pipeline
    pipeline_parallel: int = 1
    dp_attention: bool = False  # data-parallel attention: MLA KV split by sequence across ranks
    reserve_fraction: float | None = None  # the engine's memory knob, when the user overrides it
    host: HostMemory | None = None  # system RAM (llama.cpp partial offload); the resolver sets it for llama.cpp
    host_read: HostRead | None = None  # the verifier's offloaded share, set per method from its memory fit
    # The same without speculation (no draft on the GPUs, so fewer layers in system RAM): the plain step a speedup
    # is measured against. Read only when ``host_read`` is set.
    plain_host_read: HostRead | None = None

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
    """Acceptance (and speedup) the user measured, and what it was measured with.

    It applies to the drafter it was measured with only (``method`` and, when known, ``drafter_repo``) and holds
    at ``num_draft_tokens``; other candidates keep their priors. Built by ``tools/deploy/evidence.py``.
    """

    alpha: float | None = None
    tau: float | None = None
    method: str | None = None  # None: applies to the model-based one-token-per-forward drafters (stated)
    num_draft_tokens: int | None = None  # the N it was measured at
    n_assumed: bool = False  # N was not stated: ``num_draft_tokens`` is the method's starting N (stated)
    drafter_repo: str | None = None  # the head or draft it was measured with (None: any of ``method``'s)
    per_position: tuple[float, ...] = ()  # P(position i accepted) per draft, i = 1..N
    tau_low: float | None = None  # 80% bootstrap interval over the measurement's prompts
    tau_high: float | None = None
    speedup: float | None = None  # measured speedup over plain decoding at ``concurrency``
    concurrency: int | None = None  # the concurrency the speedup (and acceptance) was measured at
    num_requests: int | None = None  # prompts behind the figures
    tau_at_n: tuple[tuple[int, float], ...] = ()  # (N, tau) measured or re-cut from one run (`specpick tune`)
    source: str = "user input"  # "your --tau/--alpha", "t.json (specpick tune report, 8 prompts)", ...
    prior_tau: float | None = None  # the prior for the same drafter at the same N (how far it was off)
    prior_tau_low: float | None = None
    prior_tau_high: float | None = None
    spread_from_prior: bool = False  # no per-prompt figures: the range is the prior's relative spread (stated)
    notes: tuple[str, ...] = ()

    @property
    def tau_by_draft_tokens(self) -> tuple[tuple[int, float], ...]:
        """Measured tau of a chain at each N it says something about: (N, tau), N ascending.

        Per-position acceptance gives N = 1..len (1 + the accepted share of positions 1..N); a tune report gives
        the N it swept; the measured N itself always holds ``tau``.
        """
        out: dict[int, float] = dict(self.tau_at_n)
        total = 1.0
        for i, p in enumerate(self.per_position, start=1):
            total += p
            out[i] = total
        if self.tau is not None and self.num_draft_tokens is not None and not self.n_assumed:
            out[self.num_draft_tokens] = self.tau
        return tuple(sorted(out.items()))


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


__all__ = ["Deployment", "Drafter", "EngineChoice", "Evidence", "Hardware", "HostMemory", "HostRead", "ServedModel"]
