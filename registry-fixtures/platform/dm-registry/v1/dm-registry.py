"""dm-registry for an organisation: N stateless replicas sharing PostgreSQL, and a migration Job.

The database URL and the key that encrypts stored credentials come from one Secret (created here
from `databaseUrl` and `secretKey`, or an existing one named by `existingSecret`), so every replica
reads the same database with the same key. Replicas are ready when /readyz answers (migrations
applied, database reachable). The migration Job is named after the image, so it runs once per
image: re-applying the same deployment leaves the finished Job alone, a new image runs a new one.
"""

import base64
import hashlib


def b64(text):
    return base64.b64encode(text.encode('utf-8')).decode('ascii')


def secret_name(context):
    props = context.properties
    if props['existingSecret']:
        return props['existingSecret']
    if not props['databaseUrl'] or not props['secretKey']:
        raise ValueError('give existingSecret, or both databaseUrl and secretKey')
    return context.env['name'] + '-config'


def env_from_secret(context):
    name = secret_name(context)
    env = [
        {'name': 'DM_REGISTRY_DB', 'valueFrom': {'secretKeyRef': {'name': name, 'key': 'database-url'}}},
        {'name': 'DM_REGISTRY_SECRET_KEY', 'valueFrom': {'secretKeyRef': {'name': name, 'key': 'secret-key'}}},
    ]
    if context.properties['adminTokenKey']:
        env.append({'name': 'DM_ADMIN_TOKEN', 'valueFrom': {'secretKeyRef': {
            'name': name, 'key': context.properties['adminTokenKey']}}})
    return env


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    selector = {'app.kubernetes.io/name': 'dm-registry', 'app.kubernetes.io/instance': name}
    labels = dict(selector)
    if props['organisation']:
        labels['app.kubernetes.io/part-of'] = props['organisation']
    port = props['port']
    args = ['start', '--port', str(port)]
    for source in props['index']:
        args += ['--index', source]
    if props['defaultRegistry']:
        args += ['--default-registry', props['defaultRegistry']]
    resources = []
    if not props['existingSecret']:
        secret = secret_name(context)
        data = {'database-url': b64(props['databaseUrl']), 'secret-key': b64(props['secretKey'])}
        resources.append({
            'name': secret,
            'type': 'v1/Secret',
            'properties': {
                'metadata': {'name': secret, 'labels': labels},
                'type': 'Opaque',
                'data': data,
            },
        })
    migrate = '%s-migrate-%s' % (name, hashlib.sha256(props['image'].encode('utf-8')).hexdigest()[:10])
    resources.append({
        'name': migrate,
        'type': 'batch/v1/Job',
        'properties': {
            'metadata': {'name': migrate, 'labels': labels},
            'spec': {
                'backoffLimit': 6,
                'template': {
                    'metadata': {'labels': {'app.kubernetes.io/name': 'dm-registry-migrate',
                                            'app.kubernetes.io/instance': name}},
                    'spec': {
                        'restartPolicy': 'OnFailure',
                        'containers': [{
                            'name': 'migrate',
                            'image': props['image'],
                            'args': ['migrate'],
                            'env': env_from_secret(context),
                        }],
                    },
                },
            },
        },
    })
    probe = lambda path, period: {
        'httpGet': {'path': path, 'port': 'http'},
        'periodSeconds': period,
        'failureThreshold': 3,
    }
    resources.append({
        'name': name,
        'type': 'apps/v1/Deployment',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'replicas': props['replicas'],
                'selector': {'matchLabels': selector},
                'strategy': {'type': 'RollingUpdate', 'rollingUpdate': {'maxUnavailable': 0, 'maxSurge': 1}},
                'template': {
                    'metadata': {'labels': labels},
                    'spec': {
                        # Drain (SIGTERM): dm-registry finishes in-flight requests and syncs.
                        'terminationGracePeriodSeconds': 30,
                        'containers': [{
                            'name': 'dm-registry',
                            'image': props['image'],
                            'args': args,
                            'env': env_from_secret(context),
                            'ports': [{'name': 'http', 'containerPort': port}],
                            'readinessProbe': probe('/readyz', 5),
                            'livenessProbe': probe('/healthz', 20),
                            'resources': {'requests': {'cpu': props['cpu'], 'memory': props['memory']}},
                        }],
                    },
                },
            },
        },
    })
    resources.append({
        'name': name + '-service',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'selector': selector,
                'ports': [{'name': 'http', 'port': 80, 'targetPort': 'http'}],
            },
        },
    })
    if props['replicas'] > 1:
        resources.append({
            'name': name + '-pdb',
            'type': 'policy/v1/PodDisruptionBudget',
            'properties': {
                'metadata': {'name': name, 'labels': labels},
                'spec': {'maxUnavailable': 1, 'selector': {'matchLabels': selector}},
            },
        })
    return {'resources': resources}
