"""Command-line handlers, one module per command group (see :mod:`curator.cli`).

Module tops import only :mod:`argparse`; engine imports happen inside the handlers so that
``curator --help`` stays fast.
"""
