#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then test what a user installs.
#  - builds the wheel and installs it NON-editable into the active Python with its test and measure
#    extras (torch==2.13.0 takes the CPU wheel already on these machines; a bare `torch` would pull CUDA),
#    so a module or data file missing from the wheel fails here, not on a user's machine;
#  - builds the vLLM CPU engine venv and the SmolLM2 model cache (.ci/setup-measure.sh),
#  - from an empty directory, runs the installed `specpick`: the README's first command, every verb's
#    --help and one real offline call per verb,
#  - runs pytest against the installed package (CI_INSTALLED=1: tests/test_packaging.py checks that
#    `specpick` is imported from site-packages, not from this checkout),
#  - runs the planner eval suite and the speedup calibration with the thresholds stated in the README.
# Exits non-zero if any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
"$PY" -m pip install --upgrade pip >/dev/null
"$PY" -m pip install torch==2.13.0

# Build from the checkout into a scratch directory; a stale build/ could carry deleted modules into the wheel.
rm -rf build ./*.egg-info
WHEELS="$(mktemp -d)"
"$PY" -m pip wheel --no-deps -w "$WHEELS" .
rm -rf build ./*.egg-info
WHEEL="$(ls "$WHEELS"/spec_decode_picker-*.whl)"
# An earlier editable install would shadow the wheel: remove it first.
"$PY" -m pip uninstall -y spec-decode-picker >/dev/null 2>&1 || true
"$PY" -m pip install "${WHEEL}[test,measure]"

if [ -x .ci/setup-measure.sh ]; then
  PYTHON="$PY" .ci/setup-measure.sh
fi

# ---------------------------------------------------------------- the installed command, as a user runs it
SCRIPTS="$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
SPECPICK="$SCRIPTS/specpick"
SMOKE="$(mktemp -d)"
MEASURE_HOME="${SPECPICK_MEASURE_HOME:-$HOME/.cache/specpick/measure}"
(
  cd "$SMOKE"
  # Offline and keyless: the embedded catalog must answer everything below.
  export HF_HUB_OFFLINE=1 HF_HOME="$SMOKE/hf"
  unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN HF_TOKEN || true
  set -x
  # README command 1 (after `pip install .`):
  # (outputs go to files before grep: `grep -q` closing a pipe early would fail the step under pipefail)
  "$SPECPICK" recommend --verifier meta-llama/Llama-3.1-70B-Instruct --workload code --gpu H100-SXM --gpus 4 \
    > recommend.md
  grep -q '^## 5. Measurement plan' recommend.md
  # A llama.cpp user names the GGUF build they load: every verb resolves it (issue 25).
  "$SPECPICK" recommend --verifier bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M --engine llamacpp \
    --gpu RTX-4090 --workload chat > gguf.md
  grep -q '^llama-server -hf bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M' gguf.md
  "$SPECPICK" engine-config --verifier unsloth/Qwen3.8-27B-GGUF:Q8_0 --engine llamacpp --method mtp \
    --gpu RTX-3060 > gguf-cfg.txt
  grep -q -- '-ngl ' gguf-cfg.txt
  "$SPECPICK" --help >/dev/null
  for verb in recommend speedup vram params tokenizers head-check engine-config model models gpus heads \
              calibrate chat ask mcp eval measure tune train-plan exit-codes; do
    "$SPECPICK" "$verb" --help >/dev/null
  done
  "$SPECPICK" speedup --verifier meta-llama/Llama-3.1-70B-Instruct --workload code --method eagle3 \
    --gpu H100-SXM --gpus 4 --json >/dev/null
  "$SPECPICK" vram --verifier meta-llama/Llama-3.1-70B-Instruct --gpu H100-SXM --gpus 4 \
    --draft meta-llama/Llama-3.2-1B-Instruct --json >/dev/null
  "$SPECPICK" params meta-llama/Llama-3.1-70B-Instruct --json >/dev/null
  "$SPECPICK" tokenizers meta-llama/Llama-3.2-1B-Instruct meta-llama/Llama-3.1-70B-Instruct --offline --strict >/dev/null
  rc=0; "$SPECPICK" tokenizers meta-llama/Llama-2-7b-chat-hf mistralai/Mixtral-8x7B-Instruct-v0.1 --strict \
    2>/dev/null || rc=$?
  [ "$rc" -eq 8 ]
  "$SPECPICK" head-check yuhuili/EAGLE3-LLaMA3.1-Instruct-8B meta-llama/Llama-3.1-8B-Instruct --no-live >/dev/null
  "$SPECPICK" engine-config --engine vllm --method eagle3 --verifier meta-llama/Llama-3.1-8B-Instruct \
    --draft-model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B --num-draft-tokens 5 --json >/dev/null
  "$SPECPICK" model meta-llama/Llama-3.1-70B-Instruct --json >/dev/null
  "$SPECPICK" models >/dev/null
  "$SPECPICK" gpus >/dev/null
  "$SPECPICK" heads --json >/dev/null
  "$SPECPICK" calibrate --no-loso --json >/dev/null
  # Without a key `chat` interviews over a pipe and answers with the planner; `ask` refuses with exit 2.
  printf 'meta-llama/Llama-3.1-70B-Instruct\ncode\n\n\n\n\n\n\n\n\n\n\n\n\n' | "$SPECPICK" chat > chat.md
  grep -q '^## 1. Recommendation' chat.md
  rc=0; "$SPECPICK" ask "which method for Llama-3.1-70B?" 2>ask.err || rc=$?
  [ "$rc" -eq 2 ]
  grep -q '^error: ANTHROPIC_API_KEY is not set' ask.err
  "$SPECPICK" mcp --list | "$PY" -c 'import json, sys; assert len(json.load(sys.stdin)) >= 10'
  "$SPECPICK" eval --runner planner --case "$("$PY" - <<'EOF'
from importlib.resources import files
import yaml
first = yaml.safe_load((files("specpick.evals") / "cases" / "baseline.yaml").read_text())
cases = first["cases"] if isinstance(first, dict) else first
print(cases[0]["id"])
EOF
)" --quiet
  printf '%s\n' '{"prompt": "Rename tmp to total: def f(v):\n    tmp = 0\n    for x in v:\n        tmp += x\n    return tmp", "output": "def f(v):\n    total = 0\n    for x in v:\n        total += x\n    return total"}' \
    > pairs.jsonl
  "$SPECPICK" measure --estimate-ngram --samples pairs.jsonl --tokenizer "$MEASURE_HOME/models/SmolLM2-135M-Instruct" \
    --json >/dev/null
  "$SPECPICK" exit-codes > exit-codes.txt
  grep -q '^   8  ' exit-codes.txt
)
rm -rf "$SMOKE"

# Startup figures of the installed command (--help, offline recommend): printed for the log, not gated, because
# a timed assert flakes on a shared machine. README "Speed" states the figures this prints.
"$PY" scripts/bench.py --specpick "$SPECPICK"

# ---------------------------------------------------------------- the test suite, against the installed package
JUNIT="$(mktemp -d)/pytest.xml"
CI_INSTALLED=1 SPECPICK_WHEEL="$WHEEL" "$PY" -m pytest --junitxml="$JUNIT" "$@"
# Every extra is installed and the vLLM venv is built above, so a skip here hides a failure: none is allowed.
"$PY" - "$JUNIT" <<'EOF'
import sys
import xml.etree.ElementTree as ET

cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
skipped = [(c.get("classname", "") + "::" + c.get("name", ""), s.get("message", ""))
           for c in cases for s in c.findall("skipped")]
for name, why in skipped:
    print(f"skipped: {name}: {why}", file=sys.stderr)
if skipped:
    sys.exit(f"scripts/test.sh: {len(skipped)} test(s) skipped with every extra installed; 0 allowed")
EOF

# Quality thresholds (README "Quality gates"): a regression below them fails CI.
# Out-of-sample calibration (README "Quality gates"): dev-set and engine leave-one-source-out end to end, the engine
# cost model with measured acceptance, and interval coverage of held-out rows, each at its target.
# llama.cpp has its own cost model and gate (issue 25): its 80% ranges holding 75-85% of the llama.cpp rows (neither
# overconfident nor wider than they claim), and its leave-one-source-out median error at 16%: the issue's 15% target is
# not met (15.4% on 129 rows from 24 sources, 2026-12-01; README "Quality gates" says where it misses).
# Extrapolation classes (issue 34, tools/calibration/extrapolation.py): each class held out of every prior, coverage of
# the 80% range >= 0.70 in every class with >= 10 rows. newest_trtllm fails today (63.6% on 11 rows, 2026-12-04) and is
# named as a known failure: printed with its figure, not gated, until its ranges are widened by a measured error.
"$SPECPICK" calibrate --engines --max-loso-median-ape-pct 10 \
  --max-engine-loso-median-ape-pct 12 --max-engine-cost-median-ape-pct 10 --min-interval-coverage 0.75 \
  --max-llamacpp-loso-median-ape-pct 15 --min-llamacpp-coverage 0.75 --max-llamacpp-coverage 0.85 \
  --min-class-coverage 0.70 --ungated-classes newest_trtllm
# The eval gate (evals/README.md "CI thresholds"): every case passes except the listed known failures (that list
# also holds the case-specific checks, config_values and forbidden_flags, to each case), the answer-contract checks
# pass everywhere, and the graders fail >= 90% of the wrong answers made from the real ones, overall and per grader.
"$SPECPICK" eval --runner planner --quiet --known-failures evals/known_failures.txt \
  --min-check sections=1 --min-check speedup_stated=1 --min-check engine_config=1 \
  --min-check compat_coverage=1 --min-check measurement_metrics=1 \
  --min-check measurement_definitions=1 --min-check outcome=1 \
  --min-check engine=1 --min-check draft_model=1 --mutants --min-mutant-kill 0.9
# The train-plan category (evals/cases/training): every case passes.
"$SPECPICK" eval --runner train-plan --quiet
echo "scripts/test.sh: all steps passed, from the installed $(basename "$WHEEL")"
