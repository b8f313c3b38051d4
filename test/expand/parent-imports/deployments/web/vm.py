import container_vm


def GenerateConfig(context):
    script = context.imports['startup.sh']
    return {'resources': [container_vm.GenerateVm(context.env['name'] + '-vm', context.properties['zone'], script)]}
