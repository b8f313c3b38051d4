"""Helper modules for the replicated-service template."""
