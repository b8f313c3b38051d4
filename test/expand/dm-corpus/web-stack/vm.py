"""A VM built with a shared helper; sizes come from a YAML import (DM style: yaml.load)."""
import yaml
from helpers import common


def GenerateConfig(context):
    props = context.properties
    sizes = yaml.load(context.imports['sizes.yaml'])
    name = context.env['name']
    disk = name + '-disk'
    resources = [{
        'name': name,
        'type': 'compute.v1.instance',
        'properties': {
            'zone': props['zone'],
            'machineType': common.MachineType(context.env['project'], props['zone'], props['machineType']),
            'tags': {'items': list(props['tags'])},
            'disks': [{'deviceName': disk, 'source': '$(ref.%s-pd.selfLink)' % disk, 'boot': True}],
            'metadata': {'items': [{'key': k, 'value': v} for k, v in sorted(common.Labels(context).items())]},
        },
    }, {
        'name': disk,
        'type': 'disk.jinja',
        'properties': {'zone': props['zone'], 'sizeGb': sizes['default'] + props['index'] * sizes['step']},
    }]
    return yaml.dump({'resources': resources})
