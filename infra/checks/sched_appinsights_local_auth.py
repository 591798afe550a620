"""CKV_SCHED_3: Application Insights must set DisableLocalAuth: true (Entra ID ingestion only)."""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import APP_INSIGHTS_LOCAL_AUTH_DISABLED, get, is_true


class AppInsightsLocalAuthDisabled(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure Application Insights disables local (instrumentation key) authentication",
            id=APP_INSIGHTS_LOCAL_AUTH_DISABLED,
            categories=(CheckCategories.IAM,),
            supported_resources=("Microsoft.Insights/components",),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        self.evaluated_keys = ["properties/DisableLocalAuth"]
        if is_true(get(conf, "properties", "DisableLocalAuth")):
            return CheckResult.PASSED
        return CheckResult.FAILED


check = AppInsightsLocalAuthDisabled()
