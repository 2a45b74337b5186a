"""The station's shell: start-up (:mod:`~curator.views.shell.app`), the main window with its
menus (:mod:`~curator.views.shell.menus`), its editing controller (save, conflicts, new pages:
:mod:`~curator.views.shell.editing`), zoom and theme, the registry of views it carries, the sync
status and help.

The top of the views: it may import every view package; none imports it.
"""
