"""The store's tables and queues in memory, for tests and benchmarks: `MemoryStorage(clock)` behind the seam of
shared/store/storage.py (`Store.from_settings(settings, storage)`, `Runtime.create(..., storage=...)`).

They keep the contracts of tables.py (`Table`) and queue_client.py (`MessageQueue`) as Table Storage and Storage
queues keep them (through the SDK) where the app could tell: ETags, transactions, value types, filters, order and
paging, the service's size limits; visibility, pop receipts and expiry of messages on the clock given.
tests/store/contract runs the same tests against these and Azurite.

Modules: errors.py (the service's refusals as the SDK raises them), odata.py (filters), rows.py (a table's rows
in key order), transaction.py (one write or transaction, all or nothing), table.py, queue.py, storage.py; what a
write stores and a read answers, and the service's size limits, are ../stored_values.py (the Azure table's lost-
answer repeat compares with them too).
"""

from .queue import MemoryQueue
from .storage import MemoryStorage
from .table import MemoryTable

__all__ = ["MemoryQueue", "MemoryStorage", "MemoryTable"]
