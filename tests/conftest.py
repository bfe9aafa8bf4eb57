"""Shared test configuration: fixtures that start real local stand-ins live in tests/support/."""

from __future__ import annotations

import pytest

pytest_plugins = [
    "tests.support.fakehub",
    "tests.support.tokenizer_data",
    "tests.support.fakeclaude",
]

# --- hermetic state: no test reads the user's Hub cache, catalog overlay, tokens or model choice -----------------
# A `specpick catalog update` run on the same machine writes <HF_HOME>/specpick/catalog-overlay.json; a developer's
# HF_TOKEN or ANTHROPIC_API_KEY changes which paths run. Every test starts from a temporary HF_HOME and none of
# these variables; a test that needs one sets it (monkeypatch) or uses a stand-in fixture that does.
_USER_STATE_VARS = (
    "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE",
    "SPECPICK_CATALOG_OVERLAY", "SPECPICK_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
)


@pytest.fixture(scope="session")
def _hermetic_home(tmp_path_factory: pytest.TempPathFactory):
    from specpick.tools.catalog.tables import get_catalog

    get_catalog.cache_clear()  # built before this fixture ran (at import), it may hold the user's overlay
    return tmp_path_factory.mktemp("hf-home")


@pytest.fixture(autouse=True)
def hermetic_user_state(_hermetic_home, monkeypatch: pytest.MonkeyPatch):
    """HF_HOME in a temporary folder and the user's Hub, token and model variables unset, for every test."""
    monkeypatch.setenv("HF_HOME", str(_hermetic_home))
    for name in _USER_STATE_VARS:
        monkeypatch.delenv(name, raising=False)
    yield
    overlay = _hermetic_home / "specpick" / "catalog-overlay.json"  # overlay_location.overlay_path() under HF_HOME
    if overlay.exists():  # a test wrote an overlay into the shared home: the next test must not see it
        overlay.unlink()
        from specpick.tools.catalog.tables import get_catalog

        get_catalog.cache_clear()
