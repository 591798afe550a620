// An extra storage account for the scheduler's collections, jobs, due index, history and claims
// (SCHEDULER_STORAGE_ACCOUNTS; docs/capacity.md). Tables only: the host, the queues and the deployment
// package stay on the primary account (modules/storage.bicep).
//
// The same secure defaults as the primary account: no shared keys (Entra ID / managed identity only), no
// anonymous blob access, TLS 1.2+, HTTPS only. The app's identity gets Storage Table Data Contributor here
// and nothing else.

@description('Storage account name (3-24 lowercase letters and digits, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Replication SKU. Geo-redundant by default: the account holds job definitions and history.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
  'Standard_GZRS'
  'Standard_RAGRS'
  'Standard_RAGZRS'
])
param storageSkuName string = 'Standard_GRS'

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

// Built-in role definition id (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles).
var storageTableDataContributorRoleId = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: storageSkuName
  }
  properties: {
    //checkov:skip=CKV_AZURE_35:A Flex Consumption app without VNet integration reaches its storage over the public endpoint; access is Entra ID only (shared keys disabled). See infra/README.md, "Network hardening".
    //checkov:skip=CKV_AZURE_59:Same reason as CKV_AZURE_35: the public endpoint is needed without VNet integration and private endpoints; every request must carry an Entra ID token.
    accessTier: 'Hot'
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    allowCrossTenantReplication: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
    encryption: {
      keySource: 'Microsoft.Storage'
      services: {
        blob: {
          enabled: true
        }
        file: {
          enabled: true
        }
        table: {
          enabled: true
          keyType: 'Account'
        }
      }
    }
  }
}

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource tableDataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, storageTableDataContributorRoleId)
  scope: storage
  properties: {
    principalId: principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageTableDataContributorRoleId)
  }
}

output name string = storage.name
output tableEndpoint string = storage.properties.primaryEndpoints.table
