"""Duplicate detection at wiki scale: the shingle index and the families it finds, the verified
scan kept in the page store's cache, the work a scan hands to a forked process, and the station's
duplicate finder in a worker process of its own.

May import: any engine package below it (everything but review).
"""
