"""An Opaque Secret from string values, base64-encoded here so that configurations hold plain text."""

import base64


def GenerateConfig(context):
    props = context.properties
    data = {}
    for key, value in sorted(props['stringData'].items()):
        data[key] = base64.b64encode(str(value).encode('utf-8')).decode('ascii')
    # Keys listed in `generated` get a value derived from the deployment, for demos and tests only.
    for key in props['generated']:
        seed = '%s/%s/%s' % (context.env['deployment'], context.env['name'], key)
        data[key] = base64.b64encode(seed.encode('utf-8')).decode('ascii')
    return {
        'resources': [{
            'name': context.env['name'],
            'type': 'v1/Secret',
            'properties': {
                'metadata': {
                    'name': props['secretName'] or context.env['name'],
                    'labels': {'app.kubernetes.io/managed-by': 'deployment-manager'},
                },
                'type': props['secretType'],
                'data': data,
            },
        }],
    }
