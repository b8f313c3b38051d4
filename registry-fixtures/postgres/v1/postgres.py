"""PostgreSQL: a StatefulSet with one volume, a headless Service, and a Secret with the password.
"""

import base64
import hashlib


def password(context):
    """A stable password for the demo when none is given: derived, never random, so expansion is reproducible."""
    if context.properties['password']:
        return context.properties['password']
    seed = '%s/%s' % (context.env['deployment'], context.env['name'])
    return hashlib.sha256(seed.encode('utf-8')).hexdigest()[:24]


def b64(text):
    return base64.b64encode(text.encode('utf-8')).decode('ascii')


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    labels = {'app.kubernetes.io/name': 'postgres', 'app.kubernetes.io/instance': name}
    secret_name = name + '-credentials'
    resources = [{
        'name': secret_name,
        'type': 'v1/Secret',
        'properties': {
            'metadata': {'name': secret_name, 'labels': labels},
            'type': 'Opaque',
            'data': {
                'POSTGRES_USER': b64(props['user']),
                'POSTGRES_PASSWORD': b64(password(context)),
                'POSTGRES_DB': b64(props['database']),
            },
        },
    }, {
        'name': name + '-headless',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'clusterIP': 'None',
                'selector': labels,
                'ports': [{'name': 'postgres', 'port': 5432}],
            },
        },
    }, {
        'name': name,
        'type': 'apps/v1/StatefulSet',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'serviceName': name,
                'replicas': 1,
                'selector': {'matchLabels': labels},
                'template': {
                    'metadata': {'labels': labels},
                    'spec': {
                        'containers': [{
                            'name': 'postgres',
                            'image': 'postgres:%s' % props['version'],
                            'envFrom': [{'secretRef': {'name': secret_name}}],
                            'ports': [{'name': 'postgres', 'containerPort': 5432}],
                            'readinessProbe': {
                                'exec': {'command': ['pg_isready', '-U', props['user']]},
                                'periodSeconds': 10,
                            },
                            'volumeMounts': [{'name': 'data', 'mountPath': '/var/lib/postgresql/data'}],
                        }],
                    },
                },
                'volumeClaimTemplates': [{
                    'metadata': {'name': 'data'},
                    'spec': {
                        'accessModes': ['ReadWriteOnce'],
                        'resources': {'requests': {'storage': props['storage']}},
                    },
                }],
            },
        },
    }]
    return {'resources': resources}
