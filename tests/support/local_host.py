"""The real function_app.py under the project's local host, as a child process (the way
tests/test_end_to_end.py starts it), on its own tables of the session's Azurite."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from devhost.azurite import Azurite, free_port

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def local_host(azurite: Azurite, flags: Sequence[str] = (), **settings: str) -> Iterator[str]:
    """Yields the API base URL (http://127.0.0.1:PORT/api) once the host serves; stops the host after. `flags`:
    more of `python -m devhost`'s (e.g. `--clock-offset`); `settings`: app settings in the host's environment."""
    port = free_port()
    env = {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_TABLE_PREFIX": f"h{uuid.uuid4().hex[:10]}",
        "SCHEDULER_PRIVATE_TARGETS": "loopback",
        "REGION_NAME": "local",
        **settings,
    }
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "devhost", "--port", str(port), "--in-process", *flags],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            assert process.stdout is not None
            base = process.stdout.readline().strip()  # the host prints its base URL once it serves
            assert base == f"http://127.0.0.1:{port}/api", base
            yield base
        finally:
            process.terminate()
            # Past the host's stop grace (devhost/cli.py STOP_GRACE_SECONDS), after which it exits 1 with its stacks.
            try:
                code = process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait(timeout=10)
            log.seek(0)
            assert code == 0, f"the local host did not stop cleanly (exit {code}):\n{log.read()[-20000:]}"
