"""Auto-filing: grading pasted text (and the secret / prompt-injection scan), filing it under
``auto/<type>/``, and curating what was filed (confirm, share to the shared wiki, remove).

May import: the wiki and everything below it, :mod:`~curator.engine.write` and
:mod:`~curator.engine.read`.
"""
