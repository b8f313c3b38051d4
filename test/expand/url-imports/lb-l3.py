"""A layer-3 load balancer: a target pool and a forwarding rule (after the DM sample)."""

import lb_naming  # from the schema's imports, beside this file


def GenerateConfig(context):
  name = context.env['name']
  region = context.properties['zones'][0][:-2]
  return {'resources': [
      {
          'name': name + '-tp',
          'type': 'compute.v1.targetPool',
          'properties': {'region': region, 'healthChecks': []},
      },
      {
          'name': lb_naming.rule(name),
          'type': 'compute.v1.forwardingRule',
          'properties': {
              'region': region,
              'portRange': context.properties['port'],
              'target': '$(ref.' + name + '-tp.selfLink)',
              'IPProtocol': context.properties['protocol'],
          },
      },
  ]}
