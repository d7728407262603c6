"""``python -m eoslab.cli``: the console script ``eoslab`` without its installed launcher (the tests use it)."""

from __future__ import annotations

import sys

from eoslab.cli import main

if __name__ == "__main__":
    sys.exit(main())
