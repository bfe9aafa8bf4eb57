"""Shared test configuration: fixtures that start real local stand-ins live in tests/support/."""

from __future__ import annotations

pytest_plugins = [
    "tests.support.fakehub",
    "tests.support.tokenizer_data",
    "tests.support.fakeclaude",
]
