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
        sweep_len_is_cap: ``max_sweep_draft_len`` is where measured speed peaks (longer N was measured and lost),
            not only the longest N published: no rule lengthens N past it, and no answer calls longer N untested.
        chain_decay: where acceptance falls along the chain (``ChainDecay``).
        autoregressive_head: a head drafting one token per forward from its own last hidden state (EAGLE-1/2/3,
            MTP): the kind engines schedule asynchronously, adapt the steps of, and refresh with an extend forward.
        tree_is_its_gain: the method's published gain over its parent is its tree (EAGLE-2 is EAGLE-1 weights plus
            a context-aware dynamic tree, arXiv 2406.16858), so a tree engine weighs the tree whatever alpha a prior
            gives.
        parallel_draft_layers: a parallel drafter's depth in decoder layers, each costed like an EAGLE-3 head
            layer on the verifier's geometry (0: not a drafter of its own on the verifier's hidden states).
        drafts_anchor: the parallel draft forward also runs the anchor (last accepted) position, N + 1 in all.
        drafter_fused_ok: its drafter may ship inside the verifier's checkpoint as well as in a repo of its own, so
            an engine configuration without a draft repo is valid (the engine loads the fused module).
        draft_size_rule: acceptance moves with the draft's size relative to the verifier (prior rule 3,
            ``draft_ratio_slope``): a separate autoregressive draft model.
        head_per_position: each drafted position is its own head, so N is at most the heads the checkpoint ships.
        borrows_acceptance_of: the method whose published acceptance stands in when this one has none, and
            ``borrow_note`` why (it is stated in every answer that rests on it).
        same_shape_variants: variants that draft and verify exactly as the plain method, so only acceptance
            differs between them (their same-setup gap moves a borrowed variant's rows, tools/model/same_setup.py).
        paper_tree: the tree its sources used when a published row does not say (depth, top-k, verify tokens incl.
            the root, source); also the papers' harness's default tree.
        paper_chain: the draft length its sources used when a published row does not say (N, source).
        engine_runs_as: (engine, method) pairs: the engine runs this method as that other one, so an estimate on
            that engine draws the other method's engine rows.
        engine_own_variants: (engine, why) pairs: the engine's rows for this method measure its own variant of it
            and speak for that engine only (the reason is stated where they are left out).
        engine_keys: how each engine names the method in its configuration, first the spelling we emit, then
            spellings the engine also accepts for it (sources: vLLM ``SpeculativeConfig.method``; SGLang
            ``--speculative-algorithm``; TensorRT-LLM ``decoding_type``; llama-server ``--spec-type`` @00dc805 —
            docs/references/). An engine missing here has no configuration key for the method.
        answer_label: how a recommendation's headline and rationale name it (``label`` is the short form used
            inside sentences).
        engine_preference: the engines the planner tries for it, best first, when the user names none (the
            engines that run it, ordered by how well: tools/data/engine_support.csv; vLLM first where it loads it).
        gguf_converted: llama.cpp loads its published drafters after conversion to GGUF (engine_support.csv
            llamacpp rows), so a llama.cpp deployment may take a head published for another runtime.
        batch_scheduled: engines schedule its chain draft length by batch size (vLLM/SGLang/TensorRT-LLM draft
            length per batch, skill/planner/schedule.py); trees and copy caps are left alone.
        blocking_flags: compatibility flags that rule the method out wherever they are raised at warn or fail
            (each flag's own definition says so: skill/planner/flags.py).
        speculators_type: ``speculators --speculator-type`` accepts it (tools/training/schema.py), so the
            speculators training recipe emits it by name.
        speculators_model_type: the ``speculators_model_type`` a speculators-format head config of this method
            states (github:vllm-project/speculators configs), where that config names the method itself.
        native_format: the checkpoint format its authors' own heads ship in (heads.csv ``format``: SafeAILab's
            EAGLE layout also for EAGLE-3 and P-EAGLE heads, FasterDecoding's Medusa, z-lab's DFlash, AMD's PARD,
            MTP layers inside the verifier); None when it has no heads of its own.
        planner_reason: why the planner keeps a model-free method as a candidate (it has no head or draft to
            name).
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
    sweep_len_is_cap: bool = False
    chain_decay: ChainDecay = "none"
    autoregressive_head: bool = False
    tree_is_its_gain: bool = False
    parallel_draft_layers: int = 0
    drafts_anchor: bool = False
    drafter_fused_ok: bool = False
    draft_size_rule: bool = False
    head_per_position: bool = False
    borrows_acceptance_of: str | None = None
    borrow_note: str = ""
    same_shape_variants: tuple[str, ...] = ()
    paper_tree: tuple[int, int, int, str] | None = None
    paper_chain: tuple[int, str] | None = None
    engine_runs_as: tuple[tuple[str, str], ...] = ()
    engine_own_variants: tuple[tuple[str, str], ...] = ()
    engine_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    answer_label: str = ""
    engine_preference: tuple[str, ...] = ()
    planner_reason: str = ""
    gguf_converted: bool = False
    batch_scheduled: bool = False
    blocking_flags: tuple[str, ...] = ()
    speculators_type: bool = False
    speculators_model_type: str | None = None
    native_format: str | None = None

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
    def in_verifier_checkpoint(self) -> bool:
        """Its draft layers ship inside the verifier's own checkpoint (MTP), so the verifier either has them or the
        method needs a drafter published in a repository of its own."""
        return self.loads == "verifier_layers"

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
    def fixed_tree(self) -> bool:
        """Every cycle verifies a tree, whatever the draft's top-k: Medusa's heads, Lookahead's n-gram pool (an
        autoregressive head drafts a tree only when asked for a top-k above 1)."""
        return self.tree and not self.autoregressive_head

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
    MethodRecord("draft_model", "draft model", "draft", "draft_lm", "chain", draft_size_rule=True,
                 paper_chain=(5, "HF assisted generation num_assistant_tokens=5 at the time (ENGINES.md, "
                                 "transformers); assumed for the EAGLE papers' SpS baseline"),
                 engine_keys=(("vllm", ("draft_model",)), ("sglang", ("STANDALONE",)), ("trtllm", ("DraftTarget",)),
                              ("llamacpp", ("draft-simple",))),
                 batch_scheduled=True,
                 answer_label="Draft model", engine_preference=("vllm", "sglang", "trtllm", "transformers")),
    MethodRecord("eagle", "EAGLE-1", "head", "head_repo", "static_tree", head_kind="eagle", max_sweep_draft_len=8,
                 chain_decay="always", autoregressive_head=True,
                 # mc_sim_7b_63 in SafeAILab/EAGLE: 25 nodes + root, max depth 5, first level top-4
                 paper_tree=(5, 4, 26, "EAGLE-1 static tree mc_sim_7b_63 (github:SafeAILab/EAGLE@08dc06c "
                                       "eagle/model/choices.py)"),
                 engine_keys=(("vllm", ("eagle",)), ("sglang", ("EAGLE",)), ("trtllm", ("Eagle",))),
                 batch_scheduled=True, speculators_model_type="eagle",
                 native_format="eagle",
                 answer_label="EAGLE", engine_preference=("vllm", "sglang", "trtllm")),
    # HASS trains EAGLE-2's head with harmonized objectives and decodes with EAGLE-2's dynamic tree (Zhang et al.
    # 2024, arXiv 2408.15766, sec. 4).
    MethodRecord("eagle2", "EAGLE-2", "head", "head_repo", "dynamic_tree", head_kind="eagle", max_sweep_draft_len=8,
                 chain_decay="always", autoregressive_head=True, tree_is_its_gain=True, same_shape_variants=("hass",),
                 paper_tree=(6, 10, 60, "EAGLE-2 paper tree: depth 6, top-10, 60 tokens (row config of "
                                        "EAGLE2-FIG/HASS)"),
                 # vLLM runs EAGLE-2 heads as method "eagle" (a static token tree at most, no context-aware dynamic
                 # tree: tools/data/engine_support.csv vllm/eagle2, vLLM PR #20401), so an EAGLE-2 head on vLLM
                 # accepts what EAGLE does there, not what the EAGLE-2 paper's dynamic tree did.
                 engine_runs_as=(("vllm", "eagle"),),
                 engine_keys=(("vllm", ("eagle",)), ("sglang", ("EAGLE",)), ("trtllm", ("Eagle",))),
                 answer_label="EAGLE-2", engine_preference=("sglang", "trtllm")),
    MethodRecord("eagle3", "EAGLE-3", "head", "head_repo", "dynamic_tree", head_kind="eagle3",
                 max_sweep_draft_len=8, chain_decay="engines", autoregressive_head=True,
                 paper_tree=(7, 10, 60, "EAGLE-3 repo defaults total_token=60, depth=7, top_k=10 (assumed for "
                                        "the paper)"),
                 engine_keys=(("vllm", ("eagle3",)), ("sglang", ("EAGLE3",)), ("trtllm", ("Eagle3", "Eagle")),
                              ("llamacpp", ("draft-eagle3",))),
                 gguf_converted=True, batch_scheduled=True, speculators_type=True, speculators_model_type="eagle3",
                 native_format="eagle",
                 answer_label="EAGLE-3", engine_preference=("vllm", "sglang", "trtllm")),
    # Medusa-2 trains the same heads jointly with the backbone and decodes with the same tree (Cai et al. 2024,
    # arXiv 2401.10774, sec. 2.3).
    MethodRecord("medusa", "Medusa", "head", "head_repo", "static_tree", head_kind="medusa", chain_decay="always",
                 head_per_position=True, same_shape_variants=("medusa-2",),
                 paper_tree=(4, 10, 64, "Medusa tree mc_sim_7b_63: 63 nodes + root, depth 4, top-10 "
                                        "(github:FasterDecoding/Medusa@5e98053 medusa/model/medusa_choices.py)"),
                 engine_keys=(("vllm", ("medusa",)), ("trtllm", ("Medusa",))),
                 speculators_model_type="medusa",
                 native_format="medusa",
                 answer_label="Medusa", engine_preference=("vllm", "trtllm")),
    MethodRecord("mtp", "MTP", "head", "verifier_layers", "chain", head_kind="mtp", own_module=True,
                 max_sweep_draft_len=3, sweep_len_is_cap=True, chain_decay="always", autoregressive_head=True,
                 engine_keys=(("vllm", ("mtp",)), ("sglang", ("NEXTN", "EAGLE")), ("trtllm", ("MTP",)),
                              ("llamacpp", ("draft-mtp",))),
                 batch_scheduled=True, speculators_type=True, blocking_flags=("mtp_not_available",),
                 native_format="mtp",
                 answer_label="MTP", engine_preference=("vllm", "sglang", "trtllm")),
    MethodRecord("lookahead", "lookahead", "model_free", "nothing", "pool", measured_tau=True,
                 engine_keys=(("trtllm", ("Lookahead",)),),
                 answer_label="Lookahead", engine_preference=("trtllm",),
                 planner_reason=("Jacobi iteration with an n-gram pool; no extra weights (TensorRT-LLM TRT-engine "
                                 "backend)")),
    MethodRecord("ngram", "n-gram (prompt lookup)", "model_free", "nothing", "chain", copy_based=True,
                 paper_chain=(10, "prompt lookup num_pred_tokens=10 (PLD-RAW config)"),
                 # TensorRT-LLM's NGram drafter keeps one n-gram pool for all requests by default
                 # (NGramDecodingConfig is_public_pool=True, nvidia.github.io/TensorRT-LLM/1.4.0rc4/llm-api/reference/
                 # NGramDecodingConfig.html): on a dataset of similar requests it copies from earlier requests'
                 # outputs (TRTLLM-BLOG7-NGRAM: tau 3.4-4.7 on translation), which the per-request prompt lookup of
                 # vLLM, SGLang and the papers cannot.
                 engine_own_variants=(("trtllm", "TensorRT-LLM's n-gram rows left out: its NGram drafter shares one "
                                                 "pool across requests (is_public_pool=True), unlike per-request "
                                                 "prompt lookup"),),
                 engine_keys=(("vllm", ("ngram",)), ("sglang", ("NGRAM",)), ("trtllm", ("NGram",)),
                              ("llamacpp", ("ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod",
                                            "ngram-cache"))),
                 batch_scheduled=True, blocking_flags=("low_overlap_ngram",),
                 answer_label="N-gram (prompt lookup)", engine_preference=("vllm", "sglang", "trtllm", "transformers"),
                 planner_reason=("copies continuations of n-grams already in the context; no extra weights")),
    # Suffix decoding drafts from the prompt and earlier outputs, as prompt lookup does from the prompt; REST (the only
    # other suffix-matching rows) drafts from an external corpus (The Stack, UltraChat), whose matches a production
    # suffix cache does not have. So prompt-lookup rows are the conservative base.
    MethodRecord("suffix", "suffix decoding", "model_free", "nothing", "chain", copy_based=True, measured_tau=True,
                 borrows_acceptance_of="ngram",
                 borrow_note="no published suffix-decoding acceptance in our data: prompt-lookup (n-gram) rows used, "
                             "since both draft from text already seen; suffix can do better on repetitive agentic "
                             "traffic, where its cache of earlier outputs matches more (measure it)",
                 engine_keys=(("vllm", ("suffix",)),),
                 answer_label="Suffix decoding", engine_preference=("vllm",),
                 planner_reason=("suffix-tree speculation over the prompt and earlier outputs (Arctic Inference); "
                                 "pays on repetitive and agentic traffic")),
    # DFlash drafters: 5 decoder layers (SpecForge configs/qwen3-8b-dflash.json, H=4096), over a block of the anchor
    # and N mask positions in one non-causal forward.
    MethodRecord("dflash", "DFlash", "head", "drafter_repo", "chain", head_kind="dflash", parallel_draft=True,
                 start_draft_len=15, max_sweep_draft_len=15, parallel_draft_layers=5, drafts_anchor=True,
                 paper_chain=(15, "z-lab -b16 drafters draft a block of 16 = anchor + 15 tokens (z-lab/dflash README; "
                                  "SGLang --speculative-num-draft-tokens 16)"),
                 engine_keys=(("vllm", ("dflash",)), ("sglang", ("DFLASH",)), ("trtllm", ("DFlash",)),
                              ("llamacpp", ("draft-dflash",))),
                 gguf_converted=True, speculators_type=True, speculators_model_type="dflash",
                 native_format="dflash",
                 answer_label="DFlash (block-diffusion drafter)", engine_preference=("vllm", "sglang", "trtllm")),
    # DSpark (DeepSeek, DeepSpec; vLLM PR #46995): a DFlash-style block backbone drafts every position in one
    # forward, a low-rank Markov head then samples the block left to right (intra-block dependency) and a
    # confidence head can cut it short. Its drafter ships in the verifier's checkpoint (DeepSeek-V4 ``mtp.*``) or
    # in its own repo (speculators ``*.dspark``). Option names: vLLM SpeculativeConfig.method "dspark"
    # (vllm/config/speculative.py @002e77c), SGLang --speculative-algorithm DSPARK (PR #29538), TensorRT-LLM
    # DSparkDecodingConfig decoding_type "DSpark" (API reference 1.3.0rc27), llama-server --spec-type draft-dspark
    # (llama.cpp PR #25173). N is the drafter's block: 7 for DeepSeek's released drafters (DeepSpec README,
    # *_block7) and the RedHatAI recipes; vLLM checks num_speculative_tokens == block_size (Qwen3-Omni DSpark,
    # vllm/config/speculative.py), so the sweep stays at 7.
    # DeepSeek-V4's fused checkpoints carry the DSpark module: their recipes serve {"method":"dspark"} without a
    # "model" (github:vllm-project/recipes@8959cf6 models/deepseek-ai/DeepSeek-V4-Flash.yaml, -Pro.yaml).
    MethodRecord("dspark", "DSpark", "head", "drafter_repo", "chain", head_kind="dspark", parallel_draft=True,
                 start_draft_len=7, max_sweep_draft_len=7, parallel_draft_layers=5, drafter_fused_ok=True,
                 engine_keys=(("vllm", ("dspark",)), ("sglang", ("DSPARK",)), ("trtllm", ("DSpark",)),
                              ("llamacpp", ("draft-dspark",))),
                 answer_label="DSpark (block drafter + Markov head)", engine_preference=("vllm", "sglang", "trtllm")),
    # vLLM runs P-EAGLE as an EAGLE-3 head with parallel_drafting (>= 0.16.0, PR #32887). P-EAGLE drafters: 4
    # decoder layers over N mask positions in one pass (amazon/gpt-oss-120b-p-eagle card, heads_new.csv).
    MethodRecord("peagle", "P-EAGLE", "head", "drafter_repo", "chain", head_kind="peagle", parallel_draft=True,
                 start_draft_len=7, max_sweep_draft_len=8, parallel_draft_layers=4,
                 engine_keys=(("vllm", ("eagle3",)),),
                 speculators_type=True,
                 native_format="eagle",
                 answer_label="P-EAGLE (parallel-drafting EAGLE-3)", engine_preference=("vllm",)),
    # vLLM runs PARD as a draft model with parallel_drafting (>= 0.16.0, PR #32887).
    MethodRecord("pard", "PARD", "draft", "draft_lm", "chain", parallel_draft=True, start_draft_len=12,
                 max_sweep_draft_len=12,
                 paper_chain=(12, "vLLM parallel_draft_model doc example num_speculative_tokens=12 (assumed for the "
                                  "PARD rows)"), engine_keys=(("vllm", ("draft_model",)), ("trtllm", ("PARD",))),
                 native_format="pard",
                 answer_label="PARD (parallel draft model)", engine_preference=("vllm", "trtllm")),
)
# EAGLE-3.1 (arXiv 2605.09992) is not a method of its own: its heads load through the EAGLE-3 keys of every
# engine (vLLM method eagle3, SGLang EAGLE3, TensorRT-LLM Eagle3), so it is an eagle3 head.

METHOD_NAMES: tuple[str, ...] = tuple(r.name for r in REGISTRY)
# The planner weighs candidates in this order and breaks ties by it (trained heads first, then drafters, then
# model-free drafting).
CANDIDATE_ORDER: tuple[str, ...] = ("eagle3", "eagle2", "eagle", "medusa", "mtp", "dspark", "dflash", "peagle",
                                    "draft_model", "pard", "ngram", "suffix", "lookahead")
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
