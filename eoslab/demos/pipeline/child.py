"""The pipeline's processor as a program: ``python -m eoslab.demos.pipeline.child --mode eos ...``.

:class:`eoslab.demos.pipeline.PipelineProcess` starts it (its command line holds
:data:`eoslab.demos.pipeline.CHILD_MODULE`, which is how a leftover one is recognised by pid). The
program lives in the package's private ``_child``; this module is only its stable name, and the
package's face does not import it, so ``python -m`` runs it once (a module imported by its own
package before ``-m`` runs it would be executed twice, with a RuntimeWarning on stderr).
"""

import sys

from eoslab.demos.pipeline._child import main

if __name__ == "__main__":
    sys.exit(main())
