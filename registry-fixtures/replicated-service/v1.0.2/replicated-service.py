"""A replicated, load-balanced service: a Deployment of identical pods behind a Service.

The classic Deployment Manager sample (replicatedservice.py), for apps/v1.
"""

from helpers import naming


def container(props):
    c = {
        'name': 'app',
        'image': props['image'],
        'ports': [{'name': 'http', 'containerPort': props['containerPort']}],
        'resources': {
            'requests': {'cpu': props['cpu'], 'memory': props['memory']},
            'limits': {'memory': props['memory']},
        },
    }
    if props['healthPath']:
        probe = {'httpGet': {'path': props['healthPath'], 'port': 'http'}, 'periodSeconds': 10}
        c['readinessProbe'] = probe
        c['livenessProbe'] = dict(probe, initialDelaySeconds=15)
    return c


def GenerateConfig(context):
    env = context.env
    props = context.properties
    deployment = {
        'name': naming.qualified(env),
        'type': 'apps/v1/Deployment',
        'properties': {
            'metadata': {'name': naming.qualified(env), 'labels': naming.labels(env, 'server')},
            'spec': {
                'replicas': props['replicas'],
                'selector': {'matchLabels': naming.selector(env)},
                'template': {
                    'metadata': {'labels': dict(naming.selector(env), **{'app.kubernetes.io/component': 'server'})},
                    'spec': {'containers': [container(props)]},
                },
            },
        },
    }
    service = {
        'name': naming.qualified(env, 'svc'),
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': naming.qualified(env), 'labels': naming.labels(env, 'server')},
            'spec': {
                'type': 'ClusterIP',
                'selector': naming.selector(env),
                'ports': [{'name': 'http', 'port': props['port'], 'targetPort': 'http'}],
            },
        },
    }
    return {'resources': [deployment, service]}
