// Log Analytics workspace + workspace-based Application Insights with local
// (instrumentation-key) authentication disabled: telemetry is accepted only with an
// Entra ID token, which the function app obtains through its user-assigned identity
// (APPLICATIONINSIGHTS_AUTHENTICATION_STRING). The identity is granted
// Monitoring Metrics Publisher on the component.

@description('Log Analytics workspace name.')
param logAnalyticsName string

@description('Application Insights component name.')
param applicationInsightsName string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Days of log retention in the workspace.')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

var monitoringMetricsPublisherRoleId = '3913510d-42f4-4e42-8a64-420c390055eb'

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    features: {
      disableLocalAuth: true
    }
  }
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalytics.id
    DisableLocalAuth: true
    publicNetworkAccessForIngestion: 'Enabled'
    publicNetworkAccessForQuery: 'Enabled'
  }
}

resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(applicationInsights.id, principalId, monitoringMetricsPublisherRoleId)
  scope: applicationInsights
  properties: {
    principalId: principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisherRoleId)
  }
}

output applicationInsightsName string = applicationInsights.name
output applicationInsightsId string = applicationInsights.id
// The connection string only routes telemetry (ingestion endpoint + component id); with
// DisableLocalAuth the embedded instrumentation key alone cannot write anything.
output connectionString string = applicationInsights.properties.ConnectionString
output logAnalyticsId string = logAnalytics.id
