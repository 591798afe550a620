"""`python -m scheduler_cli ...` runs the same CLI as the `scheduler` console script."""

from .main import run

run()
