"""The labs' checks: one module per lab (``from eoslab.grading import lab04``), each task's check in it.

A lab notebook's check cells call its lab's checks, which judge behaviour on the live cluster. What a
check builds on (its verdict, its guards, the run of a lab under nbval) is ``eoslab.labcheck``; the class's
machinery (hand-ins, the class rerun, its gradebook) is ``eoslab.classroom``. A check's outcome keeps its
names here (``verdict``, ``Verdict``, ``CheckFailed``), where a check cell meets them.
"""

from eoslab.labcheck import CheckFailed, Verdict, verdict

__all__ = ["CheckFailed", "Verdict", "verdict"]
