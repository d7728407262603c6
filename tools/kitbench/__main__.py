"""``python -m tools.kitbench WHAT`` (from the course's root): see :mod:`tools.kitbench.cli`."""

from tools.kitbench.cli import main

raise SystemExit(main())
