"""The checker's answer: a count and a few examples per anomaly, as text for a terminal and HTML for a
notebook. Jepsen's checker keeps every case and shows a few (``condense-error``); so does this."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from eoslab.history._anomalies import ANOMALIES, AnomalyKind
from eoslab.history._causes import CAUSES, Cause
from eoslab.history._events import HistoryFormatError

MAX_EXAMPLES = 5
"""Examples kept per anomaly: enough to see the shape, short enough for a notebook cell."""


@dataclass(frozen=True)
class Cases:
    """The cases of one anomaly: how many, and the first few, each saying what was seen where."""

    kind: AnomalyKind
    count: int = 0
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """Counts and examples for every anomaly the checker looked for (``checked``), with what it read."""

    cases: dict[str, Cases]
    stats: dict[str, int] = field(default_factory=dict)
    causes: tuple[Cause, ...] = ()
    """The mistakes the histories show (:data:`eoslab.history.CAUSES`), each with what it is blamed for."""

    @property
    def checked(self) -> tuple[str, ...]:
        return tuple(self.cases)

    @property
    def counts(self) -> dict[str, int]:
        """anomaly name -> count, for every anomaly checked (0 when none was found)."""
        return {n: c.count for n, c in self.cases.items()}

    @property
    def found(self) -> dict[str, int]:
        """Only the anomalies that occurred."""
        return {n: c.count for n, c in self.cases.items() if c.count}

    def count(self, name: str) -> int:
        """The count of one anomaly, by its name here (``aborted_read``) or Jepsen's (``G1a``, ``:lost-write``)."""
        name = self._name(name)
        if name not in ANOMALIES:
            raise HistoryFormatError(f"{name!r} is not an anomaly the checker knows; it knows {list(ANOMALIES)}.")
        if name not in self.cases:
            raise HistoryFormatError(
                f"{name} was not checked: it needs input the check was not given (missing_output needs inputs=)."
            )
        return self.cases[name].count

    def cause(self, name: str) -> Cause | None:
        """The cause ``name`` (a key of :data:`eoslab.history.CAUSES`) if the histories show it, else ``None``."""
        if name not in CAUSES:
            raise HistoryFormatError(f"{name!r} is not a cause the checker knows; it knows {list(CAUSES)}.")
        return next((c for c in self.causes if c.kind.name == name), None)

    def valid(self, allowed: tuple[str, ...] = ()) -> bool:
        """No anomaly occurred but those ``allowed`` (each setup says which it allows, as in Jepsen)."""
        return not (set(self.found) - set(allowed))

    def sentence(self, name: str) -> str:
        """Whether this run showed one anomaly, in words true on any run: a lesson that opens on a failure
        says so only when the failure happened, and its count and first example when it did."""
        n = self.count(name)
        case = self.cases[self._name(name)]
        if not n:
            return f"This run showed no {case.kind.label}: the checker found none."
        example = f" For example: {case.examples[0]}." if case.examples else ""
        return f"This run showed it: {n} {case.kind.label}{'' if n == 1 else 's'}, found by the checker.{example}"

    @staticmethod
    def _name(name: str) -> str:
        jepsen = {k.jepsen.lstrip(":"): n for n, k in ANOMALIES.items() if k.jepsen.startswith(":")}
        return jepsen.get(name.lstrip(":"), name)

    def rows(self) -> list[dict[str, Any]]:
        """One row per anomaly checked: for a DataFrame or a Parquet table."""
        return [
            {"anomaly": n, "jepsen": c.kind.jepsen, "count": c.count, "example": c.examples[0] if c.examples else ""}
            for n, c in self.cases.items()
        ]

    def __str__(self) -> str:
        read = ", ".join(f"{k} {v}" for k, v in self.stats.items())
        lines = [f"{'VALID' if self.valid() else 'ANOMALIES'} ({read})"]
        for c in self.cases.values():
            lines.append(f"  {c.kind.label:<22} {c.count:>6}   {c.kind.jepsen}")
            lines.extend(f"      - {e}" for e in c.examples)
        for cause in self.causes:
            lines.append(f"  cause: {cause.sentence()}")
            lines.extend(f"      - {e}" for e in cause.examples)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = []
        for c in self.cases.values():
            style = ' style="color:#b00020;font-weight:bold"' if c.count else ""
            examples = "".join(f"<li>{html.escape(e)}</li>" for e in c.examples)
            body.append(
                f"<tr><td title='{html.escape(c.kind.meaning)}'>{html.escape(c.kind.label)}</td>"
                f"<td{style}>{c.count}</td><td><code>{html.escape(c.kind.jepsen)}</code></td>"
                f"<td><ul style='margin:0'>{examples}</ul></td></tr>"
            )
        read = html.escape(", ".join(f"{k} {v}" for k, v in self.stats.items()))
        head = "valid: no anomaly" if self.valid() else "anomalies found"
        return (
            f"<p><b>{head}</b> ({read})</p><table><thead><tr><th>anomaly</th><th>count</th>"
            f"<th>Jepsen</th><th>examples</th></tr></thead><tbody>{''.join(body)}</tbody></table>" + self._causes_html()
        )

    def _causes_html(self) -> str:
        if not self.causes:
            return ""
        rows = "".join(
            f"<tr><td title='{html.escape(c.kind.meaning)}'><b>{html.escape(c.kind.label)}</b></td><td>{c.count}</td>"
            f"<td>{html.escape(c.sentence().partition(': ')[2])}</td>"
            f"<td><ul style='margin:0'>{''.join(f'<li>{html.escape(e)}</li>' for e in c.examples)}</ul></td></tr>"
            for c in self.causes
        )
        return (
            "<p><b>causes the histories show</b></p><table><thead><tr><th>cause</th><th>times</th><th>blamed for</th>"
            f"<th>examples</th></tr></thead><tbody>{rows}</tbody></table>"
        )
