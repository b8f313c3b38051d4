"""Prometheus scrape configuration, as plain data that the template serializes to YAML."""


def kubernetes_pods_job(namespaces):
    job = {
        'job_name': 'kubernetes-pods',
        'kubernetes_sd_configs': [{'role': 'pod'}],
        'relabel_configs': [{
            'source_labels': ['__meta_kubernetes_pod_annotation_prometheus_io_scrape'],
            'action': 'keep',
            'regex': 'true',
        }],
    }
    if namespaces:
        job['kubernetes_sd_configs'][0]['namespaces'] = {'names': list(namespaces)}
    return job


def config(interval, namespaces, rule_files):
    cfg = {
        'global': {'scrape_interval': interval, 'evaluation_interval': interval},
        'scrape_configs': [kubernetes_pods_job(namespaces)],
    }
    if rule_files:
        cfg['rule_files'] = rule_files
    return cfg
