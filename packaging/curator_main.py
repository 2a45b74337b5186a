"""Entry script of the PyInstaller build: the ``curator`` command (``curator gui`` is the station)."""

import sys

from curator.cli import main

if __name__ == "__main__":
    sys.exit(main())
