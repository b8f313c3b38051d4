"""A service in several zones behind one layer-3 load balancer (after the DM sample)."""


def GenerateConfig(context):
  name = context.env['name']
  resources = []
  for zone in context.properties['zones']:
    resources.append({
        'name': name + '-igm-' + zone[-1],
        'type': 'compute.v1.instanceGroupManager',
        'properties': {
            'zone': zone,
            'baseInstanceName': name + '-' + zone[-1],
            'targetSize': context.properties['size'],
        },
    })
  resources.append({
      'name': name + '-lb',
      'type': 'lb-l3.py',
      'properties': {
          'port': context.properties['port'],
          'zones': context.properties['zones'],
      },
  })
  return {'resources': resources}
