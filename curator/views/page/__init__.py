"""The open page: the rendered view and its source editor, rendering, find in page, the side
panel (properties, links, outline), saving edits and the page dialogs (move, rename, archive).

May import: the shared view modules (``curator.views.*`` at the top), models and the engine.
"""
