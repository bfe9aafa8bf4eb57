"""Markdown rendering of a ``Recommendation`` with the five fixed section headings.

The headings (``SECTION_HEADINGS``) are part of the contract: SKILL.md tells
Claude to use them and the evals check them. JSON output is
``Recommendation.model_dump_json()``; this is the human form.
"""

from __future__ import annotations

from specpick.skill.schema import Recommendation
from specpick.tools.answer import SECTION_HEADINGS
from specpick.tools.calibration.evidence import measured_line
from specpick.tools.engines.lookup import label as engine_label

_MARK = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "info": "INFO"}
_FENCE = {"cli-json": "json", "cli-flags": "bash", "yaml": "yaml", "python-kwargs": "python", "none": ""}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _translation_lines(t) -> list[str]:  # type: ignore[no-untyped-def]
    """One engine's line of "the same setting on other engines"; a launch that reads a config file gets the lines
    writing that file beside it (TensorRT-LLM's config.yaml), so it runs as printed."""
    if t.config is None:
        return [f"- {engine_label(t.engine)}: not available ({t.reason})"]
    if not t.config.argv and t.config.config.strip():
        return [f"- {engine_label(t.engine)}: `{t.config.config}`"]
    if not (t.config.format == "yaml" and t.config.setup_commands):
        return [f"- {engine_label(t.engine)}: `{t.config.launch_command}`"]
    return [f"- {engine_label(t.engine)}:", "", "  ```bash", *("  " + line for c in t.config.setup_commands for line in c.splitlines()),
            "  " + t.config.launch_command, "  ```"]


def _params(rec: Recommendation) -> str:
    parts = []
    if rec.num_draft_tokens:
        parts.append(f"N={rec.num_draft_tokens}")
    if rec.tree and rec.tree.top_k > 1:
        parts.append(f"tree top-k={rec.tree.top_k}, depth={rec.tree.depth}, verify tokens={rec.tree.num_verify_tokens}")
    return ", ".join(parts)


def to_markdown(rec: Recommendation) -> str:
    """Render the five sections (plus a short context block)."""
    h = [f"## {t}" for t in SECTION_HEADINGS]
    s = rec.expected_speedup
    cfg = rec.engine_config
    out: list[str] = []

    head = rec.strategy_label + (f", {_params(rec)}" if _params(rec) else "")
    out += [h[0], "", f"**{head}**" + (f" with `{rec.draft_model}`" if rec.draft_model else ""),
            f"on {engine_label(rec.engine)} for `{rec.inputs.verifier}` ({rec.inputs.workload}, "
            f"{rec.inputs.sampling}, {rec.inputs.gpus}x {rec.inputs.gpu}, concurrency {rec.inputs.concurrency}).", ""]
    out += [f"- {r}" for r in rec.rationale]
    out += ["", f"Configuration ({engine_label(cfg.engine)}, option names as of {cfg.engine_version}):", ""]
    if cfg.config:
        out += [f"```{_FENCE[cfg.format]}", cfg.config.rstrip(), "```", ""]
    out += ["```bash", *cfg.setup_commands, cfg.launch_command, "```"]
    out += [f"- note: {n}" for n in cfg.notes]
    if cfg.translations:
        out += ["", "The same setting on other engines:"]
        # A library with no server (transformers) has no argv: its config, else its launch call, never an empty "``".
        for t in cfg.translations:
            out += _translation_lines(t)

    out += ["", h[1], ""]
    if rec.strategy == "none":
        out.append(f"**1.0x** (speculation off). {s.assumptions[0] if s.assumptions else ''}".rstrip())
    else:
        acc = f"alpha={s.alpha:.2f}, " if s.alpha is not None else ""
        out.append(f"**{s.value:.2f}x** (range {s.low:.2f}-{s.high:.2f}x) over plain decoding at concurrency "
                   f"{s.batch}, assuming {acc}tau={s.tau:.2f} accepted tokens per verify step "
                   f"({s.acceptance_source}).")
        if s.outside_domain:  # the model cannot price this verifier: the figure is a start, not an answer
            out += ["", "Outside the model's applicability domain (measure before relying on the figure): "
                    + "; ".join(s.outside_domain) + "."]
        out += ["", f"- cost ratio c (draft step / verifier step): {s.cost_ratio:.3f}",
                f"- cycle cost k (draft + verify, in verifier steps): {s.cycle_cost:.2f}",
                f"- {engine_label(rec.engine)} per-cycle runtime overhead: {s.engine_overhead:.2f} verifier steps"]
        out.append("- stops paying above concurrency "
                   f"{s.break_even_concurrency}" if s.break_even_concurrency else
                   "- still pays at the highest concurrency swept")
    if s.measured:
        out += ["", f"Measured elsewhere ({s.measured_method} on this verifier; engine rows with other hardware, "
                "releases and loads, not your deployment):"]
        out += [f"- {measured_line(m)}" for m in s.measured]
    out += ["", "Assumptions:"] + [f"- {a}" for a in s.assumptions]

    out += ["", h[2], "", "| check | verdict | why |", "|---|---|---|"]
    out += [f"| {c.name} | {_MARK[c.verdict]} | {_cell(c.reason)} |" for c in rec.compatibility]
    if rec.flags:
        out += ["", "Flags:"]
        out += [f"- **{f.severity.upper()} {f.id}**: {f.message} _(source: {f.source})_" for f in rec.flags]

    out += ["", h[3], ""]
    for i, step in enumerate(rec.fallback, 1):
        out.append(f"{i}. **If {step.condition}**: {step.action}")
    if rec.alternatives:
        out += ["", "Considered and not chosen:"]
        out += [f"- {a.strategy}" + (f" ({a.speedup:.2f}x)" if a.speedup else "") + f": {a.reason}"
                for a in rec.alternatives]

    m = rec.measurement_plan
    out += ["", h[4], "", f"Sample: {m.sample}.", "", "Definitions:"] + [f"- {d}" for d in m.definitions]
    out += ["", "Metrics:"] + [f"- `{x.name}`: {x.meaning}" for x in m.metrics]
    out += ["", "Commands:", "", "```bash", *m.commands, "```", "", "Steps:"]
    out += [f"{i}. {st}" for i, st in enumerate(m.steps, 1)]

    if rec.defaults_used:
        out += ["", "---", "Defaults used (say if they are wrong): " + "; ".join(rec.defaults_used) + "."]
    out.append(f"Model facts from: {rec.facts_source}.")
    return "\n".join(out) + "\n"
