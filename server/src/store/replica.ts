/**
 * The name of this process among the replicas sharing a database (docs/server.md, "Sync
 * history"): `<host name>:<pid>`. On Kubernetes the host name is the pod's name.
 */
import { hostname } from 'node:os';

let name: string | undefined;

export function replicaName(): string {
  name ??= `${hostname()}:${process.pid}`;
  return name;
}
