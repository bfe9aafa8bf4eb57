"""Whether to train your own speculator: evidence table, decision rules, cost, recipes, economics gate.

Pure functions over value objects; ``tools/commands/train_plan.py`` is the verb around them.
"""
