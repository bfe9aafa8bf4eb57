"""Are the draft's and the verifier's tokenizers the same? One verdict model, two ways to get it.

* ``compare_loaded`` compares two real tokenizers token by token: the id→token
  map, BPE merges (or SentencePiece scores), special and added tokens,
  normalizer and pre-tokenizer, and the config ``vocab_size`` (padding).
* ``catalog_tokenizer_verdict`` answers from the embedded catalog only (no
  network), from each model's ``tokenizer_family``, ``tokenizer_specials`` and
  ``vocab_size``.
* ``compare_tokenizers`` fetches both tokenizers from the Hub (or its cache)
  and falls back to the catalog when the Hub cannot be asked.

Verdicts, from best to worst:

| verdict | meaning | check |
|---|---|---|
| identical | same ids, merges, specials; same config vocab_size | pass |
| identical_except_padding | same tokenizer, config vocab_size padded differently (Qwen2.5-0.5B 151936 vs 7B 152064) | warn |
| same_vocab_different_normalization | same ids and merges, text is normalized / pre-split differently | warn |
| same_vocab_different_specials | same regular ids, but BOS/EOS/PAD/UNK or added tokens differ | warn |
| different | regular tokens sit at different ids (Llama-2 vs Mistral-v0.1: 270 of 32000 agree) | fail |

Engines check at most ``vocab_size`` (vLLM, for draft models only), so a
same-size, different-mapping pair passes them silently; this is the check
that catches it (docs/references/ENGINES.md, issues #6-#9).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.hub.tokenizer_files import SPECIAL_ROLES, LoadedTokenizer, paused_gc, token_to_bytes
from specpick.tools.vocab import Verdict
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError
from specpick.tools.errors import UnavailableError
from specpick.tools.hub import client as hub
from specpick.tools.hub.tokenizer_files import parse_tokenizer_json
from specpick.tools.hub.tokenizer_files import parse_tokenizer_model
from specpick.tools.hub.tokenizer_files import parse_vocab_merges
from specpick.tools.hub.tokenizer_files import apply_configs

if TYPE_CHECKING:
    from specpick.tools.catalog.specs import ModelSpec

TokenizerRelation = Literal[
    "identical", "identical_except_padding", "same_vocab_different_normalization",
    "same_vocab_different_specials", "different",
]
VerdictSource = Literal["hub", "hub-cache", "catalog"]
_CHECK: dict[str, Verdict] = {
    "identical": "pass", "identical_except_padding": "warn", "same_vocab_different_normalization": "warn",
    "same_vocab_different_specials": "warn", "different": "fail",
}
MAX_EXAMPLES = 8


class TokenDifference(BaseModel):
    """One id whose token differs (``None`` = the id does not exist on that side)."""

    token_id: int
    draft: str | None
    verifier: str | None


class TokenizerSide(BaseModel):
    """What was compared for one model."""

    model_config = ConfigDict(extra="forbid")

    repo_id: str
    revision: str | None = None
    commit: str | None = None
    source: VerdictSource
    fallback_reason: str = ""
    kind: str = Field(description="tokenizer.json | sentencepiece | tiktoken | vocab.json+merges.txt | catalog")
    files: list[str] = []
    regular_tokens: int | None = None
    added_tokens: int | None = None
    total_tokens: int | None = Field(None, description="size of the tokenizer's id space")
    config_vocab_size: int | None = Field(None, description="config.json vocab_size (embedding rows, padding included)")
    specials: dict[str, str | None] | None = Field(None, description="bos/eos/pad/unk content; None = not known")
    tokenizer_family: str | None = None
    tokenizer_specials: str | None = None


class TokenizerVerdict(BaseModel):
    """Draft/verifier tokenizer compatibility, with the evidence."""

    model_config = ConfigDict(extra="forbid")

    verdict: TokenizerRelation
    check: Verdict = Field(description="pass / warn / fail for the compatibility table")
    level: Literal["tokens", "catalog"] = Field(description="tokens: real files compared; catalog: catalog facts")
    source: VerdictSource = Field(description="the weakest source used: hub > hub-cache > catalog")
    fallback_reason: str = ""
    summary: str
    draft: TokenizerSide
    verifier: TokenizerSide
    compared_ids: int | None = None
    same_id_count: int | None = Field(None, description="ids holding the same token string on both sides")
    shared_token_count: int | None = Field(None, description="token strings present on both sides, at any id")
    regular_mismatches: int | None = None
    merges_equal: bool | None = None
    normalizer_equal: bool | None = None
    pre_tokenizer_equal: bool | None = None
    special_differences: list[str] = []
    examples: list[TokenDifference] = []
    notes: list[str] = []


def _show(token: Any) -> str | None:
    if token is None or isinstance(token, str):
        return token
    return token.decode("utf-8", errors="backslashreplace")


def _merges_equal(a: list[Any] | None, b: list[Any] | None) -> bool | None:
    if a is None or b is None:
        return None
    if len(a) != len(b):
        return False
    if a and b and type(a[0]) is type(b[0]):
        return a == b
    # One side stores "x y" strings, the other [x, y] pairs (tokenizers >= 0.20).
    def pairs(merges: list[Any]) -> list[tuple[str, ...]]:
        return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]

    return pairs(a) == pairs(b)


def _same_layout(a: LoadedTokenizer, b: LoadedTokenizer) -> bool:
    return a.kind == b.kind or {a.kind, b.kind} <= {"tokenizer.json", "vocab.json+merges.txt"}


def compare_loaded(draft: LoadedTokenizer, verifier: LoadedTokenizer, draft_side: TokenizerSide,
                   verifier_side: TokenizerSide) -> TokenizerVerdict:
    """Compare two loaded tokenizers and build the verdict (see ``_compare``)."""
    with paused_gc():
        return _compare(draft, verifier, draft_side, verifier_side)


def _aligned_ids(draft: LoadedTokenizer, verifier: LoadedTokenizer,
                 notes: list[str]) -> tuple[list[Any], list[Any], set[int]]:
    """Both id maps (regular then added tokens) padded to one length, and the ids either side adds.

    Regular ids are compared as strings when both sides use the same token notation, else as canonical bytes.
    """
    d_regular, v_regular = draft.regular, verifier.regular
    if draft.token_format != verifier.token_format:
        d_regular = [token_to_bytes(t, draft.token_format) for t in d_regular]
        v_regular = [token_to_bytes(t, verifier.token_format) for t in v_regular]
        notes.append(f"regular tokens compared as bytes ({draft.token_format} vs {verifier.token_format} notation)")
    d_full = list(d_regular) + [None] * (draft.total_tokens - len(d_regular))
    v_full = list(v_regular) + [None] * (verifier.total_tokens - len(v_regular))
    for full, tok in ((d_full, draft), (v_full, verifier)):
        for token_id, content in tok.added.items():
            full[token_id] = content
    size = max(len(d_full), len(v_full))
    d_full += [None] * (size - len(d_full))
    v_full += [None] * (size - len(v_full))
    return d_full, v_full, set(draft.added) | set(verifier.added)


def _id_differences(d_full: list[Any], v_full: list[Any],
                    special_ids: set[int]) -> tuple[int, list[int], list[int], int]:
    """(ids holding the same token, regular ids that differ, added/special ids that differ, token strings the
    two maps share at any id)."""
    same = 0
    regular_diff: list[int] = []
    special_diff: list[int] = []
    for token_id, (a, b) in enumerate(zip(d_full, v_full)):
        if a == b:
            same += a is not None
        elif token_id in special_ids:
            special_diff.append(token_id)
        else:
            regular_diff.append(token_id)
    shared = len({t for t in d_full if t is not None} & {t for t in v_full if t is not None})
    return same, regular_diff, special_diff, shared


def _rules_equal(draft: LoadedTokenizer, verifier: LoadedTokenizer,
                 notes: list[str]) -> tuple[bool | None, bool | None, bool | None]:
    """(merges, normalizer, pre-tokenizer) equal, None where the layouts do not let them be compared."""
    merges_equal = _merges_equal(draft.merges, verifier.merges)
    if merges_equal is None and draft.scores is not None and verifier.scores is not None:
        merges_equal = draft.scores == verifier.scores  # SentencePiece: scores order the merges
    if merges_equal is None:
        notes.append(f"merge rules not compared ({draft.kind} vs {verifier.kind})")
    norm_equal = pre_equal = None
    if _same_layout(draft, verifier):
        if draft.normalizer is not None and verifier.normalizer is not None:
            norm_equal = draft.normalizer == verifier.normalizer
        if draft.pre_tokenizer is not None and verifier.pre_tokenizer is not None:
            pre_equal = draft.pre_tokenizer == verifier.pre_tokenizer
    if norm_equal is None:
        notes.append(f"normalizer/pre-tokenizer not compared ({draft.kind} vs {verifier.kind})")
    return merges_equal, norm_equal, pre_equal


def _special_messages(draft: LoadedTokenizer, verifier: LoadedTokenizer, full: tuple[list[Any], list[Any]],
                      special_diff: list[int], notes: list[str]) -> list[str]:
    """BOS/EOS/PAD roles that differ, then the first added/special ids that differ."""
    d_full, v_full = full
    special_msgs = [f"id {i}: {_show(d_full[i])!r} vs {_show(v_full[i])!r}" for i in special_diff[:MAX_EXAMPLES]]
    if len(special_diff) > MAX_EXAMPLES:
        special_msgs.append(f"... {len(special_diff) - MAX_EXAMPLES} more added/special ids differ")
    if draft.specials is not None and verifier.specials is not None:
        roles = [f"{role.upper()}: {draft.specials.get(role)!r} vs {verifier.specials.get(role)!r}"
                 for role in SPECIAL_ROLES if draft.specials.get(role) != verifier.specials.get(role)]
        return roles + special_msgs
    notes.append("BOS/EOS/PAD not compared: a tokenizer_config.json is missing on one side")
    return special_msgs


def _relation(regular_diff: list[int], rules: tuple[bool | None, bool | None, bool | None],
              special_msgs: list[str], padding: bool) -> TokenizerRelation:
    merges_equal, norm_equal, pre_equal = rules
    if regular_diff or merges_equal is False:
        return "different"
    if norm_equal is False or pre_equal is False:
        return "same_vocab_different_normalization"
    if special_msgs:
        return "same_vocab_different_specials"
    return "identical_except_padding" if padding else "identical"


def _compare(draft: LoadedTokenizer, verifier: LoadedTokenizer, draft_side: TokenizerSide,
             verifier_side: TokenizerSide) -> TokenizerVerdict:
    """Compare two loaded tokenizers and build the verdict.

    Regular ids are compared as strings when both sides use the same token
    notation, else as canonical bytes (so a tiktoken rank file and its
    byte-level ``tokenizer.json`` compare equal).
    """
    notes: list[str] = []
    d_full, v_full, special_ids = _aligned_ids(draft, verifier, notes)
    same, regular_diff, special_diff, shared = _id_differences(d_full, v_full, special_ids)
    rules = _rules_equal(draft, verifier, notes)
    special_msgs = _special_messages(draft, verifier, (d_full, v_full), special_diff, notes)
    padding = _padding_note(draft_side, verifier_side, notes)
    relation = _relation(regular_diff, rules, special_msgs, padding)
    examples = [TokenDifference(token_id=i, draft=_show(d_full[i]), verifier=_show(v_full[i]))
                for i in (regular_diff[:MAX_EXAMPLES] or special_diff[:MAX_EXAMPLES])]
    verdict = TokenizerVerdict(
        verdict=relation, check=_CHECK[relation], level="tokens", source=_weakest(draft_side, verifier_side),
        fallback_reason="; ".join(r for r in (draft_side.fallback_reason, verifier_side.fallback_reason) if r),
        summary="", draft=draft_side, verifier=verifier_side, compared_ids=len(d_full), same_id_count=same,
        shared_token_count=shared, regular_mismatches=len(regular_diff), merges_equal=rules[0],
        normalizer_equal=rules[1], pre_tokenizer_equal=rules[2], special_differences=special_msgs,
        examples=examples, notes=notes,
    )
    return verdict.model_copy(update={"summary": _summary(verdict, padding)})


def _padding_note(draft: TokenizerSide, verifier: TokenizerSide, notes: list[str]) -> bool:
    """True when the config vocab_size differs (embedding padding); notes impossible sizes."""
    for side in (draft, verifier):
        if side.config_vocab_size is not None and side.total_tokens and side.config_vocab_size < side.total_tokens:
            notes.append(f"{side.repo_id}: config vocab_size {side.config_vocab_size} is smaller than its "
                         f"tokenizer ({side.total_tokens} ids): ids past it cannot be embedded")
    if draft.config_vocab_size is None or verifier.config_vocab_size is None:
        notes.append("config vocab_size not known on both sides: padding not checked")
        return False
    return draft.config_vocab_size != verifier.config_vocab_size


def _weakest(*sides: TokenizerSide) -> VerdictSource:
    order = ["hub", "hub-cache", "catalog"]
    return max((s.source for s in sides), key=order.index)  # type: ignore[return-value]


def _summary(v: TokenizerVerdict, padding: bool) -> str:
    d, r = v.draft, v.verifier
    pad = (f" Config vocab_size differs ({d.config_vocab_size} vs {r.config_vocab_size}): pad the smaller "
           "embedding or let the engine do it." if padding else "")
    if v.verdict == "identical":
        return "Identical tokenizers: draft token ids mean the same to the verifier."
    if v.verdict == "identical_except_padding":
        return ("Same tokenizer; only the embedding padding differs "
                f"({d.config_vocab_size} vs {r.config_vocab_size} rows). Compatible after padding; engines that "
                "compare vocab_size (vLLM draft_model, transformers assisted generation) may still refuse it.")
    if v.verdict == "same_vocab_different_normalization":
        return ("Same ids and merges, but text is normalized or pre-split differently: the draft saw other "
                "segmentations in training; expect lower acceptance." + pad)
    if v.verdict == "same_vocab_different_specials":
        first = v.special_differences[0] if v.special_differences else "special tokens differ"
        return (f"Same regular vocabulary, different special/added tokens ({first}): usable for drafting, but "
                "check stop tokens and chat template; the draft may never emit the verifier's EOS." + pad)
    if v.level == "catalog":
        return (f"Different tokenizers ({d.tokenizer_family} vs {r.tokenizer_family}): draft ids would be "
                "read as other tokens. Use a same-family draft, or n-gram/suffix drafting.")
    return (f"Different tokenizers: only {v.same_id_count} of {v.compared_ids} ids hold the same token "
            f"({v.shared_token_count} token strings are shared, most at other ids). A draft model would "
            "propose garbage; use a same-family draft, or n-gram/suffix drafting.")


def catalog_tokenizer_verdict(draft: str, verifier: str, *, fallback_reason: str = "") -> TokenizerVerdict:
    """Tokenizer verdict from catalog facts alone (no network).

    Same ``tokenizer_family`` and ``tokenizer_specials`` and the same
    ``vocab_size`` → identical; same family and specials, other ``vocab_size``
    → identical_except_padding; same family, other specials →
    same_vocab_different_specials; other family → different.

    Raises:
        NotFoundError: a model is not in the catalog (with close matches).
    """

    catalog = get_catalog()
    return spec_tokenizer_verdict(catalog.model(draft), catalog.model(verifier), fallback_reason=fallback_reason)


def spec_tokenizer_verdict(d: ModelSpec, v: ModelSpec, *, fallback_reason: str = "") -> TokenizerVerdict:
    """``catalog_tokenizer_verdict`` on resolved specs (a draft the catalog lists only by size has a spec built
    from its row, tools/deploy/drafts.py)."""
    sides = [TokenizerSide(repo_id=m.repo_id, source="catalog", kind="catalog", config_vocab_size=m.vocab_size,
                           tokenizer_family=m.tokenizer_family, tokenizer_specials=m.tokenizer_specials,
                           fallback_reason=fallback_reason)
             for m in (d, v)]
    special_msgs: list[str] = []
    if d.tokenizer_family != v.tokenizer_family:
        relation: TokenizerRelation = "different"
    elif d.tokenizer_specials != v.tokenizer_specials:
        relation = "same_vocab_different_specials"
        special_msgs = [f"special-token set {d.tokenizer_specials!r} vs {v.tokenizer_specials!r}"]
    elif d.vocab_size != v.vocab_size:
        relation = "identical_except_padding"
    else:
        relation = "identical"
    notes = ["catalog-level verdict: token maps not compared; run with live Hub access to compare the files"]
    notes += [n for n in (d.tokenizer_note, v.tokenizer_note) if n]
    verdict = TokenizerVerdict(
        verdict=relation, check=_CHECK[relation], level="catalog", source="catalog",
        fallback_reason=fallback_reason, summary="", draft=sides[0], verifier=sides[1],
        special_differences=special_msgs, notes=notes,
    )
    return verdict.model_copy(update={"summary": _summary(verdict, relation == "identical_except_padding")})


# -- live comparison through the Hub ------------------------------------------------------------

_CANDIDATES = ("tokenizer.json", "tokenizer.model", "vocab.json + merges.txt")


def _fetch_tokenizer(repo_id: str, fetch: dict[str, Any], fetched: list[Any]) -> LoadedTokenizer:
    """The first tokenizer layout of ``_CANDIDATES`` the repo has, parsed; its files appended to ``fetched``.

    ``fetch`` holds ``hub.fetch_file``'s revision, settings and size cap.
    """
    from pathlib import Path


    unavailable: UnavailableError | None = None
    for candidate in _CANDIDATES:
        try:
            if candidate == "vocab.json + merges.txt":
                vocab = hub.fetch_file(repo_id, "vocab.json", **fetch)
                merges = hub.fetch_file(repo_id, "merges.txt", **fetch)
                tok = parse_vocab_merges(Path(vocab.path).read_bytes(), Path(merges.path).read_bytes())
                fetched += [vocab, merges]
            else:
                file = hub.fetch_file(repo_id, candidate, **fetch)
                parse = parse_tokenizer_json if candidate == "tokenizer.json" else parse_tokenizer_model
                tok = parse(Path(file.path).read_bytes(), f"{candidate} of {repo_id}")
                fetched.append(file)
            return tok
        except hub.EntryMissingError:
            continue
        except UnavailableError as exc:  # not cached: another layout may be
            unavailable = unavailable or exc
    if unavailable is not None:
        raise unavailable
    raise NotFoundError(f"no tokenizer files in {repo_id} (tried {', '.join(_CANDIDATES)}): "
                        "is this a model repo? Pass the base model's repo id")


def load_hub_tokenizer(repo_id: str, *, revision: str | None = None,
                       settings: Any = None) -> tuple[LoadedTokenizer, TokenizerSide]:
    """Fetch and parse one repo's tokenizer: tokenizer.json, else tokenizer.model, else vocab.json + merges.txt.

    ``tokenizer_config.json``, ``special_tokens_map.json`` and ``config.json``
    (for ``vocab_size``) are read when present.

    Raises:
        NotFoundError: no tokenizer file in the repo (names the files tried), or unknown repo/revision.
        UnavailableError: offline/unreachable and the files are not cached.
        RemoteDataError: malformed or oversized files.
        HubAccessError, InputError: as ``hub.fetch_file``.
    """

    settings = settings or hub.HubSettings()
    fetched: list[hub.FetchedFile] = []
    tok = _fetch_tokenizer(repo_id, {"revision": revision, "settings": settings,
                                     "max_bytes": settings.max_tokenizer_bytes}, fetched)

    def optional_json(name: str) -> dict[str, Any] | None:
        try:
            file = hub.fetch_optional(repo_id, name, revision=revision, settings=settings)
        except UnavailableError:
            return None  # offline and never fetched: compared without it, and the verdict says so
        if file is None:
            return None
        fetched.append(file)
        return hub.read_json_file(file)

    apply_configs(tok, optional_json("tokenizer_config.json"), optional_json("special_tokens_map.json"))
    config = optional_json("config.json") or {}
    text_config = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    vocab_size = config.get("vocab_size") or text_config.get("vocab_size")
    reasons = sorted({f.fallback_reason for f in fetched if f.fallback_reason})
    side = TokenizerSide(
        repo_id=repo_id, revision=revision or "main", commit=fetched[0].commit,
        source="hub-cache" if any(f.source == "hub-cache" for f in fetched) else "hub",
        fallback_reason="; ".join(reasons), kind=tok.kind, files=[f.filename for f in fetched],
        regular_tokens=sum(t is not None for t in tok.regular), added_tokens=len(tok.added),
        total_tokens=tok.total_tokens, config_vocab_size=vocab_size if isinstance(vocab_size, int) else None,
        specials=tok.specials,
    )
    return tok, side


def compare_tokenizers(draft: str, verifier: str, *, revision: str | None = None,
                       draft_revision: str | None = None, verifier_revision: str | None = None,
                       live: bool = True, settings: Any = None) -> TokenizerVerdict:
    """Compare the draft's and the verifier's tokenizers.

    Args:
        draft: draft model (Hub repo id; catalog names work when ``live`` is False).
        verifier: verifier model, same forms.
        revision: revision pin for both repos (``draft_revision``/``verifier_revision`` override it).
        live: fetch the real files through the Hub (or its cache); False = catalog facts only.
        settings: ``hub.HubSettings`` (endpoint, cache, offline, token); None = environment.

    Returns:
        The verdict; ``source`` says which source answered and ``fallback_reason`` why it fell back.

    Raises:
        InputError: invalid repo id or revision.
        HubAccessError: gated/private repo or rejected token.
        NotFoundError: unknown repo (close catalog matches), revision, or no tokenizer files.
        RemoteDataError: malformed or oversized tokenizer files.
        UnavailableError: offline/unreachable, nothing cached, and a model is not in the catalog.
    """

    if not live:
        return catalog_tokenizer_verdict(draft, verifier)
    hub.validate_repo_id(draft)
    hub.validate_repo_id(verifier)
    try:
        d_tok, d_side = load_hub_tokenizer(draft, revision=draft_revision or revision, settings=settings)
        v_tok, v_side = load_hub_tokenizer(verifier, revision=verifier_revision or revision, settings=settings)
    except UnavailableError as exc:
        try:
            return catalog_tokenizer_verdict(draft, verifier, fallback_reason=exc.message)
        except NotFoundError:
            raise exc from None
    return compare_loaded(d_tok, v_tok, d_side, v_side)
