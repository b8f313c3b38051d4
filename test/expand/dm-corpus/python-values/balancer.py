"""A balancer: keeps the backends' order, scales the ratio."""


def GenerateConfig(context):
    props = context.properties
    ratio = props['ratio']
    backends = props['backends']
    order = []
    for key, value in backends.iteritems():
        order.append('%s=%s' % (key, value))
    return {
        'resources': [{
            'name': context.env['name'] + '-pool',
            'type': 'compute.v1.targetPool',
            'properties': {
                'ratio': ratio,
                'double': ratio * 2,
                'order': ','.join(order),
                'backends': backends,
                'shares': {'7': 1.0, 'zone': 'a', '3': 0.25},
                'isFloat': isinstance(ratio, float),
            },
        }],
    }
