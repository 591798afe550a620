"""Entry point of `python -m devhost`; see devhost.cli for the behaviour."""

from devhost.cli import main

raise SystemExit(main())
