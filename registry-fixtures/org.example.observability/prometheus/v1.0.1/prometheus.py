"""Prometheus server: RBAC to discover pods, its configuration, a Deployment with a volume, a Service."""

import yaml

from helpers import scrape


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    labels = {'app.kubernetes.io/name': 'prometheus', 'app.kubernetes.io/instance': name}
    rule_files = []
    files = {'prometheus.yml': yaml.safe_dump(scrape.config(props['scrapeInterval'], props['namespaces'], rule_files), default_flow_style=False)}
    return {'resources': [{
        'name': name + '-sa',
        'type': 'v1/ServiceAccount',
        'properties': {'metadata': {'name': name, 'labels': labels}},
    }, {
        'name': name + '-role',
        'type': 'rbac.authorization.k8s.io/v1/ClusterRole',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'rules': [{
                'apiGroups': [''],
                'resources': ['pods', 'services', 'endpoints', 'nodes'],
                'verbs': ['get', 'list', 'watch'],
            }],
        },
    }, {
        'name': name + '-binding',
        'type': 'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': name},
            'subjects': [{'kind': 'ServiceAccount', 'name': name, 'namespace': props['namespace']}],
        },
    }, {
        'name': name + '-config',
        'type': 'v1/ConfigMap',
        'properties': {'metadata': {'name': name + '-config', 'labels': labels}, 'data': files},
    }, {
        'name': name,
        'type': 'apps/v1/Deployment',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'replicas': 1,
                'selector': {'matchLabels': labels},
                'template': {
                    'metadata': {'labels': labels},
                    'spec': {
                        'serviceAccountName': name,
                        'containers': [{
                            'name': 'prometheus',
                            'image': 'prom/prometheus:%s' % props['version'],
                            'args': [
                                '--config.file=/etc/prometheus/prometheus.yml',
                                '--storage.tsdb.path=/prometheus',
                                '--storage.tsdb.retention.time=%s' % props['retention'],
                            ],
                            'ports': [{'name': 'web', 'containerPort': 9090}],
                            'volumeMounts': [
                                {'name': 'config', 'mountPath': '/etc/prometheus'},
                                {'name': 'data', 'mountPath': '/prometheus'},
                            ],
                        }],
                        'volumes': [
                            {'name': 'config', 'configMap': {'name': name + '-config'}},
                            {'name': 'data', 'emptyDir': {}},
                        ],
                    },
                },
            },
        },
    }, {
        'name': name + '-service',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {'selector': labels, 'ports': [{'name': 'web', 'port': 9090, 'targetPort': 'web'}]},
        },
    }]}
