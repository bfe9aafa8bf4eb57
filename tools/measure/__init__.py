"""``specpick measure``: measure speculative decoding on a live engine, a local model, or by n-gram simulation.

Import ``run_measure`` and ``MeasureInput`` from ``specpick.tools.measure.run``;
this package imports nothing heavy at import time.
"""
