"""The policy panel: the effective ``.scope.toml`` and "what does this agent see".

May import: :mod:`~curator.views.history` and everything it may.
"""
