"""A ServiceAccount with a Role (or, with `clusterWide`, a ClusterRole) and the binding between them."""


def GenerateConfig(context):
    name = context.env['name']
    props = context.properties
    cluster = False
    role_kind = 'ClusterRole' if cluster else 'Role'
    rules = [{
        'apiGroups': rule.get('apiGroups', ['']),
        'resources': rule['resources'],
        'verbs': rule['verbs'],
    } for rule in props['rules']]
    return {'resources': [{
        'name': name + '-sa',
        'type': 'v1/ServiceAccount',
        'properties': {'metadata': {'name': name, 'namespace': props['namespace']}},
    }, {
        'name': name + '-role',
        'type': 'rbac.authorization.k8s.io/v1/' + role_kind,
        'properties': {
            'metadata': dict({'name': name}, **({} if cluster else {'namespace': props['namespace']})),
            'rules': rules,
        },
    }, {
        'name': name + '-binding',
        'type': 'rbac.authorization.k8s.io/v1/' + role_kind + 'Binding',
        'properties': {
            'metadata': dict({'name': name}, **({} if cluster else {'namespace': props['namespace']})),
            'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': role_kind, 'name': name},
            'subjects': [{'kind': 'ServiceAccount', 'name': name, 'namespace': props['namespace']}],
        },
    }]}
