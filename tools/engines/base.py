"""The engine interface: what every serving engine tells the rest of the tool, and nothing engine-specific itself.

One ``EngineSpec`` per engine (``tools/engines/<engine>.py``), registered in ``tools/engines/registry.py`` through
the same ``register`` call a plugin engine uses (simonw/llm registers its built-in models through the plugin hook;
vllm-project/speculators registers one config class per method). Everything that asks "how does this engine do
X?" calls a method or reads an attribute here instead of comparing the engine's name.

This module and ``registry.py`` sit at layer 0 (the engines' names are a closed set every input model reads); the
engine modules, which spell configurations and need the catalog and the Hub's id rules, sit above the hub
(docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.methods import is_method, method_record


# How a placeholder names a quantized build the user makes (AWQ is the common INT4 safetensors build).
QUANT_BUILD_WORDS = {"int4": "AWQ INT4", "int8": "INT8 (W8A8)", "fp8": "FP8", "nvfp4": "NVFP4", "mxfp4": "MXFP4"}


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for engine versions: '0.16.0' < '1.4.0rc1' < '1.4.0'; '' (every version) sorts first.

    A pre-release (rc, dev, a, b) sorts before its release. Text after the version is ignored.
    """
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)(?:\.?(rc|dev|a|b)(\d*))?", version or "")
    if m is None:
        return (-1,)
    nums = [int(x) for x in m.group(1).split(".")] + [0] * 3
    return (*nums[:4], 0 if m.group(2) else 1, int(m.group(3) or 0))


def at_least(version: str | None, minimum: str) -> bool:
    """Whether ``version`` (None: the newest build we track) is ``minimum`` or newer."""
    return version is None or version_key(version) >= version_key(minimum)


def shell_join(argv: list[str]) -> str:
    """The command line a shell turns back into exactly ``argv``."""
    return " ".join(shlex.quote(a) for a in argv)


@dataclass(frozen=True)
class Reservation:
    """How an engine reserves GPU memory: its knob, and the share of the GPU it takes by default."""

    knob: str  # the engine's own option name ("" when it has none)
    of_free: bool = False  # the fraction applies to the memory left after weights (TensorRT-LLM's KV pool)


@dataclass(frozen=True)
class Overlap:
    """An engine's overlap (async) scheduling of the speculative path at one release, for one method."""

    can: bool  # the engine overlaps this method's speculative path at all
    default: bool  # it does so by default at this release
    what: str  # the sentence naming the mode and its source
    hint: str = ""  # how to turn it on where it is off by default


@dataclass(frozen=True)
class ServeSpec:
    """What a launch needs besides the speculative flags: the user's interpreter or binary, model, port, extras."""

    executable: str
    model: str
    port: int
    served_name: str
    extra_args: tuple[str, ...] = ()


@dataclass
class EngineSpec:
    """One serving engine. Subclasses fill the facts and override the builders they have.

    Attributes:
        name: the engine's id in every input, output and data file.
        label: how answers name it.
        format: the format its speculative configuration is written in (``EngineConfig.format``).
        harness: the speed model's runtime constants it is costed with (tools/model/overhead.py).
        engine_harness: its harness is an engine's own, fitted on engine rows (not a papers' harness).
        metrics: its metric names and what they mean (the measurement plan, ``measure``).
        metrics_port: the port its launch command listens on in the measurement plan.
        read_step: how to turn its numbers into alpha / tau.
        single_user: it is run for one user: the measurement sample is the user's own sessions.
        reservation: how it reserves GPU memory.
        under_load: what to do above the break-even concurrency, in its own terms.
        schedule_form: how it takes a per-batch draft-length schedule ("" when it has none).
        tree_methods: methods it drafts a top-k tree for (the others run chains).
        kv_rollback: (how it takes back rejected drafts' KV, source).
        read_metrics: the metric names ``measure`` reads from it, which a measurement plan must name.
        sizes_placement: its configuration places the verifier's layers from the memory check (``--gpu``).
        layer_split: it splits whole layers over its GPUs (``--split-mode layer``) rather than tensor parallel.
        offloads: it runs the layers that do not fit the GPUs from system RAM (partial offload).
        serve_binary: the program ``tune`` starts when the user names none ("": this Python, ``-m`` the engine).
        launches: ``tune`` can start it as a server.
        overlap_mode: it has an overlap mode of its own that ``--spec-overlap`` states.
        plain_setup: a plain launch needs setup lines (conversion) the emitter writes.
    """

    name: str = ""
    label: str = ""
    format: str = ""
    harness: str = ""
    engine_harness: bool = False
    metrics: tuple[MetricRef, ...] = ()
    metrics_port: int = 0
    read_step: str = ""
    single_user: bool = False
    reservation: Reservation = field(default_factory=lambda: Reservation(""))
    under_load: str = ""
    schedule_form: str = ""
    tree_methods: frozenset[str] = frozenset()
    kv_rollback: tuple[str, str] = ("writes draft KV into paged slots and discards rejected ones",
                                    "engine design (paged KV)")
    read_metrics: tuple[str, ...] = ()
    sizes_placement: bool = False
    layer_split: bool = False
    offloads: bool = False
    serve_binary: str = ""
    launches: bool = False
    overlap_mode: bool = False
    # (first release, year): releases from that one on without a date in their name are that year's builds
    # (calibrate's newest-release class, tools/calibration/extrapolation.py).
    release_years: tuple[tuple[str, int], ...] = ()
    draft_tp_is_target: bool = False  # a separate draft model must run at the verifier's TP (vLLM V1)
    context_flag: str = ""  # its option for the longest sequence it sizes the KV cache for ("": none)
    # Weight formats it quantizes a BF16 checkpoint to at load time, with the words that ask for it.
    online_quantization: tuple[tuple[str, tuple[str, ...]], ...] = ()

    # -- configurations -------------------------------------------------------------------------------------
    def method_names(self, method: str) -> tuple[str, ...]:
        """Every spelling this engine accepts for ``method``, the one it is emitted with first (the method's own
        record holds them, each cited: ``MethodRecord.engine_keys``); empty when it has no word for it."""
        return method_record(method).engine_names(self.name) if is_method(method) else ()

    def emit(self, inp: Any, version: str) -> EngineConfig:
        """The configuration for one speculative setting (an ``EngineConfigInput``), at release ``version``."""
        raise NotImplementedError

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        """The inverse of ``emit``: the setting an emitted configuration states, as
        ``{"method": engine key, "num_draft_tokens": N, "draft_model": ..., ...}`` (None: it does not parse).
        Only what the engine spells is returned; a key it has no word for is left out."""
        raise NotImplementedError

    def plain_argv(self, inp: Any) -> tuple[list[str], list[str]]:
        """(the launch argv with speculation off, setup lines); an empty argv for an in-process library."""
        return [], []

    def plain_launch(self, inp: Any) -> tuple[list[str], str]:
        """(argv, launch command) with speculation off."""
        argv, _ = self.plain_argv(inp)
        return argv, shell_join(argv)

    def context_args(self, inp: Any) -> list[str]:
        """The words setting the context the memory check sized the KV for (``inp.context_tokens``; none unset):
        without them the engine sizes its KV for the model's whole position limit and can refuse to start."""
        if not self.context_flag or not getattr(inp, "context_tokens", None):
            return []
        return [self.context_flag, str(inp.context_tokens)]

    def checkpoint(self, inp: Any) -> tuple[str, list[str], list[str]]:
        """(the model it loads, words asking for the checked weight format, notes).

        ``inp.weight_format`` set: the memory check weighed a format the named checkpoint is not in. The engine's
        on-the-fly quantization where it has one for that format; else a placeholder naming the build to make,
        never the unquantized repo in silence.
        """
        fmt = getattr(inp, "weight_format", None)
        if not fmt:
            return inp.verifier, [], []
        online = dict(self.online_quantization).get(fmt)
        if online is not None:
            return inp.verifier, list(online), [f"{inp.verifier} is loaded at {fmt} by {self.label}'s on-the-fly "
                                                f"quantization ({' '.join(online)}), the format the memory check "
                                                "weighed"]
        placeholder = f"<your {QUANT_BUILD_WORDS.get(fmt, fmt.upper())} build of {inp.verifier}>"
        return placeholder, [], [f"the memory check weighed {fmt} weights and no {fmt} build of {inp.verifier} is "
                                 f"in the catalog, nor does {self.label} quantize to {fmt} at load time: replace "
                                 f"{placeholder} with your {fmt} checkpoint (the published repo does not fit)"]

    # -- serving (tune, watch) ------------------------------------------------------------------------------
    def serve_command(self, serve: ServeSpec, spec_args: list[str]) -> list[str]:
        """The full command starting the engine as a server on 127.0.0.1 (``launches`` engines only)."""
        raise NotImplementedError(f"{self.label} is not started as a server by this tool")

    def serve_spec_args(self, config: EngineConfig) -> list[str]:
        """The speculative words of ``serve_command`` for an emitted configuration."""
        return shlex.split(config.config)

    # -- the speed model and the planner --------------------------------------------------------------------
    def overlap(self, version: str | None, method: str, method_rec: Any) -> Overlap | None:
        """Its overlap scheduling of ``method``'s speculative path at ``version`` (``method_rec``: its registry
        record, None for a row without a method; returns None: no mode modelled)."""
        return None

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        """(usable GiB per GPU, the setting in words) under its default memory reservation."""
        return memory_gib, f"{self.label}: no memory reservation"

    def measure_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int]) -> list[str]:
        """Its own benchmark lines for the measurement plan (after the launch lines)."""
        return []

    def plan_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int], launch: str,
                      baseline: str) -> list[str]:
        """The measurement plan's commands: both launch lines, ``specpick measure`` against a server, then the
        engine's own benchmark lines."""
        out = [f"# speculative server:  {launch}", f"# baseline server:     {baseline}"]
        if self.metrics_port:
            out.append(f"specpick measure --endpoint http://HOST:{self.metrics_port} --baseline-endpoint "
                       f"http://HOST:{self.metrics_port + 1} --model {verifier} --prompts prompts.jsonl "
                       f"--concurrency {' '.join(str(c) for c in levels)} --expect recommendation.json")
        return out + self.measure_commands(verifier, strategy, concurrency, levels)
