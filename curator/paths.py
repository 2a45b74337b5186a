"""Where Curator's own files live: bundled resources and the per-user data folder."""

from __future__ import annotations

from pathlib import Path


def resources_dir() -> Path:
    """The ``resources/`` folder (next to the package in a checkout, inside it when installed)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "resources", here / "resources"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("Curator's resources folder is missing from this installation")


def user_data_dir() -> Path:
    from platformdirs import user_data_path

    return user_data_path("curator", appauthor=False)
