"""The API's answers while storage is sick: a thread that reads and writes one job over and over (issue 37 item 3).

Each round replaces a probe job (PUT), reads it (GET) and lists its collection, and counts the statuses. What a
sick storage may answer is 200/201 or 503 with Retry-After; anything else (a 500 above all) is counted apart, with
its body, for the report. A figure for bench/faults.py, not a test.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta

from bench.harness import GROUP, VERSION

ROUND_PAUSE = 0.25  # seconds between rounds: a few requests a second, beside the phase's own load
EXPECTED = {200, 201}


class ApiProbe:
    def __init__(self, base_url: str, collection: str) -> None:
        self.url = f"{base_url}{GROUP}/{collection}"
        self.statuses: Counter[str] = Counter()
        self.unexpected: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ApiProbe:
        self._call("PUT", f"{self.url}{VERSION}", {"location": "West US", "properties": {"sku": {"name": "Standard"}}})
        self._thread.start()
        return self

    def stop(self) -> str:
        """Stop probing; one line: the statuses seen, and the first unexpected answers."""
        self._stop.set()
        self._thread.join(timeout=30)
        seen = ", ".join(f"{status} x{count}" for status, count in sorted(self.statuses.items()))
        line = f"API under the faults: {seen}; unexpected {len(self.unexpected)}"
        return line + (f" (first: {self.unexpected[:3]})" if self.unexpected else "")

    def _run(self) -> None:
        job = {
            "properties": {
                # Ahead, so it never fires, and within the 18 months a start may be ahead.
                "startTime": (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0).isoformat(),
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/probe", "method": "GET"}},
            }
        }
        while not self._stop.wait(ROUND_PAUSE):
            self._call("PUT", f"{self.url}/jobs/probe{VERSION}", job)
            self._call("GET", f"{self.url}/jobs/probe{VERSION}")
            self._call("GET", f"{self.url}/jobs{VERSION}")

    def _call(self, method: str, url: str, body: object | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, retry_after, text = response.status, response.headers.get("Retry-After"), ""
        except urllib.error.HTTPError as error:
            status, retry_after, text = error.code, error.headers.get("Retry-After"), error.read()[:300].decode()
        except OSError as error:  # the host itself did not answer: count it, it is not storage's fault
            self.statuses["no answer"] += 1
            self.unexpected.append(f"{method} {type(error).__name__}")
            return
        self.statuses[str(status)] += 1
        if status not in EXPECTED and not (status == 503 and retry_after):
            self.unexpected.append(f"{method} {status} {text}")
