"""The use cases, one function each, for the command line and for any other caller (a notebook, a
CI script, a service): :mod:`.plan` (plan for a machine), :mod:`.docker_ci` (a ``[[ci_target]]``
row's plan), with verify, explain and fleet merge to follow the same shape.

Rules of this layer (DESIGN.md "Layers"): no argparse, no printing, typed inputs and results;
errors are :class:`envcheck.errors.EnvcheckError` subclasses (bad input → exit 2). ``cli/`` only
turns flags into these requests and these results into text.
"""
