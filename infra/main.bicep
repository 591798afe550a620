// Azure Scheduler successor - cloud deployment.
//
// Resource-group scoped, so both of these work:
//   azd up                                   (azure.yaml -> infra/main.bicep)
//   az deployment group create -g RG -f infra/main.bicep -p infra/main.parameters.json
//
// Creates: user-assigned identity, storage (host + job state + deployment package; optionally more
// accounts for job state), a Key Vault
// holding the keyring that encrypts job secrets at rest,
// Log Analytics + Application Insights (Entra ID auth only) with alert rules, an availability test of
// GET /api/health and a workbook,
// Flex Consumption plan and a
// Python 3.11 function app, optionally a Service Bus namespace. All data-plane access is
// through the identity's role assignments; no keys or connection strings are issued.
// See infra/README.md.

targetScope = 'resourceGroup'

@description('Environment name (azd: AZURE_ENV_NAME). Used to derive unique resource names and the azd-env-name tag.')
@minLength(1)
@maxLength(64)
param environmentName string

@description('Azure region for all resources; must offer the Flex Consumption plan.')
param location string = resourceGroup().location

@description('Origins allowed to call the management API from a browser. Empty = no CORS. "*" is never applied.')
param corsAllowedOrigins array = []

@description('Upper bound of Flex Consumption instances.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Instances kept warm for the occurrence queue trigger (executor). With 0 the app scales to zero, and the first occurrences after an idle spell wait for a cold start (seconds late); 1 keeps an instance holding the queue poller, so messages visible 5 s before their second are taken in time.')
@minValue(0)
@maxValue(20)
param alwaysReadyExecutors int = 1

@description('Memory per Flex Consumption instance in MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Make the Flex Consumption plan zone redundant (the region must support it for Flex Consumption).')
param zoneRedundant bool = false

@description('Replication of the storage account that holds job definitions, history and the host state.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
  'Standard_GZRS'
  'Standard_RAGRS'
  'Standard_RAGZRS'
])
param storageSkuName string = 'Standard_GRS'

@description('Storage accounts beyond the primary that share the collections (SCHEDULER_STORAGE_ACCOUNTS; docs/capacity.md sizes them). Only ever raise it, with the app stopped, then run `python -m shared.store.rebalance --apply` before starting it (docs/capacity.md, "Adding a storage account").')
@minValue(0)
@maxValue(31)
param extraStorageAccounts int = 0

@description('Log Analytics retention in days.')
@minValue(30)
@maxValue(730)
param logRetentionInDays int = 30

@description('Create a Service Bus namespace the app identity may send to (Azure Service Bus Data Sender).')
param enableServiceBus bool = false

@description('Service Bus SKU, when enableServiceBus is true.')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param serviceBusSkuName string = 'Standard'

@description('Disable FTP and SCM basic-auth publishing credentials; deployments then use Entra ID (azd, func, az).')
param disableBasicPublishingCredentials bool = true

@description('Extra tags for every resource.')
param tags object = {}

@description('Resource id of an action group the alert rules notify (azd: SCHEDULER_ALERT_ACTION_GROUP_ID). Empty = alerts without notifications.')
param alertActionGroupId string = ''

@description('Alert when more than this percent of action attempts fail over 15 minutes.')
@minValue(1)
@maxValue(100)
param alertFailureRatePercent int = 10

@description('The failure-rate alert counts only once this many attempts ran in its 15-minute window.')
@minValue(1)
param alertMinimumExecutions int = 20

@description('Alert when the 95th percentile of job lateness (start minus expected time) over 15 minutes exceeds this many seconds.')
@minValue(1)
param alertLatenessP95Seconds int = 30

@description('Collection-level "no success since" alerts: [{ collection: \'<collection resource id>\', withinMinutes: 60 }] (modules/silence.bicep). Empty = none.')
param noSuccessAlerts array = []

@secure()
@minLength(32)
@description('Keyring for job secrets at rest (docs/secrets.md): key materials of at least 32 characters separated by \';\', the current one first. azd: `azd env set SCHEDULER_SECRET_KEYS "$(python -m shared.store.rekey --new-key)"` once, before the first `azd up`.')
param secretKeys string

@allowed([
  'entra'
  'key'
])
@description('SCHEDULER_AUTH: entra (callers present Entra ID tokens for the scheduler\'s app registration; roles per subscription, resource group or collection) or key (Functions keys; every key holder may do everything).')
param authMode string = 'entra'

@description('Application ID URI of the scheduler\'s Entra ID app registration (infra/README.md), e.g. api://<appId>: the audience every token must carry. Optionally followed by ",<appId>" to accept v2.0 tokens, whose audience is the client id.')
param apiAudience string

@description('Object id of the bootstrap Owner (a user, group member or service principal of this tenant): Owner over every subscription\'s collections, so it can create the first role assignments. azd: `azd env set SCHEDULER_AUTH_OWNER "$(az ad signed-in-user show --query id -o tsv)"`.')
param bootstrapOwnerObjectId string

@description('Client id of the app registration the web console signs users in with (SPA platform, redirect URI https://<app>.azurewebsites.net/api/console; infra/README.md), usually the scheduler\'s own. Empty: the console asks for a pasted token instead. azd: `azd env set SCHEDULER_CONSOLE_CLIENT_ID "$APP_ID"`.')
param consoleClientId string = ''

var resourceToken = toLower(uniqueString(subscription().id, resourceGroup().id, environmentName))
var allTags = union(tags, { 'azd-env-name': environmentName })
var functionAppName = 'func-sched-${resourceToken}'
var deploymentContainerName = 'deploymentpackage'
// Appended in order: an account's position in SCHEDULER_STORAGE_ACCOUNTS decides which collections it holds.
var dataAccountNames = [for i in range(0, extraStorageAccounts): 'stsched${resourceToken}${i + 1}']

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: 'id-sched-${resourceToken}'
  location: location
  tags: allTags
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: 'log-sched-${resourceToken}'
    applicationInsightsName: 'appi-sched-${resourceToken}'
    location: location
    tags: allTags
    retentionInDays: logRetentionInDays
    principalId: identity.properties.principalId
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: 'stsched${resourceToken}'
    location: location
    tags: allTags
    storageSkuName: storageSkuName
    deploymentContainerName: deploymentContainerName
    principalId: identity.properties.principalId
  }
}

module dataStorage 'modules/datastorage.bicep' = [for (accountName, i) in dataAccountNames: {
  name: 'datastorage${i + 1}'
  params: {
    name: accountName
    location: location
    tags: allTags
    storageSkuName: storageSkuName
    principalId: identity.properties.principalId
  }
}]

module serviceBus 'modules/servicebus.bicep' = if (enableServiceBus) {
  name: 'servicebus'
  params: {
    name: 'sb-sched-${resourceToken}'
    location: location
    tags: allTags
    serviceBusSkuName: serviceBusSkuName
    principalId: identity.properties.principalId
  }
}

module keyVault 'modules/keyvault.bicep' = {
  name: 'keyvault'
  params: {
    name: 'kv-sched-${resourceToken}'
    location: location
    tags: allTags
    principalId: identity.properties.principalId
    secretKeys: secretKeys
  }
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  params: {
    planName: 'plan-sched-${resourceToken}'
    name: functionAppName
    location: location
    tags: allTags
    azdServiceName: 'api'
    identityId: identity.id
    identityClientId: identity.properties.clientId
    storageBlobEndpoint: storage.outputs.blobEndpoint
    storageQueueEndpoint: storage.outputs.queueEndpoint
    storageTableEndpoint: storage.outputs.tableEndpoint
    deploymentContainerUrl: storage.outputs.deploymentContainerUrl
    applicationInsightsConnectionString: monitoring.outputs.connectionString
    corsAllowedOrigins: corsAllowedOrigins
    maximumInstanceCount: maximumInstanceCount
    alwaysReadyExecutors: alwaysReadyExecutors
    instanceMemoryMB: instanceMemoryMB
    zoneRedundant: zoneRedundant
    disableBasicPublishingCredentials: disableBasicPublishingCredentials
    secretKeysSecretUri: keyVault.outputs.keyringSecretUri
    authMode: authMode
    authTenantId: tenant().tenantId
    authAudience: apiAudience
    authOwner: bootstrapOwnerObjectId
    consoleClientId: consoleClientId
    dataStorageAccounts: join(dataAccountNames, ',')
  }
  // The extra accounts' role assignments exist before the app runs (their names are known up front).
  dependsOn: [
    dataStorage
  ]
  // No explicit dependsOn needed: using the storage and monitoring outputs makes the app wait
  // for those whole modules, role assignments included, so the host starts with its access.
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    location: location
    tags: allTags
    applicationInsightsId: monitoring.outputs.applicationInsightsId
    actionGroupId: alertActionGroupId
    nameSuffix: resourceToken
    failureRatePercent: alertFailureRatePercent
    minimumExecutions: alertMinimumExecutions
    latenessP95Seconds: alertLatenessP95Seconds
  }
}

module availability 'modules/availability.bicep' = {
  name: 'availability'
  params: {
    location: location
    tags: allTags
    applicationInsightsId: monitoring.outputs.applicationInsightsId
    functionAppUri: functionApp.outputs.uri
    actionGroupId: alertActionGroupId
    nameSuffix: resourceToken
  }
}

module silence 'modules/silence.bicep' = {
  name: 'silence'
  params: {
    location: location
    tags: allTags
    applicationInsightsId: monitoring.outputs.applicationInsightsId
    actionGroupId: alertActionGroupId
    nameSuffix: resourceToken
    noSuccessAlerts: noSuccessAlerts
  }
}

module workbook 'modules/workbook.bicep' = {
  name: 'workbook'
  params: {
    location: location
    tags: allTags
    applicationInsightsId: monitoring.outputs.applicationInsightsId
  }
}

// Outputs (azd stores them in .azure/<env>/.env).
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = resourceGroup().name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output SERVICE_API_NAME string = functionApp.outputs.name
output SERVICE_API_URI string = functionApp.outputs.uri
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output SCHEDULER_STORAGE_ACCOUNTS string = join(dataAccountNames, ',')
output AZURE_USER_ASSIGNED_IDENTITY_CLIENT_ID string = identity.properties.clientId
output APPLICATIONINSIGHTS_NAME string = monitoring.outputs.applicationInsightsName
output SERVICEBUS_NAMESPACE string = enableServiceBus ? serviceBus.outputs.fullyQualifiedNamespace : ''
