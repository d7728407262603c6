"""The flows of the course modules, shared by notebooks, labs and checks."""

__all__: list[
    str
] = []  # the flows are modules: eoslab.demos.idempotent, eoslab.demos.pid_ranges, eoslab.demos.pipeline
