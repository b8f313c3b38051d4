"""Network policies for one namespace: deny all ingress by default, then allow traffic to an app
from the pods and namespaces listed."""


def GenerateConfig(context):
    props = context.properties
    name = context.env['name']
    resources = []
    if props['defaultDeny']:
        resources.append({
            'name': name + '-default-deny',
            'type': 'networking.k8s.io/v1/NetworkPolicy',
            'properties': {
                'metadata': {'name': 'default-deny-ingress'},
                'spec': {'podSelector': {}, 'policyTypes': ['Ingress']},
            },
        })
    peers = []
    for app in props['allowFromApps']:
        peers.append({'podSelector': {'matchLabels': {'app.kubernetes.io/name': app}}})
    for ns in props['allowFromNamespaces']:
        peers.append({'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': ns}}})
    allow = {
        'name': name,
        'type': 'networking.k8s.io/v1/NetworkPolicy',
        'properties': {
            'metadata': {'name': name},
            'spec': {
                'podSelector': {'matchLabels': {'app.kubernetes.io/name': props['app']}},
                'policyTypes': ['Ingress'],
                'ingress': [{
                    'from': peers,
                    'ports': [{'protocol': 'TCP', 'port': p} for p in props['ports']],
                }],
            },
        },
    }
    resources.append(allow)
    return {'resources': resources}
