// Optional Service Bus namespace (main.bicep: enableServiceBus). SAS / local auth is
// disabled on the namespace: the function app sends with its user-assigned identity,
// which is granted "Azure Service Bus Data Sender" here.

@description('Service Bus namespace name.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to every resource.')
param tags object = {}

@description('Namespace SKU. Standard or Premium are needed for topics.')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param serviceBusSkuName string = 'Standard'

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

var serviceBusDataSenderRoleId = '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: serviceBusSkuName
    tier: serviceBusSkuName
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource dataSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(namespace.id, principalId, serviceBusDataSenderRoleId)
  scope: namespace
  properties: {
    principalId: principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', serviceBusDataSenderRoleId)
  }
}

output name string = namespace.name
output id string = namespace.id
// e.g. mynamespace.servicebus.windows.net (derived from the endpoint, so sovereign clouds work too)
output fullyQualifiedNamespace string = split(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':')[0]
