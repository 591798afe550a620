// Silent jobs: alert rules that notice a job or a collection that stopped succeeding, whatever the reason.
//
//   expectation broken : a job that carries an expectation "a success at least every D" (shared/expectations.py)
//                        and has gone longer without one: the metric scheduler.job.silence, measured after every
//                        dispatcher tick, names the job (scheduler.job.id); the rule splits by it, so each silent
//                        job is an alert of its own that carries its id.
//   no success since   : a template, one rule per entry of `noSuccessAlerts`: no occurrence of the collection
//                        succeeded (scheduler.occurrences.succeeded, attribute scheduler.collection = the
//                        collection's resource id) for `withinMinutes`. Empty by default.
//
// Every rule notifies actionGroupId when one is given.

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

@description('"No success since" rules: [{ collection: \'/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Scheduler/jobCollections/<name>\', withinMinutes: 60 }]. Each fires when none of the collection\'s occurrences succeeded for withinMinutes (15 to 2880).')
param noSuccessAlerts array = []

var actions = empty(actionGroupId) ? [] : [
  actionGroupId
]

// The latest value per job: a job that succeeds again reports 0 at the next tick and the alert resolves.
var expectationQuery = '''
customMetrics
| where name == "scheduler.job.silence"
| extend Job = tostring(customDimensions["scheduler.job.id"]), Collection = tostring(customDimensions["scheduler.collection"])
| summarize arg_max(timestamp, valueMax) by Job, Collection
| project Job, Collection, SilentSeconds = valueMax
'''

// {0}: the collection's resource id (compared without regard to case, as ARM compares names).
var noSuccessQuery = '''
customMetrics
| where name == "scheduler.occurrences.succeeded" and tostring(customDimensions["scheduler.collection"]) =~ "{0}"
| summarize Succeeded = sum(valueSum)
| extend Succeeded = coalesce(Succeeded, 0.0)
'''

resource expectationBroken 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = {
  name: 'alert-sched-expectation-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: a job has not succeeded as expected'
    description: 'A job that expects a success at least every D has gone longer without one (disabled, faulted, failing, or not running at all). The alert\'s Job dimension is the job\'s resource id.'
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
          query: expectationQuery
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'SilentSeconds'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'Job'
              operator: 'Include'
              values: [
                '*'
              ]
            }
            {
              name: 'Collection'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
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

resource noSuccess 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = [for (rule, i) in noSuccessAlerts: {
  name: 'alert-sched-no-success-${i}-${nameSuffix}'
  location: location
  tags: tags
  properties: {
    displayName: 'Scheduler: no success in ${last(split(rule.collection, '/'))} for ${rule.withinMinutes} minutes'
    description: 'No occurrence of ${rule.collection} succeeded in the last ${rule.withinMinutes} minutes.'
    severity: 2
    enabled: true
    scopes: [
      applicationInsightsId
    ]
    evaluationFrequency: 'PT15M'
    windowSize: 'PT${rule.withinMinutes}M'
    criteria: {
      allOf: [
        {
          query: format(noSuccessQuery, rule.collection)
          timeAggregation: 'Total'
          metricMeasureColumn: 'Succeeded'
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
}]

output expectationRuleId string = expectationBroken.id
output noSuccessRuleIds array = [for (rule, i) in noSuccessAlerts: noSuccess[i].id]
