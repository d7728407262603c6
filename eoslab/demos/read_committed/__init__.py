"""The flows of module 04 (read_committed), shared by the notebook, its lab and the checks.

What a consumer sees, and what it waits for::

    from eoslab.demos import read_committed as rc
    topic = rc.new_topic(cluster)                       # A (0) led by broker 1, B (1) by broker 2
    log = rc.write_log(cluster, topic, 0, [rc.Op("t1"), rc.Op("plain"), rc.Op("t1", "commit")])
    reads = rc.read_both(log)                           # each isolation level, set explicitly
    rc.styled(rc.log_table(log, reads))                 # offset by offset, coloured by fate
    rc.lso_facts(log, reads)                            # ListOffsets vs the log vs describe-producers
    rc.watch_lso(cluster, topic)                        # HW and LSO over time, live
    offsets, rows = rc.traced_read(log)                 # the Fetch on the wire (aborted transactions)
    rc.late_writes(cluster, topic)                      # late Produce answers; a hanging transaction
    rc.held_produce(cluster, topic, verify=False)       # librdkafka's own Produce held past its timeouts
"""

from eoslab.demos.read_committed._fetch import fetch_frame, fetch_mermaid, traced_read, txn_index_frame
from eoslab.demos.read_committed._hanging import Hanging, late_writes
from eoslab.demos.read_committed._held import HELD_PRODUCER, Held, held_produce
from eoslab.demos.read_committed._late import (
    VERIFICATION,
    error_name,
    late_produce,
    next_sequence,
    set_verification,
    verification,
    verification_off,
)
from eoslab.demos.read_committed._log import (
    FATES,
    LOG_PRODUCER,
    PLAIN,
    Action,
    LogRecord,
    Op,
    WrittenLog,
    random_pattern,
    write_log,
)
from eoslab.demos.read_committed._topic import default_isolation, java_console_read, new_topic
from eoslab.demos.read_committed._views import (
    COLOURS,
    LsoFacts,
    Reads,
    aborted_read_sentence,
    counts,
    gaps,
    log_table,
    lso_facts,
    read_both,
    styled,
)
from eoslab.demos.read_committed._watch import Watch, plot_watch, watch_lso

__all__ = [
    "Action",
    "COLOURS",
    "FATES",
    "HELD_PRODUCER",
    "Hanging",
    "Held",
    "LOG_PRODUCER",
    "LogRecord",
    "LsoFacts",
    "Op",
    "PLAIN",
    "Reads",
    "VERIFICATION",
    "Watch",
    "WrittenLog",
    "aborted_read_sentence",
    "counts",
    "default_isolation",
    "error_name",
    "fetch_frame",
    "fetch_mermaid",
    "gaps",
    "held_produce",
    "java_console_read",
    "late_produce",
    "late_writes",
    "log_table",
    "lso_facts",
    "new_topic",
    "next_sequence",
    "plot_watch",
    "random_pattern",
    "read_both",
    "set_verification",
    "styled",
    "traced_read",
    "txn_index_frame",
    "verification",
    "verification_off",
    "watch_lso",
    "write_log",
]
