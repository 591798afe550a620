"""Local development host: runs the deployed `function_app.py` (HTTP, timer and queue triggers) in one process.

Entry points: `python -m devhost` (devhost.cli) and `devhost.host.LocalHost` for tests. `devhost.azurite`
starts the storage emulator; `devhost.devstorage` decides which one a host uses (never another host's).
Imports stay lazy here so `devhost.azurite` users do not load azure.functions.
"""
