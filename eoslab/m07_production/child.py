"""A module 07 program as a process: ``python -m eoslab.m07_production.child --program FILE.py:FUNCTION ...``.

Only the stable name of :mod:`eoslab.m07_production._child` (neither the package's face nor its lesson imports it,
so ``python -m`` runs it once).
"""

import sys

from eoslab.m07_production._child import main

if __name__ == "__main__":
    sys.exit(main())
