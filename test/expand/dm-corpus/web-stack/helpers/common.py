def MachineType(project, zone, machine_type):
    return 'projects/%s/zones/%s/machineTypes/%s' % (project, zone, machine_type)


def Labels(context):
    labels = {}
    for key, value in context.env.iteritems():
        if key in ('deployment', 'name'):
            labels[key] = value
    if context.properties.has_key('index'):
        labels['index'] = str(context.properties['index'])
    return labels
