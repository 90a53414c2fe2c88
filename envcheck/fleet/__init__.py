"""fleet: one versioned report per node, merged and compared centrally.

envcheck never schedules anything: Slurm (``srun``), Kubernetes (an Indexed Job) or ``torchrun``
start ``envcheck verify --report`` on every node; ``envcheck fleet merge`` reads the reports.

* :mod:`~envcheck.fleet.report` — the node report (schema: ``schemas/node-report.schema.json``).
* :mod:`~envcheck.fleet.drift` — the facts compared across nodes, read from one report.
* :mod:`~envcheck.fleet.merge` — streaming merge: pass counts, failures by cause, drift.
* :mod:`~envcheck.fleet.diff` — two nodes or two fleets.
* :mod:`~envcheck.fleet.hostlist` — ``gpu[001-017,020]`` node lists.
* :mod:`~envcheck.fleet.slurm` / :mod:`~envcheck.fleet.k8s` — launch recipes rendered as text.
* :mod:`~envcheck.fleet.dist` — the cross-node collective check run under ``torchrun``.
"""
