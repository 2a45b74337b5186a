"""Many machines, one wiki: sync through a git remote and the page merge driver git runs for it.

May import: any engine package below it (everything but dedup and review).
"""
