"""Finding pages: the page browser (filters and the page table), its ranked search results and
the quick switcher (``Ctrl+P``).

May import: the shared view modules, models and the engine.
"""
