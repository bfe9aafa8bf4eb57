"""A GGUF build named as a verifier (a local ``.gguf`` path or a Hub GGUF repo) -> the model it was converted from
and its quantization.

llama.cpp users name their model the way they load it: ``./Llama-3.1-8B-Instruct-Q4_K_M.gguf`` or
``bartowski/Meta-Llama-3.1-8B-Instruct-GGUF`` (``llama-server -hf`` also takes ``repo:Q4_K_M``). The weights are
quantized, but the architecture, tokenizer and published heads are the original model's, so the answer is about that
model at that weight format. Where each fact comes from, in order:

* a local file: its GGUF header (``general.file_type``; the names ``general.name``, ``general.basename`` +
  ``general.size_label`` + ``general.finetune``) and its file name (``<model>-<QUANT>.gguf``);
* a Hub repo: the model card's ``base_model`` (with ``live``; GGUF publishers set it to the model they quantized), else
  the repo name without its ``-GGUF`` suffix; the quantization from ``:QUANT``, else llama.cpp's ``-hf`` default
  (Q4_K_M when the repo has it, ``common/arg.cpp``).

Nothing is guessed from a neighbour: a name the catalog does not know is a not-found with what to do.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError
from specpick.tools.hub.gguf import GgufMetadata, read_local_metadata
from specpick.tools.vocab import QUANTIZATIONS, normalize_quantization
from specpick.tools.errors import InputError
from specpick.tools.errors import RemoteDataError

# llama.cpp's `-hf owner/repo` picks this file type when the user names none and the repo has it.
HF_DEFAULT_QUANT = "q4_k_m"
MAX_CARD_BYTES = 512 * 1024
_REPO_GGUF = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+?)(?::(?P<quant>[\w-]+))?$")
_GGUF_SUFFIX = re.compile(r"(?i)(?:[-_.]i1)?[-_.]gguf$")
_SHARD = re.compile(r"(?i)-\d{5}-of-\d{5}$")
# Unsloth's dynamic mixes (UD-Q4_K_XL) keep more tensors at higher precision than the k-quant of the same letter.
_XL_MIX = re.compile(r"(?i)^(?:u?d-)?(q\d_k)_xl$")
_QUANT_LIKE = re.compile(r"(?i)^(?:u?d-)?(?:i?q\d(?:_[a-z0-9]+)*|b?f16|f32|mxfp4(?:_moe)?)$")


class GgufReference(BaseModel):
    """What a GGUF name says: the model names to try (first the catalog knows wins) and the weight format."""

    given: str
    kind: Literal["file", "repo"]
    candidates: list[str] = Field(description="base-model names, most trusted first")
    quantization: str | None = Field(None, description="tools/vocab.Quantization name, None = not one we model")
    quant_source: str = ""
    notes: list[str] = Field(default_factory=list)


def is_gguf_name(name: str) -> bool:
    """A ``.gguf`` path or a Hub repo named ``*-GGUF`` (optionally ``:QUANT``)."""
    text = name.strip()
    if text.lower().endswith(".gguf"):
        return True
    m = _REPO_GGUF.match(text)
    return bool(m and _GGUF_SUFFIX.search(m.group("repo")))


def quant_name(token: str) -> tuple[str | None, str]:
    """Our quantization name for a GGUF file-type token as written, and a note when it is an approximation."""
    xl = _XL_MIX.match(token)
    if xl:
        base = f"{xl.group(1).lower()}_m"
        return base, (f"{token} is a dynamic mix (Unsloth) costed as {base.upper()}: it keeps more tensors at higher "
                      "precision, so the file is somewhat larger than that")
    low = str(normalize_quantization(re.sub(r"(?i)^u?d-", "", token)))
    return (low if low in QUANTIZATIONS else None), ""


def split_quant(stem: str) -> tuple[str, str | None, str | None]:
    """``Llama-3.1-8B-Instruct-Q4_K_M`` -> (``Llama-3.1-8B-Instruct``, ``q4_k_m``, ``Q4_K_M``): the model part, our
    quantization name (None if the token is not one we model) and the token as written (None if there is none)."""
    stem = _SHARD.sub("", stem)
    parts = re.split(r"([-.])", stem)
    for i in range(len(parts) - 1, -1, -2):
        token = parts[i]
        if _QUANT_LIKE.match(token):
            model = re.sub(r"(?i)[-.]ud$", "", "".join(parts[:max(i - 1, 0)]).rstrip("-."))  # unsloth's UD- prefix
            return model, quant_name(token)[0], token
    return stem, None, None


def _metadata_names(meta: GgufMetadata) -> list[str]:
    """Model names a GGUF header carries: ``general.name``, then basename-size_label[-finetune]."""
    names = [str(meta.get("general.name"))] if isinstance(meta.get("general.name"), str) else []
    base, size, tune = (meta.get(f"general.{k}") for k in ("basename", "size_label", "finetune"))
    if isinstance(base, str) and isinstance(size, str):
        names.append("-".join(p for p in (base, size, tune if isinstance(tune, str) else "") if p))
        names.append(f"{base}-{size}")
    return names


# A header lists at most a handful of base models; more is not a header we trust.
MAX_BASE_MODELS = 8


def _base_model_urls(meta: GgufMetadata) -> list[str]:
    """``general.base_model.N.repo_url`` on the Hub: the model this one was *fine-tuned* from."""
    count = meta.get("general.base_model.count")
    out = []
    for n in range(min(count, MAX_BASE_MODELS) if isinstance(count, int) else 0):
        url = meta.get(f"general.base_model.{n}.repo_url")
        if isinstance(url, str) and "huggingface.co/" in url:
            out.append(url.split("huggingface.co/", 1)[1].strip("/"))
    return out


def file_reference(path: str) -> GgufReference:
    """A local ``.gguf`` file's base-model names and quantization (header first, file name second).

    Raises:
        InputError: the file does not exist, or its header is not a readable GGUF header (the user's own file: a
            usage error, exit 2, not a download that went wrong).
    """

    file = Path(path).expanduser()
    try:
        meta = read_local_metadata(file)
    except RemoteDataError as exc:
        raise InputError(f"{exc.message}; give a .gguf file that llama.cpp wrote (convert_hf_to_gguf.py / "
                         "llama-quantize) or its Hub repo id (owner/name-GGUF)") from None
    stem_model, name_quant, token = split_quant(file.name[:-len(".gguf")])
    org = meta.get("general.organization")
    candidates = [stem_model, *_metadata_names(meta)]
    if isinstance(org, str) and "/" not in stem_model:
        candidates.append(f"{org}/{stem_model}")
    base_urls = _base_model_urls(meta)
    candidates += base_urls
    quant, source = meta.quantization, "the file's GGUF header (general.file_type)"
    if quant is None:
        quant, source = name_quant, f"the file name ({token})" if token else ""
    notes = [f"GGUF file {file.name}: {len(meta.values)} header keys read (GGUF v{meta.version}, "
             f"{meta.tensor_count} tensors)"]
    if base_urls:
        notes.append("its header names " + ", ".join(base_urls) + " as general.base_model (the model it was "
                     "fine-tuned from, tried after its own name)")
    return GgufReference(given=path, kind="file", candidates=list(dict.fromkeys(c for c in candidates if c)),
                         quantization=quant, quant_source=source, notes=notes)


def _card_base_models(text: str) -> list[str]:
    """``base_model`` of a model card's YAML front matter (a string or a list), without a YAML parser."""
    m = re.match(r"\A---\s*\n(.*?)\n---", text, re.DOTALL)
    if not m:
        return []
    lines = m.group(1).splitlines()
    for i, line in enumerate(lines):
        key = re.match(r"^base_model:\s*(.*)$", line)
        if not key:
            continue
        inline = key.group(1).strip().strip("'\"")
        if inline and not inline.startswith("["):
            return [inline]
        if inline.startswith("["):
            return [x.strip().strip("'\"") for x in inline.strip("[]").split(",") if x.strip()]
        items = []
        for follow in lines[i + 1:]:
            item = re.match(r"^\s*-\s*(.+)$", follow)
            if not item:
                break
            items.append(item.group(1).strip().strip("'\""))
        return items
    return []


def repo_reference(name: str, *, live: bool) -> GgufReference:
    """A Hub GGUF repo's base-model names and quantization (the card with ``live``, the repo name without).

    Raises:
        HubAccessError, NotFoundError, UnavailableError: from the card read (``live`` only).
    """
    m = _REPO_GGUF.match(name.strip())
    assert m is not None  # is_gguf_name checked the shape
    repo, quant_token = m.group("repo"), m.group("quant")
    notes: list[str] = []
    candidates: list[str] = []
    if live:
        from specpick.tools.hub.client import fetch_optional

        card = fetch_optional(repo, "README.md", max_bytes=MAX_CARD_BYTES)
        if card is not None:
            text = Path(card.path).read_bytes()[:MAX_CARD_BYTES].decode("utf-8", errors="replace")
            found = _card_base_models(text)
            candidates += found
            notes.append(f"{repo} model card: base_model {', '.join(found) if found else 'not set'} "
                         f"(from {card.source})")
    header_quant = None
    if live:  # the chosen file's own header, by HTTP Range: its file type and model names
        from specpick.tools.hub.gguf_remote import remote_metadata

        try:
            fname, meta = remote_metadata(repo, quant_token, HF_DEFAULT_QUANT.upper())
            header_quant = meta.quantization
            candidates += _metadata_names(meta)
            notes.append(f"{repo}/{fname}: GGUF header read by HTTP range ({len(meta.values)} keys)")
        except Exception as exc:  # noqa: BLE001 - any Hub/HTTP failure: the card and the name still answer
            notes.append(f"{repo}: GGUF header not read by HTTP range ({type(exc).__name__}); card and name used")
    stem = _GGUF_SUFFIX.sub("", repo.split("/", 1)[1])
    candidates.append(stem)
    if not live:
        notes.append(f"base model taken from the repo name ({stem}); --live reads the model card's base_model")
    if header_quant:  # the file's own word beats its name
        quant, source = header_quant, "the GGUF header of the file llama.cpp's -hf would load (general.file_type)"
    elif quant_token:
        quant, approx = quant_name(quant_token)
        source = f"the repo tag :{quant_token}"
        notes += [approx] if approx else []
    else:
        quant, source = HF_DEFAULT_QUANT, ("llama.cpp's -hf default (Q4_K_M when the repo has it; name another "
                                           "file type with repo:QUANT or --quantization)")
    return GgufReference(given=name, kind="repo", candidates=list(dict.fromkeys(candidates)), quantization=quant,
                         quant_source=source, notes=notes)


def gguf_reference(name: str, *, live: bool = False) -> GgufReference | None:
    """The reference a GGUF name makes, or None when ``name`` is not a GGUF path or repo."""
    if not is_gguf_name(name):
        return None
    text = name.strip()
    return file_reference(text) if text.lower().endswith(".gguf") else repo_reference(text, live=live)


def resolve_gguf_base(name: str, *, live: bool = False) -> tuple[str, GgufReference] | None:
    """(base-model name to resolve, the reference) for a GGUF name; None when ``name`` is not one.

    The first candidate the catalog knows wins; with ``live`` a repo id candidate is returned for the Hub to read.

    Raises:
        NotFoundError: no candidate is known (offline), with what to pass instead.
    """
    ref = gguf_reference(name, live=live)
    if ref is None:
        return None
    catalog = get_catalog()
    for candidate in ref.candidates:
        if catalog.find_model(candidate) is not None:
            return candidate, ref
    repo_ids = [c for c in ref.candidates if "/" in c]
    if live and repo_ids:
        return repo_ids[0], ref
    tried = ", ".join(ref.candidates) or "none"
    raise NotFoundError(f"GGUF '{name}' names no model the catalog knows (tried: {tried}); pass the original model "
                        "as --verifier <owner/name> with --quantization "
                        f"{ref.quantization or '<type>'}{'' if live else ', or add --live to read the model card'}")


def gguf_base_repo_id(name: str) -> str | None:
    """The catalog repo id a GGUF name was converted from (offline: the repo name or the file's header), for verbs
    that compare or check against the original model (`head-check`, `tokenizers`); None when ``name`` is no GGUF name.

    Raises:
        NotFoundError: a GGUF name whose base model the catalog does not know.  InputError: a bad local file.
    """
    resolved = resolve_gguf_base(name)
    return None if resolved is None else get_catalog().model(resolved[0]).repo_id
