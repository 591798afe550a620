// Key Vault for the scheduler's key-encryption keys (secrets at rest, docs/secrets.md).
//
// - RBAC authorization only (no access policies); the app's user-assigned identity is granted
//   "Key Vault Secrets User" on this vault and reads the secret through a Key Vault reference
//   in the app setting SCHEDULER_SECRET_KEYS.
// - Soft delete (90 days) and purge protection: losing the key would make every stored job
//   secret unreadable.
// - The secret `scheduler-secret-keys` holds the keyring: key materials separated by ';', the
//   first one current. Its value comes from the secure parameter `secretKeys` (azd generates one
//   on first provision); rotation = deploy with "NEW;OLD", run `python -m shared.store.rekey`,
//   then deploy with "NEW".

@description('Key Vault name (3-24 characters).')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

@secure()
@description('The keyring: key materials (at least 32 characters each) separated by \';\', the current one first.')
param secretKeys string

var keyVaultSecretsUserRoleId = '4633458b-17de-408a-b874-0445c86b69e6'
var secretName = 'scheduler-secret-keys'

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    //checkov:skip=CKV_AZURE_109:Flex Consumption apps without VNet integration reach Key Vault over its public endpoint; access is Entra ID + RBAC only. Private endpoints are an optional hardening step, see infra/README.md.
    //checkov:skip=CKV_AZURE_189:Same reason as CKV_AZURE_109: the app resolves its Key Vault reference over the public endpoint unless the deployment adds VNet integration and a private endpoint.
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    enablePurgeProtection: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

resource keyring 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: secretName
  properties: {
    //checkov:skip=CKV_AZURE_41:The keyring must not expire: an expired Key Vault reference would leave every stored job secret unreadable. Rotation is a documented procedure (docs/secrets.md).
    value: secretKeys
    contentType: 'text/plain; scheduler keyring'
  }
}

resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, principalId, keyVaultSecretsUserRoleId)
  scope: vault
  properties: {
    principalId: principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsUserRoleId)
  }
}

output name string = vault.name
// Versionless: the app picks up a new version of the secret (a rotated keyring) on restart.
output keyringSecretUri string = '${vault.properties.vaultUri}secrets/${secretName}'
