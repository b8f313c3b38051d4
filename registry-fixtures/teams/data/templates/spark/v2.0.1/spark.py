"""A standalone Spark cluster: one master (Deployment + Service) and a pool of workers."""


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    image = 'apache/spark:%s' % props['version']
    master_labels = {'app.kubernetes.io/name': 'spark', 'app.kubernetes.io/component': 'master', 'app.kubernetes.io/instance': name}
    worker_labels = {'app.kubernetes.io/name': 'spark', 'app.kubernetes.io/component': 'worker', 'app.kubernetes.io/instance': name}
    master_url = 'spark://%s-master:7077' % name
    return {'resources': [{
        'name': name + '-master',
        'type': 'apps/v1/Deployment',
        'properties': {
            'metadata': {'name': name + '-master', 'labels': master_labels},
            'spec': {
                'replicas': 1,
                'selector': {'matchLabels': master_labels},
                'template': {
                    'metadata': {'labels': master_labels},
                    'spec': {'containers': [{
                        'name': 'master',
                        'image': image,
                        'command': ['/opt/spark/bin/spark-class', 'org.apache.spark.deploy.master.Master'],
                        'ports': [{'name': 'cluster', 'containerPort': 7077}, {'name': 'ui', 'containerPort': 8080}],
                    }]},
                },
            },
        },
    }, {
        'name': name + '-master-service',
        'type': 'v1/Service',
        'properties': {
            'metadata': {'name': name + '-master'},
            'spec': {'selector': master_labels, 'ports': [{'name': 'cluster', 'port': 7077}, {'name': 'ui', 'port': 8080}]},
        },
    }, {
        'name': name + '-workers',
        'type': 'apps/v1/Deployment',
        'properties': {
            'metadata': {'name': name + '-worker', 'labels': worker_labels},
            'spec': {
                'replicas': props['workers'],
                'selector': {'matchLabels': worker_labels},
                'template': {
                    'metadata': {'labels': worker_labels},
                    'spec': {'containers': [{
                        'name': 'worker',
                        'image': image,
                        'command': ['/opt/spark/bin/spark-class', 'org.apache.spark.deploy.worker.Worker', master_url],
                        'env': [
                            {'name': 'SPARK_WORKER_CORES', 'value': str(props['workerCores'])},
                            {'name': 'SPARK_WORKER_MEMORY', 'value': props['workerMemory']},
                        ],
                        'resources': {'requests': {'cpu': str(props['workerCores']), 'memory': props['workerMemory']}, 'limits': {'memory': props['workerMemory']}},
                    }]},
                },
            },
        },
    }]}
