"""Faults: a Kafka-protocol-aware proxy on the client path, its protocol trace, and a zombie client.

Every broker advertises a PROXIED listener at ``127.0.0.1:<proxy_front_port>``;
the daemon (``python -m eoslab.faults.daemon``, started by ``eoslab up``)
listens there and forwards to the broker's ``proxied_port``. A client that
bootstraps from ``cluster.bootstrap_servers(proxied=True)`` reaches every
broker through it, and the proxy can lose an ack, delay or drop a request,
cut a connection, replay a Produce, and trace every EOS request::

    proxy = eoslab.faults.Proxy.connect(cluster)
    with proxy.drop_response(api="Produce", client_id="demo-1", close=True):
        ...
    eoslab.show_mermaid(proxy.trace(client_id="demo-1").mermaid())
"""

from eoslab.faults._clear import clear_faults
from eoslab.faults._client import Fault, Proxy, Trace
from eoslab.faults._control_client import HasTopology
from eoslab.faults._errors import FaultError, FaultRuleError, ProxyNotRunning, ProxyStartError
from eoslab.faults._lifecycle import ProxyStart, ensure_proxy, in_lab_container, start_proxy, stop_proxy
from eoslab.faults._profile import DEMO_PRODUCER, demo_producer_config
from eoslab.faults._render import BLIND_SPOTS
from eoslab.faults._rules import RuleSpec
from eoslab.faults._summary import error_name
from eoslab.faults._zombie import ZombieProducer, end_zombies

__all__ = [
    "BLIND_SPOTS",
    "DEMO_PRODUCER",
    "Fault",
    "FaultError",
    "FaultRuleError",
    "HasTopology",
    "Proxy",
    "ProxyNotRunning",
    "ProxyStart",
    "ProxyStartError",
    "RuleSpec",
    "Trace",
    "ZombieProducer",
    "clear_faults",
    "demo_producer_config",
    "end_zombies",
    "ensure_proxy",
    "error_name",
    "in_lab_container",
    "start_proxy",
    "stop_proxy",
]
