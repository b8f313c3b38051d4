def GenerateConfig(context):
    return {'resources': [{'name': context.env['name'], 'type': 'v1/ConfigMap', 'properties': {'data': {}}}]}
