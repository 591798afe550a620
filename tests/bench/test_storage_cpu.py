"""The benches' storage-emulator CPU: Azurite's pid is Node's own (its CPU grows with the storage work sent to it),
and a phase's figures are that CPU per execution and as a share of its one thread."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure.data.tables import TableServiceClient

from bench.figures import cpu_seconds
from bench.phase_figures import storage_cpu_figures
from devhost.azurite import Azurite


def test_azurites_cpu_is_read_from_its_own_process_and_grows_with_the_work_sent_to_it(azurite: Azurite) -> None:
    assert azurite.pid is not None
    assert "node" in Path(f"/proc/{azurite.pid}/cmdline").read_text()
    table = TableServiceClient.from_connection_string(azurite.connection_string).create_table("storagecpu")
    before = cpu_seconds(azurite.pid)
    for n in range(20):
        rows = [{"PartitionKey": "p", "RowKey": f"{n}-{r}", "Body": "x" * 1000} for r in range(100)]
        table.submit_transaction([("upsert", row) for row in rows])
    assert cpu_seconds(azurite.pid) - before > 0.05  # 2,000 rows written: tens of milliseconds at the least


def test_a_phases_storage_cpu_is_per_execution_and_a_share_of_one_thread(capsys: pytest.CaptureFixture[str]) -> None:
    figures = storage_cpu_figures("steady", 60.0, 12_000, 120)
    assert figures == {"storage_cpu_s": 60.0, "storage_cpu_ms_per_execution": 5.0, "storage_cpu_busy": 0.5}
    assert "5.00 ms per execution (60.0 s in 120 s: 0.50 of its one thread)" in capsys.readouterr().out
    assert storage_cpu_figures("fire", 1.0, 0, 0)["storage_cpu_ms_per_execution"] is None
