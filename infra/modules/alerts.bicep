// Alert rules on the scheduler's own telemetry (shared/telemetry: OpenTelemetry through the Azure Monitor
// distro into Application Insights). Log search alerts over the component, evaluated every 5 minutes:
//
//   failure rate   : failed / all attempts (scheduler.executions) over 15 minutes > failureRatePercent,
//                    once at least minimumExecutions ran (a single failure of a quiet app is not an outage)
//   lateness p95   : 95th percentile of start minus expected time of the attempts (the execution spans'
//                    scheduler.lateness_ms) over 15 minutes > latenessP95Seconds
//   poison queue   : scheduler.poison.depth (measured after every tick) > 0 in the last 15 minutes
//   no tick        : no scheduler.dispatcher.tick.duration recorded for 5 minutes (the minute timer stopped)
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

var noTickQuery = '''
customMetrics
| where name == "scheduler.dispatcher.tick.duration"
| summarize Ticks = count()
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

resource noTick 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-no-tick-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: dispatcher not ticking'
    description: 'No dispatcher tick was recorded for 5 minutes: nothing new is being queued.'
    severity: 1
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      allOf: [
        {
          query: noTickQuery
          timeAggregation: 'Total'
          metricMeasureColumn: 'Ticks'
          operator: 'LessThan'
          threshold: 1
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

output alertRuleIds array = [
  failureRate.id
  lateness.id
  poison.id
  noTick.id
]
