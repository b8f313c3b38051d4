"""Names and labels shared by the resources of one replicated service."""


def qualified(env, suffix=''):
    """The resource name, optionally with a suffix: `web`, `web-svc`."""
    return env['name'] + ('-' + suffix if suffix else '')


def labels(env, component):
    return {
        'app.kubernetes.io/name': env['name'],
        'app.kubernetes.io/instance': env['deployment'],
        'app.kubernetes.io/component': component,
        'app.kubernetes.io/managed-by': 'deployment-manager',
    }


def selector(env):
    """The labels a Service and a Deployment agree on."""
    return {
        'app.kubernetes.io/name': env['name'],
        'app.kubernetes.io/instance': env['deployment'],
    }
