def GenerateConfig(context):
    return {'resources': []}
