"""Who is acting and what they may read and write.

Owns the :class:`~curator.engine.policy.actor.Actor` (operator, agent, capability) and the scope
policy (``.scope.toml``): visibility and the write decision for every path.

May import: the shared modules, :mod:`~curator.engine.corpus` and :mod:`~curator.engine.repo`.
"""
