"""CKV_SCHED_4: no secrets in function/web app settings or connection strings.

Fails when a setting is a key-based connection setting (a plain ``AzureWebJobsStorage``,
``WEBSITE_CONTENTAZUREFILECONNECTIONSTRING``, ``APPINSIGHTS_INSTRUMENTATIONKEY``, ...), when a
value contains ``AccountKey=``, ``SharedAccessKey=``, a SAS signature, a password, or is built
with a ``list*()`` call (listKeys, listSecrets, ...), when the legacy ``connectionStrings``
block is used, and when the settings are not an inline list this check can read.
"""

from __future__ import annotations

from typing import Any

from checkov.bicep.checks.resource.base_resource_check import BaseResourceCheck
from checkov.common.models.enums import CheckCategories, CheckResult
from sched_check_utils import NO_SECRETS_IN_APP_SETTINGS, get, secret_problem, settings_from_list


class NoSecretsInAppSettings(BaseResourceCheck):
    def __init__(self) -> None:
        super().__init__(
            name="Ensure app settings hold no keys, SAS tokens, passwords or key-based connection strings",
            id=NO_SECRETS_IN_APP_SETTINGS,
            categories=(CheckCategories.SECRETS,),
            supported_resources=(
                "Microsoft.Web/sites",
                "Microsoft.Web/sites/slots",
                "Microsoft.Web/sites/config",
                "Microsoft.Web/sites/slots/config",
            ),
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        if self.entity_type.endswith("/config"):
            return self._scan_config_resource(conf)
        return self._scan_site(conf)

    def _scan_site(self, conf: dict[str, Any]) -> CheckResult:
        self.evaluated_keys = ["properties/siteConfig/appSettings", "properties/siteConfig/connectionStrings"]
        site_config = get(conf, "properties", "siteConfig")
        if site_config is None:
            return CheckResult.PASSED
        if not isinstance(site_config, dict):
            return CheckResult.FAILED  # not inspectable: keep siteConfig inline
        if site_config.get("connectionStrings"):
            return CheckResult.FAILED
        if "appSettings" not in site_config:
            return CheckResult.PASSED
        pairs = settings_from_list(site_config["appSettings"])
        if pairs is None:
            return CheckResult.FAILED  # computed settings cannot be verified: declare them inline
        return self._judge(pairs)

    def _scan_config_resource(self, conf: dict[str, Any]) -> CheckResult:
        name = conf.get("name")
        name = name.lower().rsplit("/", 1)[-1] if isinstance(name, str) else ""
        properties = conf.get("properties")
        self.evaluated_keys = ["properties"]
        if name in ("connectionstrings", "'connectionstrings'"):
            return CheckResult.FAILED if properties else CheckResult.PASSED
        if name in ("appsettings", "'appsettings'"):
            if not isinstance(properties, dict):
                return CheckResult.FAILED
            return self._judge([(str(k).strip("'"), v) for k, v in properties.items()])
        # sites/config 'web' (or anything else) carrying a siteConfig-shaped body
        if isinstance(properties, dict):
            if properties.get("connectionStrings"):
                return CheckResult.FAILED
            if "appSettings" in properties:
                pairs = settings_from_list(properties["appSettings"])
                return CheckResult.FAILED if pairs is None else self._judge(pairs)
        return CheckResult.PASSED

    def _judge(self, pairs: list[tuple[str, Any]]) -> CheckResult:
        # self.details is checkov's per-result detail list (reset by BaseCheck.run).
        self.details.extend(p for p in (secret_problem(name, value) for name, value in pairs) if p)
        return CheckResult.FAILED if self.details else CheckResult.PASSED


check = NoSecretsInAppSettings()
