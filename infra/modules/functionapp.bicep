// Linux Flex Consumption plan (FC1) + Python 3.11 function app.
//
// - Runtime, scale and deployment storage live in `functionAppConfig` (Flex Consumption does
//   not use FUNCTIONS_WORKER_RUNTIME / FUNCTIONS_EXTENSION_VERSION / WEBSITE_RUN_FROM_PACKAGE
//   app settings or siteConfig.linuxFxVersion).
// - The app runs as a user-assigned managed identity; every connection (host storage,
//   deployment container, Application Insights) is identity-based. No keys, no connection
//   strings with secrets.
// - HTTPS only, TLS 1.2+, FTP(S) off, basic-auth publishing off, remote debugging off,
//   CORS restricted to an explicit list of origins ('*' is filtered out).

@description('SCHEDULER_AUTH: entra (the app validates Entra ID bearer tokens and role assignments) or key (Functions keys).')
@allowed([
  'entra'
  'key'
])
param authMode string = 'entra'

@description('SCHEDULER_AUTH_TENANT_ID: the tenant whose tokens the app accepts.')
param authTenantId string

@description('SCHEDULER_AUTH_AUDIENCE: the application ID URI of the scheduler\'s app registration (comma list allowed).')
param authAudience string

@description('SCHEDULER_AUTH_OWNER: object id(s) of the bootstrap Owner.')
param authOwner string

@description('SCHEDULER_CONSOLE_CLIENT_ID: client id the web console signs users in with (empty: no sign-in, a pasted token).')
param consoleClientId string = ''

@description('SCHEDULER_STORAGE_ACCOUNTS: names of the storage accounts beyond the host\'s that share the collections, comma-separated in the order they were added; empty = one account. Reached with the same identity.')
param dataStorageAccounts string = ''

@description('Flex Consumption plan name.')
param planName string

@description('Function app name (globally unique, becomes <name>.azurewebsites.net).')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('azd service name (azure.yaml services.<name>); azd finds the app by this tag.')
param azdServiceName string = 'api'

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('Client id of the user-assigned identity the app runs as.')
param identityClientId string

@description('Blob endpoint of the host storage account, e.g. https://<account>.blob.core.windows.net/.')
param storageBlobEndpoint string

@description('Queue endpoint of the host storage account.')
param storageQueueEndpoint string

@description('Table endpoint of the host storage account.')
param storageTableEndpoint string

@description('URL of the blob container that holds the deployment package.')
param deploymentContainerUrl string

@description('Application Insights connection string (routing only; local auth is disabled on the component).')
param applicationInsightsConnectionString string

@description('Origins allowed to call the API from a browser, e.g. ["https://portal.example.com"]. Empty = no CORS. "*" is never applied.')
param corsAllowedOrigins array = []

@description('Upper bound of instances the app may scale out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Instances kept warm for the occurrence queue trigger (executor). With 0 the app scales to zero, and the first occurrences after an idle spell wait for a cold start (seconds late); 1 keeps an instance holding the queue poller, so messages visible 5 s before their second are taken in time.')
@minValue(0)
@maxValue(20)
param alwaysReadyExecutors int = 1

@description('Memory per instance in MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Spread the plan over availability zones (only in regions where Flex Consumption supports zones).')
param zoneRedundant bool = false

@description('Disable FTP and SCM basic-auth publishing credentials (deploy with Entra ID: azd / func / az).')
param disableBasicPublishingCredentials bool = true

@description('Versionless URI of the Key Vault secret holding the keyring for job secrets at rest.')
param secretKeysSecretUri string

// Defence in depth: whatever the parameters say, a wildcard origin is never configured.
var allowedOrigins = filter(corsAllowedOrigins, origin => origin != '*')

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    //checkov:skip=CKV_AZURE_225:Flex Consumption zone redundancy is only offered in some regions, so it is opt-in through the zoneRedundant parameter (default false). See infra/README.md.
    reserved: true
    zoneRedundant: zoneRedundant
  }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': azdServiceName })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    //checkov:skip=CKV_AZURE_17:The management API authenticates callers with Entra ID bearer tokens validated by the app (SCHEDULER_AUTH=entra) or Functions keys, not client certificates; requiring mTLS would break the Azure Scheduler-compatible clients.
    //checkov:skip=CKV_AZURE_222:The scheduler's management API is a public HTTPS endpoint by design (authentication required: Entra ID tokens or keys). Private endpoints are an optional hardening step, see infra/README.md.
    //checkov:skip=CKV_AZURE_212:numberOfWorkers is an App Service (dedicated plan) setting; Flex Consumption scales per demand via functionAppConfig.scaleAndConcurrency.
    //checkov:skip=CKV_AZURE_213:App Service health check probes and evicts instances of a fixed instance pool; Flex Consumption scales from zero and has no such pool. Liveness is covered by the smoke test in infra/README.md.
    serverFarmId: plan.id
    httpsOnly: true
    clientCertEnabled: false
    clientAffinityEnabled: false
    publicNetworkAccess: 'Enabled'
    // Key Vault references (SCHEDULER_SECRET_KEYS) are resolved with the user-assigned identity.
    keyVaultReferenceIdentity: identityId
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      runtime: {
        name: 'python'
        version: '3.11'
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        alwaysReady: alwaysReadyExecutors > 0 ? [
          {
            name: 'function:executor'
            instanceCount: alwaysReadyExecutors
          }
        ] : []
      }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      remoteDebuggingEnabled: false
      http20Enabled: true
      cors: {
        allowedOrigins: allowedOrigins
        supportCredentials: false
      }
      appSettings: [
        // Host storage, identity-based (no AzureWebJobsStorage connection string).
        {
          name: 'AzureWebJobsStorage__credential'
          value: 'managedidentity'
        }
        {
          name: 'AzureWebJobsStorage__clientId'
          value: identityClientId
        }
        {
          name: 'AzureWebJobsStorage__blobServiceUri'
          value: storageBlobEndpoint
        }
        {
          name: 'AzureWebJobsStorage__queueServiceUri'
          value: storageQueueEndpoint
        }
        {
          name: 'AzureWebJobsStorage__tableServiceUri'
          value: storageTableEndpoint
        }
        // Application Insights with Entra ID authentication (local auth is disabled).
        {
          name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
          value: applicationInsightsConnectionString
        }
        {
          name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'
          value: 'ClientId=${identityClientId};Authorization=AAD'
        }
        // Lets DefaultAzureCredential in app code pick the user-assigned identity.
        {
          name: 'AZURE_CLIENT_ID'
          value: identityClientId
        }
        // The scheduler's own settings.
        {
          name: 'REGION_NAME'
          value: location
        }
        // Internal addresses actions may call: none (shared/private_targets.py; link-local and metadata
        // addresses only ever when named one by one).
        {
          name: 'SCHEDULER_PRIVATE_TARGETS'
          value: ''
        }
        // Who may call the API: Entra ID tokens for the app registration, checked by the app itself
        // (shared/auth: ARM-shaped 401/403 and role assignments), not App Service Authentication.
        {
          name: 'SCHEDULER_AUTH'
          value: authMode
        }
        {
          name: 'SCHEDULER_AUTH_TENANT_ID'
          value: authTenantId
        }
        {
          name: 'SCHEDULER_AUTH_AUDIENCE'
          value: authAudience
        }
        {
          name: 'SCHEDULER_AUTH_OWNER'
          value: authOwner
        }
        {
          name: 'SCHEDULER_CONSOLE_CLIENT_ID'
          value: consoleClientId
        }
        // More storage accounts for the collections (account names: reached with the identity, no keys).
        {
          name: 'SCHEDULER_STORAGE_ACCOUNTS'
          value: dataStorageAccounts
        }
        // The keyring for job secrets at rest: a Key Vault reference, never the key itself.
        {
          name: 'SCHEDULER_SECRET_KEYS'
          value: '@Microsoft.KeyVault(SecretUri=${secretKeysSecretUri})'
        }
      ]
    }
  }
}

resource ftpPublishing 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = if (disableBasicPublishingCredentials) {
  parent: functionApp
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmPublishing 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = if (disableBasicPublishingCredentials) {
  parent: functionApp
  name: 'scm'
  properties: {
    allow: false
  }
}

output name string = functionApp.name
output id string = functionApp.id
output defaultHostName string = functionApp.properties.defaultHostName
output uri string = 'https://${functionApp.properties.defaultHostName}'
