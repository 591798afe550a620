"""Key rotation for secrets at rest: `python -m shared.store.rekey` re-wraps every job's sealed data key
under the current (first) key of SCHEDULER_SECRET_KEYS; `--new-key` prints a fresh key material.

Run it with the app's settings in the environment (AzureWebJobsStorage or the identity-based storage
settings, and SCHEDULER_SECRET_KEYS holding the new key first and the old one after it). docs/secrets.md
has the whole procedure.
"""

from __future__ import annotations

import argparse

from ..settings import Settings
from . import Store
from .sealing import new_key_material


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shared.store.rekey", description=__doc__.splitlines()[0])
    parser.add_argument("--new-key", action="store_true", help="print a fresh key material and exit")
    args = parser.parse_args(argv)
    if args.new_key:
        print(new_key_material())
        return 0
    store = Store.from_settings(Settings.from_environment())
    done, current = store.jobs.rewrap_all()
    print(f"re-wrapped {done} job(s); {current} already under the current key")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
