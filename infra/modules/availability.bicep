// The dispatcher's heartbeat watched from outside: a standard availability test of Application Insights asks
// GET /api/health from several Azure locations every `frequencySeconds`, and a metric alert fires when it fails
// from `failedLocations` of them. The endpoint is anonymous (it returns no secrets) and answers 503 once the
// dispatcher is behind: no heartbeat for two intervals, or an occurrence overdue that long (shared/api/health.py).
// So this catches a stopped timer, a dead app and unreachable storage alike, whatever the app itself reports.

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Resource id of the Application Insights component the test reports to.')
param applicationInsightsId string

@description('Base URL of the function app, e.g. https://func-sched-x.azurewebsites.net (no trailing slash).')
param functionAppUri string

@description('Resource id of an action group to notify; empty = an alert without notifications.')
param actionGroupId string = ''

@description('Suffix making the names unique in the resource group.')
param nameSuffix string

@description('How often each location asks, in seconds (the test service offers 300, 600 and 900).')
@allowed([
  300
  600
  900
])
param frequencySeconds int = 300

@description('Alert when the health check fails from this many locations at once.')
@minValue(1)
@maxValue(5)
param failedLocations int = 2

var testName = 'webtest-sched-health-${nameSuffix}'

resource healthTest 'Microsoft.Insights/webtests@2022-06-15' = {
  name: testName
  location: location
  // The portal lists a test under its component only with this tag.
  tags: union(tags, {
    'hidden-link:${applicationInsightsId}': 'Resource'
  })
  kind: 'standard'
  properties: {
    SyntheticMonitorId: testName
    Name: 'Scheduler health (dispatcher heartbeat)'
    Description: 'GET /api/health: 200 while the dispatcher ticks and nothing is overdue for two intervals; 503 otherwise.'
    Enabled: true
    Kind: 'standard'
    Frequency: frequencySeconds
    Timeout: 30
    RetryEnabled: true
    Locations: [
      {
        Id: 'us-va-ash-azr'
      }
      {
        Id: 'us-ca-sjc-azr'
      }
      {
        Id: 'emea-nl-ams-azr'
      }
      {
        Id: 'emea-gb-db3-azr'
      }
      {
        Id: 'apac-sg-sin-azr'
      }
    ]
    Request: {
      RequestUrl: '${functionAppUri}/api/health'
      HttpVerb: 'GET'
      ParseDependentRequests: false
      FollowRedirects: false
    }
    ValidationRules: {
      ExpectedHttpStatusCode: 200
      SSLCheck: true
      SSLCertRemainingLifetimeCheck: 7
    }
  }
}

resource healthAlert 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'alert-sched-health-${nameSuffix}'
  location: 'global'
  tags: tags
  properties: {
    description: 'GET /api/health failed from ${failedLocations} locations: the dispatcher is behind (no heartbeat or an occurrence overdue for two intervals), storage is unreachable, or the app is down. Run `scheduler doctor --endpoint <app>/api` for what is wrong and what to do.'
    severity: 1
    enabled: true
    scopes: [
      healthTest.id
      applicationInsightsId
    ]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.WebtestLocationAvailabilityCriteria'
      webTestId: healthTest.id
      componentId: applicationInsightsId
      failedLocationCount: failedLocations
    }
    autoMitigate: true
    actions: empty(actionGroupId) ? [] : [
      {
        actionGroupId: actionGroupId
      }
    ]
  }
}

output webTestId string = healthTest.id
output alertRuleId string = healthAlert.id
