"""The enumerations of Microsoft.Scheduler 2016-03-01 (scheduler.json), plus our documented extensions."""

from __future__ import annotations

from .base import CaseInsensitiveEnum


class SkuName(CaseInsensitiveEnum):
    STANDARD = "Standard"
    FREE = "Free"
    P10_PREMIUM = "P10Premium"
    P20_PREMIUM = "P20Premium"


class JobCollectionState(CaseInsensitiveEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    SUSPENDED = "Suspended"
    DELETED = "Deleted"


class RecurrenceFrequency(CaseInsensitiveEnum):
    MINUTE = "Minute"
    HOUR = "Hour"
    DAY = "Day"
    WEEK = "Week"
    MONTH = "Month"
    YEAR = "Year"  # the concepts document lists it; the OpenAPI enum stops at Month


class DayOfWeek(CaseInsensitiveEnum):
    SUNDAY = "Sunday"
    MONDAY = "Monday"
    TUESDAY = "Tuesday"
    WEDNESDAY = "Wednesday"
    THURSDAY = "Thursday"
    FRIDAY = "Friday"
    SATURDAY = "Saturday"


class JobState(CaseInsensitiveEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    FAULTED = "Faulted"
    COMPLETED = "Completed"


class JobActionType(CaseInsensitiveEnum):
    HTTP = "Http"
    HTTPS = "Https"
    STORAGE_QUEUE = "StorageQueue"
    SERVICE_BUS_QUEUE = "ServiceBusQueue"
    SERVICE_BUS_TOPIC = "ServiceBusTopic"


class HttpAuthenticationType(CaseInsensitiveEnum):
    NOT_SPECIFIED = "NotSpecified"
    CLIENT_CERTIFICATE = "ClientCertificate"
    ACTIVE_DIRECTORY_OAUTH = "ActiveDirectoryOAuth"
    BASIC = "Basic"
    # Newer api-version only (versions.py): a token of the Function app's managed identity for `audience`.
    MANAGED_IDENTITY = "ManagedIdentity"


class ServiceBusAuthenticationType(CaseInsensitiveEnum):
    NOT_SPECIFIED = "NotSpecified"
    SHARED_ACCESS_KEY = "SharedAccessKey"


class ServiceBusTransportType(CaseInsensitiveEnum):
    NOT_SPECIFIED = "NotSpecified"
    NET_MESSAGING = "NetMessaging"
    AMQP = "AMQP"


class RetryType(CaseInsensitiveEnum):
    NONE = "None"
    FIXED = "Fixed"
    EXPONENTIAL = "Exponential"  # extension: the interval doubles per retry


class JobHistoryActionName(CaseInsensitiveEnum):
    MAIN_ACTION = "MainAction"
    ERROR_ACTION = "ErrorAction"


class JobExecutionStatus(CaseInsensitiveEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"
    POSTPONED = "Postponed"
    SKIPPED = "Skipped"  # newer api-version only: a ledger entry of an occurrence that did not run
    # Newer api-version only, ledger entries of occurrences not ended yet
    # (docs/decisions.md, "Overlap, limits, long-running completion, spread"): waiting for the previous
    # occurrence, a concurrency slot or a rate-limit slot (its `reason` says which); running, while the work of
    # an asynchronous target is polled.
    WAITING = "Waiting"
    RUNNING = "Running"
