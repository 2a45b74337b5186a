"""The open page: the rendered view and its source editor, rendering, find in page, the side
panel (properties, links, outline), and the page's dialogs (a save that met a change on disk, a
new page, move, rename, archive).

May import: the shared view modules (``curator.views.*`` at the top), models and the engine.
"""
