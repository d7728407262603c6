"""A module 07 program as a process: ``python -m eoslab.demos.production.child --program FILE.py:FUNCTION ...``.

Only the stable name of :mod:`eoslab.demos.production._child` (the package's face does not import it, so
``python -m`` runs it once).
"""

import sys

from eoslab.demos.production._child import main

if __name__ == "__main__":
    sys.exit(main())
