"""Eval definitions: ``Case`` (inputs, opening message, hidden facts, expected answer) and ``Dataset``.

Vocabulary after pydantic_evals / inspect_ai: a *case* is what is asked and what a
correct answer looks like; *graders* (``evals/evaluators/graders.py``) compare one run's output
with it, one field at a time; *runners* (``evals/runners.py``) produce that output;
the *report* (``evals/report.py``) aggregates. Case files live in
``evals/cases/*.yaml``, one file per category; every model here rejects unknown
fields, so a typo in a case file is a load error, not a silently ignored check.

Expected answers are written from the sources (the seed's rules, papers in
``tools/data/published_measurements.csv`` cited by line, ENGINES.md issues, catalog facts),
never from what the planner happens to print.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specpick.evals.coverage_ids import COVERAGE_IDS
from specpick.evals.flag_triggers import untriggered
from specpick.evals.provenance import check_ref
from specpick.skill.schema import FlagId, PlannerInputs, Trigger
from specpick.tools.errors import EXIT_ACCESS, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_UNAVAILABLE
from specpick.tools.vocab import Engine, Strategy, Verdict

CASES_DIR = Path(__file__).resolve().parent / "cases"

ErrorClass = Literal["input", "not_found", "access", "unavailable"]
# The exit code each expected error class must carry (tools/errors.py EXIT_CODES).
ERROR_EXIT: dict[str, int] = {
    "input": EXIT_INPUT, "not_found": EXIT_NOT_FOUND, "access": EXIT_ACCESS, "unavailable": EXIT_UNAVAILABLE,
}
Outcome = Literal["recommend", "error", "decline"]
RunnerName = Literal["planner", "agent"]
CheckName = Literal[
    "tokenizer", "vocab_padding", "head_match", "vram_fit", "runtime_support", "kv_rollback", "known_issues",
    "sampling", "parallelism",
]
TriggerMetric = str  # validated against Trigger.metric below; "alpha|tau" means either
_TRIGGER_METRICS = set(Trigger.model_fields["metric"].annotation.__args__)  # type: ignore[union-attr]
_INPUT_FIELDS = set(PlannerInputs.model_fields)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Range(_Strict):
    """A closed numeric interval; either bound may be open. YAML shorthand: ``[3, 7]``."""

    min: float | None = None
    max: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)):
            if len(data) != 2:
                raise ValueError("a range list needs exactly two items: [min, max]")
            return {"min": data[0], "max": data[1]}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min is None and self.max is None:
            raise ValueError("a range needs at least one bound")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"range min {self.min} is above max {self.max}")
        return self

    def contains(self, x: float) -> bool:
        return (self.min is None or x >= self.min - 1e-9) and (self.max is None or x <= self.max + 1e-9)

    def __str__(self) -> str:
        lo = "-inf" if self.min is None else f"{self.min:g}"
        hi = "inf" if self.max is None else f"{self.max:g}"
        return f"[{lo}, {hi}]"


class TreeExpect(_Strict):
    """Ranges for tree parameters (only graded when the chosen strategy runs a tree on a tree engine)."""

    depth: Range | None = None
    top_k: Range | None = None
    num_verify_tokens: Range | None = None


class SpeedupBand(_Strict):
    """Where the point estimate must fall, and why (cite published-dev.csv lines / issues)."""

    low: float = Field(gt=0)
    high: float = Field(gt=0)
    basis: str = Field(min_length=10, description="the rows and reasoning behind the band")

    @model_validator(mode="after")
    def _ordered(self) -> SpeedupBand:
        if self.low > self.high:
            raise ValueError(f"speedup band low {self.low} is above high {self.high}")
        return self


class CompatExpect(_Strict):
    """Allowed verdicts of one compatibility check; ``when``: only if one of these strategies was chosen."""

    verdicts: list[Verdict] = Field(min_length=1)
    when: list[Strategy] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        return {"verdicts": data} if isinstance(data, list) else data


class ConfigExpect(_Strict):
    """A key of the emitted engine config (vLLM JSON, TRT-LLM speculative_config, SGLang flag without '--')."""

    strategy: Strategy
    key: str
    range: Range | None = None
    equals: str | int | float | bool | None = None
    absent: bool = False
    present: bool = False
    why: str = ""

    @model_validator(mode="after")
    def _one_kind(self) -> ConfigExpect:
        kinds = [self.range is not None, self.equals is not None, self.absent, self.present]
        if sum(kinds) != 1:
            raise ValueError("a config expectation needs exactly one of range, equals, absent, present")
        return self


def _per_strategy(data: Any) -> Any:
    """Allow a bare value as shorthand for ``{"*": value}`` (applies whatever strategy was chosen)."""
    if data is None or (isinstance(data, dict) and all(k == "*" or k in _STRATEGIES for k in data)):
        return data
    return {"*": data}


_STRATEGIES = set(Strategy.__args__)  # type: ignore[attr-defined]


class ExpectedAnswer(_Strict):
    """What a correct answer looks like. Fields left empty are "not applicable" for their grader."""

    outcome: Outcome = "recommend"
    error: ErrorClass | None = Field(None, description="outcome=error: the error class (and so the exit code)")
    or_error: ErrorClass | None = Field(None, description="an error of this class is also a right answer")
    strategies: list[Strategy] | Literal["any"] = Field(default_factory=list, description="acceptable strategies")
    forbidden_strategies: list[Strategy] = Field(default_factory=list,
                                                 description="never chosen, never offered as a fallback")
    num_draft_tokens: dict[str, Range] | None = Field(None, description="N range per strategy ('*': any)")
    tree: TreeExpect | None = None
    speedup: dict[str, SpeedupBand] | None = Field(None, description="band per strategy ('*': any)")
    flags: list[FlagId] = Field(default_factory=list, description="required flag ids")
    flags_if: dict[Strategy, list[FlagId]] = Field(default_factory=dict,
                                                   description="flags required only if that strategy is chosen")
    forbidden_flags: list[FlagId] = Field(default_factory=list)
    flag_severity: dict[FlagId, list[Literal["info", "warn", "fail"]]] = Field(
        default_factory=dict, description="allowed severities of required flags (a hard FAIL is severity fail)")
    compatibility: dict[CheckName, CompatExpect] = Field(default_factory=dict)
    engine: Engine | None = None
    draft_models: dict[Strategy, list[str]] = Field(default_factory=dict,
                                                    description="acceptable draft/head repo ids per strategy")
    config: list[ConfigExpect] = Field(default_factory=list)
    fallback_metrics: list[TriggerMetric] = Field(default_factory=list,
                                                  description="trigger metrics the fallback must use; a|b = either")
    mentions: list[str] = Field(default_factory=list, description="regexes the markdown must match")
    rubric: list[str] = Field(default_factory=list, description="points for the optional model-graded rubric")
    why_acceptable: dict[Strategy, str] = Field(
        default_factory=dict, description="several acceptable strategies: the list is ranked, and each says why it "
                                          "is acceptable (its source)")

    @field_validator("num_draft_tokens", "speedup", mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        return _per_strategy(v)

    @field_validator("fallback_metrics")
    @classmethod
    def _metrics(cls, v: list[str]) -> list[str]:
        for group in v:
            bad = [m for m in group.split("|") if m not in _TRIGGER_METRICS]
            if bad:
                raise ValueError(f"unknown trigger metric(s) {bad}; known: {sorted(_TRIGGER_METRICS)}")
        return v

    @field_validator("mentions")
    @classmethod
    def _regexes(cls, v: list[str]) -> list[str]:
        for pattern in v:
            re.compile(pattern)
            # a single word matches answers that merely name the topic; a phrase has to say something about it
            single = [alt for alt in _alternatives(pattern) if len(re.findall(r"[A-Za-z0-9_.-]+", alt)) < 2]
            if single:
                raise ValueError(f"mention '{pattern}': alternative(s) {single} are single words; require a phrase "
                                 "(two words or more), e.g. 'draft temperature'")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ExpectedAnswer:
        if self.outcome == "error" and self.error is None:
            raise ValueError("outcome 'error' needs an error class (input, not_found, access, unavailable)")
        if self.outcome != "error" and self.error is not None:
            raise ValueError("an error class only goes with outcome 'error'")
        if self.or_error is not None and self.outcome == "decline":
            raise ValueError("or_error does not go with outcome 'decline'")
        if self.or_error is not None and self.or_error == self.error:
            raise ValueError("or_error repeats the expected error class")
        bad_sev = set(self.flag_severity) - set(self.flags) - {f for fs in self.flags_if.values() for f in fs}
        if bad_sev:
            raise ValueError(f"flag_severity names flags that are not required: {sorted(bad_sev)}")
        if self.outcome == "recommend" and not self.strategies:
            raise ValueError("outcome 'recommend' needs acceptable strategies (or 'any')")
        if self.outcome != "recommend" and self.strategies:
            raise ValueError(f"outcome '{self.outcome}' cannot list acceptable strategies")
        if isinstance(self.strategies, list):
            if len(self.strategies) > 1:
                unexplained = [s for s in self.strategies if not self.why_acceptable.get(s, "").strip()]
                if unexplained:
                    raise ValueError(f"several acceptable strategies: why_acceptable must give each one's reason "
                                     f"(missing for {unexplained})")
            stray = set(self.why_acceptable) - set(self.strategies)
            if stray:
                raise ValueError(f"why_acceptable names strategies that are not acceptable: {sorted(stray)}")
            both = set(self.strategies) & set(self.forbidden_strategies)
            if both:
                raise ValueError(f"strategies both acceptable and forbidden: {sorted(both)}")
        clash = set(self.flags) & set(self.forbidden_flags)
        if clash:
            raise ValueError(f"flags both required and forbidden: {sorted(clash)}")
        return self

    def acceptable(self, strategy: str) -> bool:
        return self.strategies == "any" or strategy in self.strategies


def _alternatives(pattern: str) -> list[str]:
    """The top-level ``|`` alternatives of a regex (groups kept whole)."""
    out, depth, cur = [], 0, ""
    for ch in pattern:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


class AgentExpect(_Strict):
    """Extra expectations for the conversational runner."""

    must_ask: list[str] = Field(default_factory=list,
                                description="regexes: the agent must ask about these before answering")
    mentions: list[str] = Field(default_factory=list, description="regexes the agent's prose must match")
    expected: ExpectedAnswer | None = Field(None, description="replaces `expected` for agent runs")
    max_turns: int = Field(8, ge=1, le=30)


class HiddenFacts(_Strict):
    """What the simulated user knows but only says when asked."""

    facts: dict[str, str] = Field(default_factory=dict, description="topic -> the user's answer")
    stated: list[str] = Field(default_factory=list,
                              description="input fields the opening message already states")
    persona: str = Field("", description="how the user behaves (terse, contradicts itself, off-topic...)")


class Case(_Strict):
    """One eval case."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{2,80}$")
    category: str
    title: str = Field(min_length=5)
    inputs: dict[str, Any] = Field(default_factory=dict, description="PlannerInputs fields, as given")
    opening_message: str = Field(min_length=3)
    hidden: HiddenFacts = Field(default_factory=HiddenFacts)
    expected: ExpectedAnswer
    agent: AgentExpect = Field(default_factory=AgentExpect)
    covers: list[str] = Field(default_factory=list, description="coverage ids (evals/coverage_ids.py)")
    sources: list[str] = Field(min_length=1, description="where the expectation comes from, in words")
    ground_truth: list[str] = Field(min_length=1, description="public https URLs or tools/data row ids "
                                                              "('engine_measurements.csv:VLLM-16937') the "
                                                              "expectation is written from")
    release: str = Field(min_length=3, description="the engine release the expectation holds for, e.g. "
                                                   "'vllm 0.14.0+' or 'sglang @067ad4d'")
    runners: list[RunnerName] = Field(default_factory=lambda: ["planner", "agent"], min_length=1)
    notes: str = ""

    @field_validator("covers")
    @classmethod
    def _known_coverage(cls, v: list[str]) -> list[str]:
        unknown = [c for c in v if c not in COVERAGE_IDS]
        if unknown:
            raise ValueError(f"unknown coverage id(s) {unknown}; see evals/coverage_ids.py")
        return v

    @model_validator(mode="after")
    def _inputs_valid(self) -> Case:
        unknown = set(self.inputs) - _INPUT_FIELDS
        if unknown:  # a typo must never pass as an "expected input error"
            raise ValueError(f"unknown input field(s) {sorted(unknown)}; PlannerInputs has {sorted(_INPUT_FIELDS)}")
        if "planner" in self.runners and self.expected.outcome == "recommend":
            PlannerInputs.model_validate(self.inputs)
        if "planner" in self.runners and self.expected.outcome == "decline":
            raise ValueError("the planner cannot decline; run 'decline' cases on the agent runner only")
        bad_refs = [err for err in map(check_ref, self.ground_truth) if err]
        if bad_refs:
            raise ValueError("ground_truth: " + "; ".join(bad_refs))
        for exp in (self.expected, self.agent.expected):
            if exp is None:
                continue
            flags = list(exp.flags) + [f for fs in exp.flags_if.values() for f in fs]
            idle = untriggered(flags, self.inputs)
            if idle:
                raise ValueError(f"required flag(s) this deployment does not trigger: {idle}; a flag every answer "
                                 "raises anyway grades nothing")
        bad_stated = set(self.hidden.stated) - _INPUT_FIELDS
        if bad_stated:
            raise ValueError(f"hidden.stated names unknown input field(s) {sorted(bad_stated)}")
        return self

    def planner_inputs(self) -> PlannerInputs:
        """The structured inputs (raises pydantic ValidationError when they are invalid)."""
        return PlannerInputs.model_validate(self.inputs)

    def expected_for(self, runner: str) -> ExpectedAnswer:
        if runner == "agent" and self.agent.expected is not None:
            return self.agent.expected
        return self.expected


class CaseFile(_Strict):
    """One YAML file: a category and its cases (cases inherit the category)."""

    category: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    description: str = ""
    cases: list[dict[str, Any]] = Field(min_length=1)


MAX_CASE_FILE_BYTES = 1_000_000  # the largest packaged file is ~20 KB; an 11 MB file took minutes to parse
MAX_CASE_FILES = 200
MAX_YAML_DEPTH = 32  # cases nest 4-5 levels; the composer recurses per level


def load_yaml_file(path: Path) -> Any:
    """Parse one case file as plain data: size-bounded, safe tags only, no aliases, bounded nesting.

    ``yaml.safe_load`` already refuses ``!!python/object``; this also refuses aliases (``*name``: an alias bomb
    expands exponentially at construction, and no case file needs them) and deep nesting, by walking the parser's
    events before anything is constructed, and words every problem as ``file:line: what``.

    Raises:
        ValueError: unreadable, too large, not YAML, or using a refused feature (file and line named).
    """
    try:
        size = path.stat().st_size
        if size > MAX_CASE_FILE_BYTES:
            raise ValueError(f"{path}: {size:,} bytes, above the {MAX_CASE_FILE_BYTES:,}-byte bound for a case file")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser where PyYAML has it
    try:
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.AliasEvent):
                raise ValueError(f"{path}:{line}: YAML aliases (*{event.anchor}) are not allowed in case files; "
                                 "write the value out")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ValueError(f"{path}:{line}: nested more than {MAX_YAML_DEPTH} levels deep")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        what = " ".join(str(exc.problem or exc.context or "malformed YAML").split())
        raise ValueError(f"{where}: not valid case YAML ({what}); only plain YAML data is read") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid case YAML ({' '.join(str(exc).split())[:200]})") from None


class Dataset(BaseModel):
    """All cases, loaded from a directory of YAML files."""

    model_config = ConfigDict(extra="forbid")

    cases: list[Case]

    @model_validator(mode="after")
    def _unique(self) -> Dataset:
        seen: set[str] = set()
        dupes = [c.id for c in self.cases if c.id in seen or seen.add(c.id)]  # type: ignore[func-returns-value]
        if dupes:
            raise ValueError(f"duplicate case id(s): {dupes}")
        return self

    @classmethod
    def load(cls, directory: Path | str | None = None) -> Dataset:
        """Load every ``*.yaml`` file under ``directory`` (default: the packaged cases).

        Raises:
            ValueError: a file does not parse or a case does not validate (the message names the file and case).
        """
        root = Path(directory) if directory is not None else CASES_DIR
        files = sorted(root.glob("*.yaml"))
        if not files:
            raise ValueError(f"no *.yaml case files in {root}")
        if len(files) > MAX_CASE_FILES:
            raise ValueError(f"{root} holds {len(files)} *.yaml files; at most {MAX_CASE_FILES} are read")
        cases: list[Case] = []
        for path in files:
            raw = load_yaml_file(path)
            try:
                cf = CaseFile.model_validate(raw)
            except ValueError as exc:
                raise ValueError(f"{path.name}: {exc}") from None
            for i, item in enumerate(cf.cases):
                if "category" in item and item["category"] != cf.category:
                    raise ValueError(f"{path.name} case {i}: category differs from the file's ({cf.category})")
                try:
                    cases.append(Case.model_validate({**item, "category": cf.category}))
                except ValueError as exc:
                    raise ValueError(f"{path.name} case {item.get('id', i)}: {exc}") from None
        return cls(cases=cases)

    def select(self, *, categories: list[str] | None = None, ids: list[str] | None = None,
               runner: str | None = None) -> list[Case]:
        """Cases matching every given filter (unknown category or id names raise ValueError)."""
        if categories:
            unknown = set(categories) - self.categories
            if unknown:
                raise ValueError(f"unknown categories {sorted(unknown)}; known: {sorted(self.categories)}")
        if ids:
            unknown = set(ids) - {c.id for c in self.cases}
            if unknown:
                raise ValueError(f"unknown case ids {sorted(unknown)}")
        return [c for c in self.cases
                if (not categories or c.category in categories) and (not ids or c.id in ids)
                and (runner is None or runner in c.runners)]

    @cached_property
    def categories(self) -> set[str]:
        return {c.category for c in self.cases}
