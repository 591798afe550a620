"""Wire models of Microsoft.Scheduler 2016-03-01 and its extensions: they validate requests, render responses and
define the OpenAPI documents (one source of truth); versions.py says which api-version shows which extension."""

from .actions import (
    DEFAULT_MAX_RETRY_INTERVAL,
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_INTERVAL,
    HttpAuthentication,
    HttpRequest,
    JobAction,
    JobErrorAction,
    RetryPolicy,
    ServiceBusAuthentication,
    ServiceBusBrokeredMessageProperties,
    ServiceBusMessage,
    ServiceBusQueueMessage,
    ServiceBusTopicMessage,
    StorageQueueMessage,
)
from .base import WITH_SECRETS, CaseInsensitiveEnum, WireModel
from .collection import JobCollectionDefinition, JobCollectionProperties, JobCollectionQuota, JobMaxRecurrence, Sku
from .concurrency import AsyncCompletion, OverlapPolicy, TargetRateLimit, WaitCause
from .durations import format_duration, parse_duration
from .enums import (
    DayOfWeek,
    HttpAuthenticationType,
    JobActionType,
    JobCollectionState,
    JobExecutionStatus,
    JobHistoryActionName,
    JobState,
    RecurrenceFrequency,
    RetryType,
    ServiceBusAuthenticationType,
    ServiceBusTransportType,
    SkuName,
)
from .extensions import (
    HistoryRetention,
    LedgerReason,
    MissedRunPolicy,
    MissedRunType,
    OccurrenceTrigger,
)
from .history import JobHistoryDefinition, JobHistoryProperties
from .instants import Instant, UtcDateTime, format_utc, parse_instant_text, to_utc
from .job import JobDefinition, JobProperties, JobStatus
from .lists import ErrorDetail, ErrorResponse, JobCollectionListResult, JobHistoryListResult, JobListResult
from .occurrence_control import (
    DstPolicy,
    DstShift,
    ExceptionType,
    FoldPolicy,
    GapPolicy,
    JobPause,
    OccurrenceException,
)
from .recurrence import JobRecurrence, JobRecurrenceSchedule, JobRecurrenceScheduleMonthlyOccurrence
from .versions import PREVIEW as PREVIEW_API_VERSION

__all__ = [name for name in dir() if not name.startswith("_")]
