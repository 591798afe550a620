"""CKV_SCHED_2: storage accounts must set allowBlobPublicAccess: false."""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import STORAGE_BLOB_PUBLIC_ACCESS_DISABLED, get, is_false


class StorageBlobPublicAccessDisabled(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure storage accounts disallow anonymous blob access (allowBlobPublicAccess: false)",
            id=STORAGE_BLOB_PUBLIC_ACCESS_DISABLED,
            categories=(CheckCategories.GENERAL_SECURITY,),
            supported_resources=("Microsoft.Storage/storageAccounts",),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        # Explicit false is required: older API versions default to true.
        self.evaluated_keys = ["properties/allowBlobPublicAccess"]
        if is_false(get(conf, "properties", "allowBlobPublicAccess")):
            return CheckResult.PASSED
        return CheckResult.FAILED


check = StorageBlobPublicAccessDisabled()
