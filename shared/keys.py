"""Identity of collections and jobs: ARM resource ids and names. Names are case-insensitive, as in ARM."""

from __future__ import annotations

from dataclasses import dataclass

PROVIDER = "Microsoft.Scheduler"
COLLECTION_TYPE = f"{PROVIDER}/jobCollections"
JOB_TYPE = f"{COLLECTION_TYPE}/jobs"
HISTORY_TYPE = f"{JOB_TYPE}/history"

# Names compare as ARM compares them: ordinal, ignoring the case of ASCII letters only. Unicode case
# folding would alias distinct names (the Kelvin sign U+212A lower-cases to "k").
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold_case(name: str) -> str:
    """The comparison form of a name: ASCII letters lower-cased, every other character as it is."""
    return name.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class CollectionKey:
    subscription: str
    resource_group: str
    collection: str

    @property
    def resource_id(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            f"/providers/{PROVIDER}/jobCollections/{self.collection}"
        )

    def job(self, name: str) -> JobKey:
        return JobKey(self.subscription, self.resource_group, self.collection, name)


@dataclass(frozen=True)
class JobKey:
    subscription: str
    resource_group: str
    collection: str
    job: str

    @property
    def collection_key(self) -> CollectionKey:
        return CollectionKey(self.subscription, self.resource_group, self.collection)

    @property
    def resource_id(self) -> str:
        return f"{self.collection_key.resource_id}/jobs/{self.job}"

    @property
    def name(self) -> str:
        """The job's `name` on the wire: `{collection}/{job}` (docs/wire-contract.md §1.4)."""
        return f"{self.collection}/{self.job}"
