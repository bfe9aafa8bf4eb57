#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
#  - installs the project with its test and measure extras into the active Python
#    (torch==2.13.0 takes the CPU wheel already on these machines; a bare `torch` would pull CUDA),
#  - builds the vLLM CPU engine venv and the SmolLM2 model cache (.ci/setup-measure.sh),
#  - runs pytest, the planner eval suite and the speedup calibration with the
#    thresholds stated in the README.
# Exits non-zero if any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
"$PY" -m pip install --upgrade pip >/dev/null
"$PY" -m pip install torch==2.13.0
"$PY" -m pip install -e '.[test,measure]'

if [ -x .ci/setup-measure.sh ]; then
  PYTHON="$PY" .ci/setup-measure.sh
fi

"$PY" -m pytest "$@"

# Quality thresholds (README "Quality gates"): a regression below them fails CI.
"$PY" -m specpick.skill.surfaces.cli calibrate --max-median-ape-pct 15
"$PY" -m specpick.skill.surfaces.cli eval --runner planner --quiet --known-failures evals/known_failures.txt \
  --min-check sections=1 --min-check speedup_stated=1 --min-check engine_config=1 \
  --min-check config_values=1 --min-check compat_coverage=1 --min-check measurement_metrics=1 \
  --min-check measurement_definitions=1 --min-check forbidden_flags=1 --min-check outcome=1 \
  --min-check engine=1 --min-check draft_model=1
