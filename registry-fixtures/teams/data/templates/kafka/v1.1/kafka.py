"""Apache Kafka brokers as a StatefulSet in KRaft mode (no ZooKeeper), with a headless Service for the
brokers and a client Service."""


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    labels = {'app.kubernetes.io/name': 'kafka', 'app.kubernetes.io/instance': name}
    env = [
        {'name': 'KAFKA_LISTENERS', 'value': 'PLAINTEXT://:9092,CONTROLLER://:9093'},
        {'name': 'KAFKA_DEFAULT_REPLICATION_FACTOR', 'value': str(min(3, props['brokers']))},
        {'name': 'KAFKA_LOG_RETENTION_HOURS', 'value': str(props['retentionHours'])},
    ]
    voters = ','.join('%d@%s-%d.%s:9093' % (i, name, i, name) for i in range(props['brokers']))
    env.append({'name': 'KAFKA_CONTROLLER_QUORUM_VOTERS', 'value': voters})
    env.append({'name': 'KAFKA_PROCESS_ROLES', 'value': 'broker,controller'})
    return {'resources': [{
        'name': name + '-headless',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {'clusterIP': 'None', 'selector': labels, 'ports': [{'name': 'broker', 'port': 9092}]},
        },
    }, {
        'name': name + '-client',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name + '-client', 'labels': labels},
            'spec': {'selector': labels, 'ports': [{'name': 'broker', 'port': 9092}]},
        },
    }, {
        'name': name,
        'type': 'apps/v1/StatefulSet',
        'properties': {
            'metadata': {'name': name, 'labels': labels},
            'spec': {
                'serviceName': name,
                'replicas': props['brokers'],
                'podManagementPolicy': 'Parallel',
                'selector': {'matchLabels': labels},
                'template': {
                    'metadata': {'labels': labels},
                    'spec': {'containers': [{
                        'name': 'kafka',
                        'image': 'apache/kafka:%s' % props['version'],
                        'env': env,
                        'ports': [{'name': 'broker', 'containerPort': 9092}],
                        'volumeMounts': [{'name': 'data', 'mountPath': '/var/lib/kafka/data'}],
                    }]},
                },
                'volumeClaimTemplates': [{
                    'metadata': {'name': 'data'},
                    'spec': {'accessModes': ['ReadWriteOnce'], 'resources': {'requests': {'storage': props['storage']}}},
                }],
            },
        },
    }]}
