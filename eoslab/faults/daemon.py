"""``python -m eoslab.faults.daemon``: the fault proxy as its own process.

Why a daemon and not a thread in the notebook: a kernel restart must not take
every proxied connection down with it, a CLI (`eoslab up`) must be able to
start it, and a lesson's blocking client call must not stall the proxy.
Started detached by :func:`eoslab.faults.ensure_proxy`; its pid file and log
are under ``<data dir>/proxy/``; SIGTERM ends it cleanly.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys

from eoslab._ports import LOOPBACK
from eoslab.faults._control import ControlServer
from eoslab.faults._lifecycle import pid_file
from eoslab.faults._proxy import ProxyEngine
from eoslab.topology import Topology


async def serve(topology: Topology) -> None:
    engine = ProxyEngine(topology)
    control = ControlServer(engine)
    await engine.start()  # front ports first: once the control API answers, the proxy works
    # The trace ring holds ~10^5 small dicts: a full cyclic GC pass over them costs milliseconds, which
    # shows as p99 latency on every connection. Freeze what start-up made, and collect less often.
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
    await control.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    fronts = ", ".join(f"{b.proxy_front_port}->{b.proxied_port}" for b in topology.brokers)
    logging.info(
        "fault proxy pid %d: fronts %s, control API %s:%d", os.getpid(), fronts, LOOPBACK, topology.proxy_control_port
    )
    await stop.wait()
    logging.info("stopping on a signal")
    for s in [*engine.servers, control.server]:
        if s is not None:
            s.close()
    engine.cut()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    topology = Topology.from_env()
    pid_path = pid_file(topology)
    try:
        asyncio.run(serve(topology))
    except OSError as exc:
        logging.error("cannot listen: %s (another proxy, or another program, holds the port?)", exc)
        return 1
    finally:
        try:
            if pid_path.read_text().strip() == str(os.getpid()):
                pid_path.unlink()
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
