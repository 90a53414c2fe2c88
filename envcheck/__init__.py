"""envcheck — plan PyTorch environments that work the first time, and prove they do.

The pipeline, one sub-package per stage::

    probe / flags / machine file ──► Machine          (envcheck.machine, envcheck.probe)
    matrices/*.toml              ──► Matrix           (envcheck.matrix)
    resolve(Machine, Request, Matrix) ──► Resolution  (envcheck.resolve)
    render(Plan) ──► requirements.txt, environment.yml, Dockerfile, envcheck.lock.toml (envcheck.render)
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
