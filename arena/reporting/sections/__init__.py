"""The sections of a report, one module each.

:func:`~arena.reporting.build_report` writes them in this order: overview, flags, leaderboards,
overall, regret curves, minimax values (games whose adversary declares an exact expected regret),
metric curves, other regret notions, online-to-batch (held-out risks), bandit feedback, failures,
provenance, methods, files.

Each module's section function takes the :class:`~arena.reporting.sections.context.ReportContext`
and returns a :class:`~arena.reporting.sections.context.Section` (or ``None`` when the results
have nothing for it); the tables and figures it shows are written through the context.
"""
