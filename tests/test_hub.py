"""Hub access through the real huggingface_hub client against the local Hub stand-in."""

from __future__ import annotations

import ast

import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from specpick.tools.hub import client as hub
from specpick.tools.errors import (
    EXIT_ACCESS,
    EXIT_BAD_REMOTE_DATA,
    EXIT_INPUT,
    EXIT_NOT_FOUND,
    EXIT_UNAVAILABLE,
    HubAccessError,
    InputError,
    NotFoundError,
    RemoteDataError,
    UnavailableError,
)
from specpick.tools.hub.config import fetch_model_spec, param_count
from tests.support.fakehub import safetensors_bytes

CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 320, "max_position_embeddings": 256}


@pytest.mark.parametrize("repo_id", ["gpt2", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct",
                                     "a/b.c_d-e", "x" * 40 + "/" + "y" * 55])
def test_valid_repo_ids(repo_id: str) -> None:
    assert hub.validate_repo_id(repo_id) == repo_id


@pytest.mark.parametrize("repo_id", ["../etc", "org/../etc", "..", "a b", "org/name with space", "x" * 97,
                                     "a--b/c", "org/name.git", "", "/abs", "org/", "a/b/c", "org\\name",
                                     "ünï/code", "org/name\n", "-org/name", "org/name."])
def test_invalid_repo_ids_fail_before_any_io(repo_id: str, fakehub, hub_settings) -> None:
    with pytest.raises(InputError) as err:
        hub.fetch_file(repo_id, "config.json", settings=hub_settings)
    assert err.value.exit_code == EXIT_INPUT
    assert fakehub.log == []
    assert not Path(hub_settings.resolved_cache_dir()).exists()


@pytest.mark.parametrize(("revision", "ok"), [(None, True), ("main", True), ("refs/pr/1", True), ("v1.0", True),
                                               ("0" * 40, True), ("../x", False), ("a b", False), ("-rf", False),
                                               ("main~1", False), ("a//b", False)])
def test_revision_validation(revision: str | None, ok: bool) -> None:
    if ok:
        assert hub.validate_revision(revision) == (revision or "main")
    else:
        with pytest.raises(InputError):
            hub.validate_revision(revision)


def test_download_then_cache_reuse_without_second_get(fakehub, hub_settings) -> None:
    sha = fakehub.add_repo("org/m", {"config.json": CONFIG})
    first = hub.fetch_file("org/m", "config.json", settings=hub_settings)
    assert (first.source, first.commit, first.fallback_reason) == ("hub", sha, "")
    second = hub.fetch_file("org/m", "config.json", settings=hub_settings)
    assert second.source == "hub" and second.path == first.path
    assert len(fakehub.requests("GET", "config.json")) == 1, "the cached copy is reused (HEAD only)"


def test_revision_pin_reads_that_branch_and_commit(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG}, branches={"dev": {"config.json": {**CONFIG, "vocab_size": 999}}})
    data, fetched = hub.fetch_json("org/m", "config.json", revision="dev", settings=hub_settings)
    assert data["vocab_size"] == 999 and fetched.revision == "dev"
    pinned, _ = hub.fetch_json("org/m", "config.json", revision=fetched.commit, settings=hub_settings)
    assert pinned["vocab_size"] == 999


def test_gated_repo_without_token_says_how_to_get_access(fakehub, hub_settings) -> None:
    fakehub.add_repo("meta-llama/Gated-1B", {"config.json": CONFIG}, gated="manual")
    with pytest.raises(HubAccessError) as err:
        hub.fetch_file("meta-llama/Gated-1B", "config.json", settings=hub_settings)
    assert err.value.exit_code == EXIT_ACCESS
    assert "meta-llama/Gated-1B is gated" in err.value.message
    assert "https://huggingface.co/meta-llama/Gated-1B" in err.value.message and "HF_TOKEN" in err.value.message


def test_gated_repo_with_granted_hf_token(fakehub, hub_settings, monkeypatch) -> None:
    fakehub.add_repo("meta-llama/Gated-1B", {"config.json": CONFIG}, gated="manual")
    fakehub.grant("hf_valid", "meta-llama/Gated-1B")
    monkeypatch.setenv("HF_TOKEN", "hf_valid")  # read by the client per call
    fetched = hub.fetch_file("meta-llama/Gated-1B", "config.json", settings=hub_settings)
    assert fetched.source == "hub"
    assert {r.token for r in fakehub.log} == {"hf_valid"}


def test_token_never_appears_in_errors_or_results(fakehub, hub_settings, monkeypatch) -> None:
    secret = "hf_valid"
    fakehub.add_repo("org/gated", {"config.json": CONFIG}, gated="auto")
    fakehub.add_repo("org/open", {"config.json": CONFIG})
    settings = hub_settings.model_copy(update={"token": SecretStr(secret)})
    with pytest.raises(HubAccessError) as err:  # valid token, licence not accepted: 403 GatedRepo
        hub.fetch_file("org/gated", "config.json", settings=settings)
    assert secret not in err.value.message
    fetched = hub.fetch_file("org/open", "config.json", settings=settings)
    assert secret not in fetched.model_dump_json() and secret not in repr(settings)
    assert "token" not in settings.model_dump()


def test_rejected_token_is_access_error(fakehub, hub_settings, monkeypatch) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(HubAccessError, match="check that HF_TOKEN is valid"):
        hub.fetch_file("org/m", "config.json", settings=hub_settings)


@pytest.mark.parametrize("private", [False, True])
def test_unknown_or_private_repo_lists_close_catalog_matches(fakehub, hub_settings, private: bool) -> None:
    name = "meta-llama/Llama-3.1-8B-Instrukt"
    if private:
        fakehub.add_repo(name, {"config.json": CONFIG}, private=True)
    with pytest.raises(NotFoundError) as err:
        hub.fetch_file(name, "config.json", settings=hub_settings)
    assert err.value.exit_code == EXIT_NOT_FOUND
    assert "Did you mean: meta-llama/Llama-3.1-8B-Instruct" in err.value.message


def test_revision_not_found(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    with pytest.raises(NotFoundError, match="revision 'v9' not found in org/m"):
        hub.fetch_file("org/m", "config.json", revision="v9", settings=hub_settings)


def test_missing_file_is_entry_missing(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    with pytest.raises(hub.EntryMissingError) as err:
        hub.fetch_file("org/m", "tokenizer.json", settings=hub_settings)
    assert err.value.exit_code == EXIT_NOT_FOUND and err.value.filename == "tokenizer.json"
    assert hub.fetch_optional("org/m", "tokenizer.json", settings=hub_settings) is None


def test_malformed_config_json(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/broken", {"config.json": '{"hidden_size": 64,'})
    with pytest.raises(RemoteDataError) as err:
        fetch_model_spec("org/broken", settings=hub_settings)
    assert err.value.exit_code == EXIT_BAD_REMOTE_DATA and "not valid JSON" in err.value.message


@pytest.mark.parametrize(("filename", "declared", "limit_field"), [
    ("config.json", 5_000_000, "max_config_bytes"),
    ("tokenizer.json", 60_000_000, "max_tokenizer_bytes"),
])
def test_oversized_files_are_refused_before_download(fakehub, hub_settings, filename, declared, limit_field) -> None:
    fakehub.add_repo("org/huge", {filename: CONFIG}, declared_sizes={filename: declared})
    limit = getattr(hub_settings, limit_field)
    with pytest.raises(RemoteDataError, match=f"above the {limit:,}-byte bound") as err:
        hub.fetch_file("org/huge", filename, settings=hub_settings, max_bytes=limit)
    assert err.value.exit_code == EXIT_BAD_REMOTE_DATA
    assert fakehub.requests("GET") == [], "refused on the HEAD answer, nothing downloaded"


def test_file_larger_than_announced_is_refused_after_download(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/liar", {"config.json": {"pad": "x" * 2000}}, declared_sizes={"config.json": 10})
    with pytest.raises(RemoteDataError, match="does not match the size the Hub announced") as err:
        hub.fetch_file("org/liar", "config.json", settings=hub_settings, max_bytes=1000)
    assert err.value.exit_code == EXIT_BAD_REMOTE_DATA


def test_timeout_with_nothing_cached_is_unavailable_without_backoff(fakehub, hub_settings, no_hub_backoff) -> None:
    fakehub.add_repo("org/slow", {"config.json": CONFIG})
    fakehub.fail_next(stall_s=10, count=5)
    settings = hub_settings.model_copy(update={"etag_timeout_s": 0.3})
    started = time.monotonic()
    with pytest.raises(UnavailableError) as err:
        hub.fetch_file("org/slow", "config.json", settings=settings)
    assert time.monotonic() - started < 3
    assert err.value.exit_code == EXIT_UNAVAILABLE and "nothing cached for org/slow" in err.value.message
    assert no_hub_backoff == []


def test_network_failure_falls_back_to_cache_and_says_why(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    hub.fetch_file("org/m", "config.json", settings=hub_settings)
    fakehub.fail_next(503)
    fetched = hub.fetch_file("org/m", "config.json", settings=hub_settings)
    assert fetched.source == "hub-cache" and "Hub unreachable" in fetched.fallback_reason
    dead = hub_settings.model_copy(update={"endpoint": "http://127.0.0.1:9"})  # nothing listens on port 9
    fetched = hub.fetch_file("org/m", "config.json", settings=dead)
    assert fetched.source == "hub-cache" and "ConnectError" in fetched.fallback_reason


def test_unreachable_endpoint_with_nothing_cached(hub_settings) -> None:
    dead = hub_settings.model_copy(update={"endpoint": "http://127.0.0.1:9"})
    with pytest.raises(UnavailableError, match="nothing cached for org/never"):
        hub.fetch_file("org/never", "config.json", settings=dead)


@pytest.mark.parametrize("how", ["settings", "env", "constant"])
def test_offline_mode_reads_only_the_cache(fakehub, hub_settings, monkeypatch, how: str) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    hub.fetch_file("org/m", "config.json", settings=hub_settings)
    online_requests = len(fakehub.log)
    settings = hub_settings.model_copy(update={"offline": True if how == "settings" else None})
    if how == "env":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    elif how == "constant":
        import huggingface_hub.constants as constants

        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    fetched = hub.fetch_file("org/m", "config.json", settings=settings)
    assert fetched.source == "hub-cache" and "offline" in fetched.fallback_reason
    with pytest.raises(UnavailableError) as err:
        hub.fetch_file("org/m", "tokenizer.json", settings=settings)
    assert err.value.message == ("offline and nothing cached for org/m (tokenizer.json): "
                                 "run once online or set HF_ENDPOINT")
    assert len(fakehub.log) == online_requests, "offline mode sends nothing"


def test_offline_remembers_files_known_to_be_missing(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    assert hub.fetch_optional("org/m", "special_tokens_map.json", settings=hub_settings) is None
    offline = hub_settings.model_copy(update={"offline": True})
    assert hub.fetch_optional("org/m", "special_tokens_map.json", settings=offline) is None


def test_hf_endpoint_env_is_read_at_call_time(fakehub, hub_settings, monkeypatch) -> None:
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    fetched = hub.fetch_file("org/m", "config.json", settings=hub_settings.model_copy(update={"endpoint": None}))
    assert fetched.source == "hub" and fakehub.requests("HEAD")


@pytest.mark.parametrize("variable", ["HF_HOME", "HF_HUB_CACHE"])
def test_cache_location_follows_hf_home_and_hf_hub_cache(fakehub, hub_settings, monkeypatch, tmp_path, variable):
    fakehub.add_repo("org/m", {"config.json": CONFIG})
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv(variable, str(tmp_path / "elsewhere"))
    fetched = hub.fetch_file("org/m", "config.json", settings=hub_settings.model_copy(update={"cache_dir": None}))
    expected = tmp_path / "elsewhere" / ("hub" if variable == "HF_HOME" else "")
    assert Path(fetched.path).resolve().is_relative_to(expected.resolve())


def test_malformed_safetensors_header_falls_back_to_labelled_estimate(fakehub, hub_settings) -> None:
    header = b'{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0'
    fakehub.add_repo("org/badst", {"config.json": CONFIG,
                                   "model.safetensors": len(header).to_bytes(8, "little") + header + b"\0" * 8})
    result = param_count("org/badst", settings=hub_settings)
    assert not result.exact and result.method == "config-estimate"
    assert "malformed" in result.fallback_reason


def test_gated_safetensors_header_is_access_error(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/gated", {"config.json": CONFIG, "model.safetensors": safetensors_bytes({"w": ("BF16", [4])})},
                     gated="auto")
    with pytest.raises(HubAccessError, match="org/gated is gated"):
        param_count("org/gated", settings=hub_settings)


@pytest.mark.parametrize(("progress", "expect_output"), [(False, False), (None, False), (True, True)])
def test_progress_bars_only_when_asked_or_on_a_terminal(fakehub, hub_settings, capsys, progress, expect_output):
    fakehub.add_repo("org/m", {"config.json": {"pad": "x" * 50_000}})
    settings = hub_settings.model_copy(update={"progress": progress, "progress_delay_s": 0.0})
    hub.fetch_file("org/m", "config.json", settings=settings)
    out, err = capsys.readouterr()
    assert out == "", "stdout stays clean for --json"
    assert (len(err) > 0) == expect_output, err  # None: stderr is captured, not a TTY, so no bar


def test_modules_never_enable_remote_code() -> None:
    tools = Path(hub.__file__).parent.parent
    for name in ("hub/client.py", "hub/config.py", "checks/tokenizers.py", "hub/tokenizer_files.py", "checks/heads.py"):
        assert "trust_remote" not in (tools / name).read_text(encoding="utf-8"), name


def _loader_calls(root: Path) -> list[tuple[str, int, ast.Call]]:
    """Every call that loads a model, tokenizer, config or pipeline from a repo or folder, anywhere in the package."""
    loaders = {"from_pretrained", "pipeline", "from_config"}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in loaders:
                    found.append((str(path.relative_to(root.parent)), node.lineno, node))
    return found


def test_every_model_load_passes_trust_remote_code_false() -> None:
    """Library defaults change between versions: every load says trust_remote_code=False itself."""
    package = Path(hub.__file__).parent.parent.parent
    calls = [c for sub in ("tools", "skill", "evals") for c in _loader_calls(package / sub)]
    assert len(calls) >= 2, "the scan must see measure --local's tokenizer and model loads"
    for where, line, call in calls:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        value = kw.get("trust_remote_code")
        assert isinstance(value, ast.Constant) and value.value is False, f"{where}:{line} loads without it"
    # The product's sub-packages only: in an editable install ``package`` is the checkout, tests included.
    for path in (p for sub in ("tools", "skill", "evals") for p in (package / sub).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "trust_remote_code=True" not in text.replace(" ", ""), path
