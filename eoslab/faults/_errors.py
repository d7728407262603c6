"""Errors of the fault proxy (all :class:`eoslab.errors.EoslabError`)::

EoslabError
└── FaultError              the fault proxy could not do what was asked
    ├── ProxyNotRunning     its control API does not answer
    ├── ProxyStartError     the daemon did not come up (its log says why)
    └── FaultRuleError      a rule, query or replay the proxy cannot honour
"""

from __future__ import annotations

from eoslab.errors import EoslabError


class FaultError(EoslabError):
    """The fault proxy could not do what was asked."""


class ProxyNotRunning(FaultError):
    """The proxy daemon's control API does not answer."""


class ProxyStartError(FaultError):
    """The proxy daemon exited or never answered during start-up."""


class FaultRuleError(FaultError):
    """A rule or request the proxy refuses, with the reason."""
