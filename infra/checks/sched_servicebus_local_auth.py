"""CKV_SCHED_6: Service Bus namespaces disable SAS (local) auth and require TLS 1.2."""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import SERVICE_BUS_LOCAL_AUTH_DISABLED, get, is_true


class ServiceBusLocalAuthDisabled(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure Service Bus namespaces disable local (SAS) auth and require TLS 1.2",
            id=SERVICE_BUS_LOCAL_AUTH_DISABLED,
            categories=(CheckCategories.IAM,),
            supported_resources=("Microsoft.ServiceBus/namespaces",),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        self.evaluated_keys = ["properties/disableLocalAuth", "properties/minimumTlsVersion"]
        if not is_true(get(conf, "properties", "disableLocalAuth")):
            return CheckResult.FAILED
        if str(get(conf, "properties", "minimumTlsVersion")) not in ("1.2", "1.3"):
            return CheckResult.FAILED
        return CheckResult.PASSED


check = ServiceBusLocalAuthDisabled()
