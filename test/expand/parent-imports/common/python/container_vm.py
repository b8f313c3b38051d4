"""Shared helper: a VM resource with a startup script."""


def GenerateVm(name, zone, script):
    return {
        'name': name,
        'type': 'compute.v1.instance',
        'properties': {'zone': zone, 'metadata': {'items': [{'key': 'startup-script', 'value': script}]}},
    }
