"""CKV_SCHED_1: storage accounts must set allowSharedKeyAccess: false (Entra ID only)."""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import STORAGE_SHARED_KEY_DISABLED, get, is_false


class StorageSharedKeyAccessDisabled(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure storage accounts disable shared key access (allowSharedKeyAccess: false)",
            id=STORAGE_SHARED_KEY_DISABLED,
            categories=(CheckCategories.IAM,),
            supported_resources=("Microsoft.Storage/storageAccounts",),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        # Azure's default is true, so the property must be present and false.
        self.evaluated_keys = ["properties/allowSharedKeyAccess"]
        if is_false(get(conf, "properties", "allowSharedKeyAccess")):
            return CheckResult.PASSED
        return CheckResult.FAILED


check = StorageSharedKeyAccessDisabled()
