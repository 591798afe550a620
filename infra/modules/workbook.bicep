// An Azure Monitor workbook with the scheduler's main charts (dashboards/scheduler-workbook.json): attempts by
// outcome and action type, failure rate, lateness percentiles, retries and faults, dispatcher ticks, due-index
// backlog and poison-queue depth, occurrences expected / dispatched / fired / succeeded and skipped by reason,
// jobs whose expectation of success is broken, API requests, and the latest failed attempts with their trace ids.

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Resource id of the Application Insights component the workbook queries.')
param applicationInsightsId string

@description('Display name of the workbook.')
param displayName string = 'Scheduler operations'

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, applicationInsightsId, 'scheduler-operations')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: displayName
    category: 'workbook'
    sourceId: applicationInsightsId
    serializedData: loadTextContent('../dashboards/scheduler-workbook.json')
  }
}

output workbookId string = workbook.id
