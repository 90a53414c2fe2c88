"""The use cases, one function each, for the command line and for any other caller (a notebook, a
CI script, a service): :mod:`.plan` (plan for a machine), :mod:`.verify` (run the checks, or judge
saved facts), :mod:`.docker` (build an image from a plan, verify inside an image, a ``[[ci_target]]``
end to end), :mod:`.fleet` (merge and compare node reports, Slurm/Kubernetes jobs), :mod:`.explain` (what a pasted
error means here), :mod:`.probe` (describe this machine, save it), :mod:`.matrix` (the builds on record, validation,
index status and refresh).

Rules of this layer (DESIGN.md "Layers"): no argparse, no printing, typed inputs and results;
errors are :class:`envcheck.errors.EnvcheckError` subclasses (bad input → exit 2). ``cli/`` only
turns flags into these requests and these results into text.
"""
