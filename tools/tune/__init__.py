"""``specpick tune``: sweep draft length x concurrency on the user's prompts, predict what it need not measure, and
emit the per-batch-size schedule in each engine's form.

Import ``run_tune`` from ``specpick.tools.tune.run``; this package imports nothing heavy at import time.
"""
