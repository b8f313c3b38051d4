"""Names of the load balancer's parts: imported by lb-l3.py through its schema's imports."""


def rule(name):
  return name + '-fr'
