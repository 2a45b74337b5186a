"""The station's shell: start-up (:mod:`~curator.views.shell.app`), the main window with its
menus and actions, the registry of views it carries, the sync status, the theme and help.

The top of the views: it may import every view package; none imports it.
"""
