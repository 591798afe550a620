"""CKV_SCHED_5: function apps reach their host storage and deployment container by identity.

- siteConfig.appSettings has ``AzureWebJobsStorage__credential`` = ``managedidentity`` and at
  least the blob service URI (or account name), and no plain ``AzureWebJobsStorage``;
- a Flex Consumption ``functionAppConfig.deployment.storage`` authenticates with a managed
  identity (not ``StorageAccountConnectionString``).
"""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import IDENTITY_BASED_HOST_STORAGE, get, settings_from_list

_IDENTITY_AUTH_TYPES = {"userassignedidentity", "systemassignedidentity"}


class IdentityBasedHostStorage(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure function apps use identity-based AzureWebJobsStorage and deployment storage",
            id=IDENTITY_BASED_HOST_STORAGE,
            categories=(CheckCategories.IAM,),
            supported_resources=("Microsoft.Web/sites",),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        kind = conf.get("kind")
        if not (isinstance(kind, str) and "functionapp" in kind.lower()):
            return CheckResult.UNKNOWN  # web apps have no host storage
        self.evaluated_keys = [
            "properties/siteConfig/appSettings",
            "properties/functionAppConfig/deployment/storage/authentication/type",
        ]
        pairs = settings_from_list(get(conf, "properties", "siteConfig", "appSettings"))
        if pairs is None:
            return CheckResult.FAILED
        settings = {name.lower(): value for name, value in pairs}
        if "azurewebjobsstorage" in settings:
            return CheckResult.FAILED
        credential = settings.get("azurewebjobsstorage__credential")
        if not (isinstance(credential, str) and credential.lower() == "managedidentity"):
            return CheckResult.FAILED
        if not ({"azurewebjobsstorage__blobserviceuri", "azurewebjobsstorage__accountname"} & settings.keys()):
            return CheckResult.FAILED

        function_app_config = get(conf, "properties", "functionAppConfig")
        if function_app_config is not None:
            auth_type = get(function_app_config, "deployment", "storage", "authentication", "type")
            if not (isinstance(auth_type, str) and auth_type.lower() in _IDENTITY_AUTH_TYPES):
                return CheckResult.FAILED
        return CheckResult.PASSED


check = IdentityBasedHostStorage()
