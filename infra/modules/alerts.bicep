// Alert rules on the scheduler's own telemetry (shared/telemetry: OpenTelemetry through the Azure Monitor
// distro into Application Insights). Log search alerts over the component, evaluated every 5 minutes (the
// heartbeat every minute):
//
//   failure rate   : failed / all attempts (scheduler.executions) over 15 minutes > failureRatePercent,
//                    once at least minimumExecutions ran (a single failure of a quiet app is not an outage)
//   lateness p95   : 95th percentile of start minus expected time of the attempts (the execution spans'
//                    scheduler.lateness_ms) over 15 minutes > latenessP95Seconds
//   poison queue   : scheduler.poison.depth (measured after every tick) > 0 in the last 15 minutes
//   heartbeat      : no scheduler.dispatcher.heartbeats has arrived for two intervals (heartbeatMissedSeconds,
//                    2 x 60 s) at two evaluations a minute apart: the dispatcher stopped writing its heartbeat.
//                    Azure Monitor evaluates the absence, outside the process that writes it; the availability
//                    test (availability.bicep) watches the same heartbeat through GET /api/health.
//
// Every rule notifies actionGroupId when one is given; with '' the alerts still fire and show in the portal.
// README.md "Operate it" explains each threshold.

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Resource id of the Application Insights component the app sends its telemetry to.')
param applicationInsightsId string

@description('Resource id of an action group to notify; empty = alerts without notifications.')
param actionGroupId string = ''

@description('Suffix making the rule names unique in the resource group.')
param nameSuffix string

@description('Failure-rate alert: percent of failed attempts over 15 minutes.')
@minValue(1)
@maxValue(100)
param failureRatePercent int = 10

@description('Failure-rate alert: attempts needed in the window before the rate counts.')
@minValue(1)
param minimumExecutions int = 20

@description('Lateness alert: 95th percentile of start minus expected execution time, in seconds.')
@minValue(1)
param latenessP95Seconds int = 30

@description('Heartbeat alert: seconds without a dispatcher heartbeat (two intervals of the minute timer).')
@minValue(120)
param heartbeatMissedSeconds int = 120

var actions = empty(actionGroupId) ? [] : [
  actionGroupId
]

var failureRateQuery = '''
customMetrics
| where name == "scheduler.executions"
| extend outcome = tostring(customDimensions["outcome"])
| summarize Attempts = sum(valueSum), Failed = sumif(valueSum, outcome == "failed")
| where Attempts >= {0}
| extend FailureRatePercent = 100.0 * Failed / Attempts
'''

var latenessQuery = '''
requests
| where name == "execute occurrence" and isnotempty(customDimensions["scheduler.lateness_ms"])
| extend LatenessSeconds = todouble(customDimensions["scheduler.lateness_ms"]) / 1000.0
| summarize LatenessP95Seconds = percentile(LatenessSeconds, 95)
'''

var poisonQuery = '''
customMetrics
| where name == "scheduler.poison.depth"
| summarize PoisonMessages = max(valueMax)
'''

// Measured at ingestion: a heartbeat arrives with each metrics export (every 60 s), so the time since the last
// one ingested is what Azure Monitor itself sees, whatever the export's and the pipeline's delay. None in the
// window at all counts as never.
var heartbeatQuery = '''
customMetrics
| where name == "scheduler.dispatcher.heartbeats"
| summarize LastHeartbeat = max(ingestion_time())
| extend SecondsSinceHeartbeat = iff(isnull(LastHeartbeat), 86400.0, todouble(datetime_diff('second', now(), LastHeartbeat)))
'''

resource failureRate 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-failure-rate-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: job failure rate'
    description: 'More than ${failureRatePercent}% of action attempts failed in the last 15 minutes.'
    severity: 2
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: format(failureRateQuery, minimumExecutions)
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'FailureRatePercent'
          operator: 'GreaterThan'
          threshold: failureRatePercent
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: actions
    }
  }
}

resource lateness 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-lateness-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: jobs start late'
    description: 'The 95th percentile of attempt start minus expected time exceeded ${latenessP95Seconds} s over 15 minutes.'
    severity: 2
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: latenessQuery
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'LatenessP95Seconds'
          operator: 'GreaterThan'
          threshold: latenessP95Seconds
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: actions
    }
  }
}

resource poison 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-poison-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: poison messages'
    description: 'The occurrence poison queue holds messages: occurrences that could not be run.'
    severity: 1
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: poisonQuery
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'PoisonMessages'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: actions
    }
  }
}

resource heartbeat 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-heartbeat-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: dispatcher heartbeat missing'
    description: 'No dispatcher heartbeat for ${heartbeatMissedSeconds} s (two intervals of the minute timer): nothing new is being queued. GET /api/health says more; `scheduler doctor` says what to do.'
    severity: 1
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: heartbeatQuery
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'SecondsSinceHeartbeat'
          operator: 'GreaterThan'
          threshold: heartbeatMissedSeconds
          // Two evaluations a minute apart: a tick that fell just past one export leaves a single late one.
          failingPeriods: {
            numberOfEvaluationPeriods: 2
            minFailingPeriodsToAlert: 2
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: actions
    }
  }
}

output alertRuleIds array = [
  failureRate.id
  lateness.id
  poison.id
  heartbeat.id
]
