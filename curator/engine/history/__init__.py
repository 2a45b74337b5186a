"""What happened: provenance (who wrote every line, what each agent wrote when) and the diffs of
actions for people.

May import: any engine package below it (everything but sync, dedup and review).
"""
