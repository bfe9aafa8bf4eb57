"""The method registry: one record per speculative decoding method, the only home of per-method knowledge.

Everything that asks "what kind of method is this?" reads an attribute of its record instead of testing the
method's name: adding a method is one ``MethodRecord`` here plus its data rows (catalog heads, engine support,
published measurements). ``tools/vocab.py`` derives the ``Method`` literal and the method families from this table.

Engine support by release (which engine runs it from which version, what breaks it) is data, not code:
``tools/data/engine_support.csv``, read through the catalog. The option *names* an engine spells a method with are
facts of the method and live here (each cited).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What a method loads besides the verifier.
Loads = Literal[
    "head_repo",  # a trained head in its own repository (EAGLE-1/2/3, Medusa)
    "verifier_layers",  # layers shipped inside the verifier's checkpoint (MTP)
    "drafter_repo",  # a drafter trained on this verifier's hidden states, in its own repository (DFlash, P-EAGLE)
    "draft_lm",  # a separate small language model with its own tokenizer (draft model, PARD)
    "nothing",  # drafts from text already in the context (n-gram, suffix, lookahead)
]
# How one cycle's drafts are shaped.
DraftShapeKind = Literal[
    "chain",  # N tokens one after another, verified as a chain
    "static_tree",  # a tree of fixed shape (EAGLE-1, Medusa tree attention)
    "dynamic_tree",  # a context-aware tree re-ranked at every depth (EAGLE-2, EAGLE-3)
    "pool",  # several n-gram candidates verified at once (lookahead), modelled as a tree
]
Family = Literal["head", "draft", "model_free"]
# Whether acceptance falls along a chain of drafted positions. Draft heads feed on their own predictions, so it
# falls; separate draft models and model-free drafting are treated as independent per token (Leviathan et al.).
# EAGLE-3's training-time test keeps it flat in the papers' harnesses (EAGLE-3 paper, acceptance-by-position
# figure) while serving engines measured it falling (tools/model/prior_rules.py engine_decay_figures).
ChainDecay = Literal["none", "engines", "always"]


@dataclass(frozen=True)
class MethodRecord:
    """What the tool knows about one method, independent of engines and releases.

    Attributes:
        name: the method's id in every input, output and data file.
        label: how answers name it.
        family: the coarse family whose priors are shared (temperature effect): trained heads, draft models,
            model-free drafting.
        loads: what it loads besides the verifier.
        head_kind: the kind of head config (``config.json``) that fits the method, for head-to-verifier checks;
            None when the method loads no head (EAGLE-2 runs EAGLE-1 weights, so its head kind is ``eagle``).
        shape: the draft shape the method proposes in its own paper and the papers' harnesses.
        parallel_draft: one draft forward proposes all N tokens (mask/placeholder positions), so the draft cost
            barely grows with N.
        copy_based: acceptance is about how much of the output repeats the input (n-gram, suffix).
        measured_tau: published acceptance is a tau at the source's own configuration (no per-token alpha):
            variable-length drafts.
        own_module: the draft module is the verifier's own (MTP layers trained with that model), so acceptance
            and its decay along the chain are properties of the model family.
        start_draft_len: the draft length the planner starts tuning from, where the method has a published one.
        max_sweep_draft_len: the longest N the draft-length sweep tries (None: the model's generic limit).
        chain_decay: where acceptance falls along the chain (``ChainDecay``).
        autoregressive_head: a head drafting one token per forward from its own last hidden state (EAGLE-1/2/3,
            MTP): the kind engines schedule asynchronously, adapt the steps of, and refresh with an extend forward.
        tree_is_its_gain: the method's published gain over its parent is its tree (EAGLE-2 is EAGLE-1 weights plus
            a context-aware dynamic tree, arXiv 2406.16858), so a tree engine weighs the tree whatever alpha a prior
            gives.
        engine_keys: how each engine names the method in its configuration, first the spelling we emit, then
            spellings the engine also accepts for it (sources: vLLM ``SpeculativeConfig.method``; SGLang
            ``--speculative-algorithm``; TensorRT-LLM ``decoding_type``; llama-server ``--spec-type`` @00dc805 —
            docs/references/). An engine missing here has no configuration key for the method.
    """

    name: str
    label: str
    family: Family
    loads: Loads
    shape: DraftShapeKind
    head_kind: str | None = None
    parallel_draft: bool = False
    copy_based: bool = False
    measured_tau: bool = False
    own_module: bool = False
    start_draft_len: int | None = None
    max_sweep_draft_len: int | None = None
    chain_decay: ChainDecay = "none"
    autoregressive_head: bool = False
    tree_is_its_gain: bool = False
    engine_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def engine_key(self, engine: str) -> str | None:
        """The key ``engine`` takes for this method in its configuration (None: the engine has none)."""
        names = self.engine_names(engine)
        return names[0] if names else None

    def engine_names(self, engine: str) -> tuple[str, ...]:
        """Every spelling ``engine`` accepts for this method, the one we emit first."""
        return dict(self.engine_keys).get(engine, ())

    @property
    def verifier_bound(self) -> bool:
        """Trained against this exact verifier (a head, the model's own MTP layers, or a hidden-state drafter)."""
        return self.loads in ("head_repo", "verifier_layers", "drafter_repo")

    @property
    def separate_repo(self) -> bool:
        """Its engine configuration names a second repository (a head, a drafter or a draft model)."""
        return self.loads in ("head_repo", "drafter_repo", "draft_lm")

    @property
    def model_based(self) -> bool:
        """It has weights of its own, so its acceptance describes the verifier and the workload."""
        return self.loads != "nothing"

    @property
    def tree(self) -> bool:
        """Its drafts form a tree verified in one pass (modelled with tau and per-cycle cost k)."""
        return self.shape != "chain"

    @property
    def tree_head(self) -> bool:
        """A head loaded from its own repository that drafts a tree (the methods tree options apply to)."""
        return self.loads == "head_repo"


# Records in the order the ``Method`` literal has always listed them (CLI choices, JSON schema enums).
# Sweep limits and start lengths (cited where the number comes from):
#  - EAGLE heads: measured at the depths they were published with (EAGLE-2/3 trees: depth 6-7), so the sweep
#    stops at 8 rather than extrapolating.
#  - MTP stops at 3: the one MTP layer engines run is reused for every further position and measured speed peaks
#    there (TensorRT-LLM DeepSeek-R1 on 8x B200: 2.28x at N=3, 2.21x at 4, 2.15x at 5, rows
#    TRTLLM-BLOG1-DSR1-B200/3-5).
#  - Parallel drafters: up to the lengths they were published with (DFlash -b16 blocks draft 15, z-lab; P-EAGLE
#    best K=7 at BS1, vllm PR #32887, swept to 8; PARD doc example 12).
REGISTRY: tuple[MethodRecord, ...] = (
    MethodRecord("draft_model", "draft model", "draft", "draft_lm", "chain",
                 engine_keys=(("vllm", ("draft_model",)), ("sglang", ("STANDALONE",)), ("trtllm", ("DraftTarget",)),
                              ("llamacpp", ("draft-simple",)))),
    MethodRecord("eagle", "EAGLE-1", "head", "head_repo", "static_tree", head_kind="eagle", max_sweep_draft_len=8,
                 chain_decay="always", autoregressive_head=True,
                 engine_keys=(("vllm", ("eagle",)), ("sglang", ("EAGLE",)), ("trtllm", ("Eagle",)))),
    MethodRecord("eagle2", "EAGLE-2", "head", "head_repo", "dynamic_tree", head_kind="eagle", max_sweep_draft_len=8,
                 chain_decay="always", autoregressive_head=True, tree_is_its_gain=True,
                 engine_keys=(("vllm", ("eagle",)), ("sglang", ("EAGLE",)), ("trtllm", ("Eagle",)))),
    MethodRecord("eagle3", "EAGLE-3", "head", "head_repo", "dynamic_tree", head_kind="eagle3",
                 max_sweep_draft_len=8, chain_decay="engines", autoregressive_head=True,
                 engine_keys=(("vllm", ("eagle3",)), ("sglang", ("EAGLE3",)), ("trtllm", ("Eagle3", "Eagle")),
                              ("llamacpp", ("draft-eagle3",)))),
    MethodRecord("medusa", "Medusa", "head", "head_repo", "static_tree", head_kind="medusa", chain_decay="always",
                 engine_keys=(("vllm", ("medusa",)), ("trtllm", ("Medusa",)))),
    MethodRecord("mtp", "MTP", "head", "verifier_layers", "chain", head_kind="mtp", own_module=True,
                 max_sweep_draft_len=3, chain_decay="always", autoregressive_head=True,
                 engine_keys=(("vllm", ("mtp",)), ("sglang", ("NEXTN", "EAGLE")), ("trtllm", ("MTP",)),
                              ("llamacpp", ("draft-mtp",)))),
    MethodRecord("lookahead", "lookahead", "model_free", "nothing", "pool", measured_tau=True,
                 engine_keys=(("trtllm", ("Lookahead",)),)),
    MethodRecord("ngram", "n-gram (prompt lookup)", "model_free", "nothing", "chain", copy_based=True,
                 engine_keys=(("vllm", ("ngram",)), ("sglang", ("NGRAM",)), ("trtllm", ("NGram",)),
                              ("llamacpp", ("ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod",
                                            "ngram-cache")))),
    MethodRecord("suffix", "suffix decoding", "model_free", "nothing", "chain", copy_based=True, measured_tau=True,
                 engine_keys=(("vllm", ("suffix",)),)),
    MethodRecord("dflash", "DFlash", "head", "drafter_repo", "chain", head_kind="dflash", parallel_draft=True,
                 start_draft_len=15, max_sweep_draft_len=15,
                 engine_keys=(("vllm", ("dflash",)), ("sglang", ("DFLASH",)), ("trtllm", ("DFlash",)),
                              ("llamacpp", ("draft-dflash",)))),
    # vLLM runs P-EAGLE as an EAGLE-3 head with parallel_drafting (>= 0.16.0, PR #32887).
    MethodRecord("peagle", "P-EAGLE", "head", "drafter_repo", "chain", head_kind="peagle", parallel_draft=True,
                 start_draft_len=7, max_sweep_draft_len=8, engine_keys=(("vllm", ("eagle3",)),)),
    # vLLM runs PARD as a draft model with parallel_drafting (>= 0.16.0, PR #32887).
    MethodRecord("pard", "PARD", "draft", "draft_lm", "chain", parallel_draft=True, start_draft_len=12,
                 max_sweep_draft_len=12, engine_keys=(("vllm", ("draft_model",)), ("trtllm", ("PARD",)))),
)
# EAGLE-3.1 (arXiv 2605.09992) is not a method of its own: its heads load through the EAGLE-3 keys of every
# engine (vLLM method eagle3, SGLang EAGLE3, TensorRT-LLM Eagle3), so it is an eagle3 head.

METHOD_NAMES: tuple[str, ...] = tuple(r.name for r in REGISTRY)
# The planner weighs candidates in this order and breaks ties by it (trained heads first, then drafters, then
# model-free drafting).
CANDIDATE_ORDER: tuple[str, ...] = ("eagle3", "eagle2", "eagle", "medusa", "mtp", "dflash", "peagle", "draft_model",
                                    "pard", "ngram", "suffix", "lookahead")
_BY_NAME: dict[str, MethodRecord] = {r.name: r for r in REGISTRY}


def method_record(name: str) -> MethodRecord:
    """The record of method ``name``.

    Raises:
        KeyError: ``name`` is not a method (input models validate names against ``Method`` before this runs).
    """
    return _BY_NAME[name]


def methods_where(**attrs: object) -> frozenset[str]:
    """The methods whose record has every given attribute value, e.g. ``methods_where(copy_based=True)``."""
    return frozenset(r.name for r in REGISTRY if all(getattr(r, k) == v for k, v in attrs.items()))


def is_method(name: str) -> bool:
    """Whether ``name`` is a method (not a strategy such as ``none``)."""
    return name in _BY_NAME
