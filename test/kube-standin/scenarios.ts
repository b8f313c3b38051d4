/**
 * kubectl runs whose request sequences are recorded in fixtures/ (kubectl's own -v=6 log) and replayed
 * by the tests against the stand-in. Re-record with `node dist/test/kube-standin/record-fixtures.js`.
 *
 * A recorded sequence must not depend on how fast kubectl runs: a run that waits for something (a
 * namespace to go, a rollout to finish) finds it not done yet and watches, and the stand-in finishes
 * it only then (`whenWatching`), instead of after a delay that a busy machine can outlast.
 */
import type { KubeStandin, StandinOptions } from './server.js';

export const MANIFEST = `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {x: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`;

export const NAMESPACE_MANIFEST = `apiVersion: v1
kind: Namespace
metadata: {name: team}
`;

export interface Scenario {
  name: string;
  /** The file `manifest.yaml` (default MANIFEST). */
  manifest?: string;
  /** kubectl runs before the recorded one (not recorded). */
  setup: string[][];
  /** The recorded run; `-f manifest.yaml` refers to MANIFEST written next to the kubeconfig. */
  args: string[];
  /** Whether the discovery cache is warm (setup used the same cache dir). */
  warmCache: boolean;
  /** Options of the scenario's stand-in. */
  standin?: StandinOptions;
  /** What the cluster does once the recorded run watches (what it waits for happens then). */
  whenWatching?: (standin: KubeStandin) => void;
}

/** Starts the recorded run's `whenWatching` reaction; call right before starting the recorded run. */
export function reactToWatch(scenario: Scenario, standin: KubeStandin): void {
  const react = scenario.whenWatching;
  if (react) void standin.nextRequest((r) => r.query.watch === 'true').then(() => react(standin));
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'apply-server-side-cold',
    setup: [],
    args: ['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml'],
    warmCache: false,
  },
  {
    name: 'apply-server-side-dry-run-warm',
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['apply', '--server-side', '--field-manager=dm', '--dry-run=server', '-f', 'manifest.yaml'],
    warmCache: true,
  },
  {
    name: 'get-json-warm',
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['get', '-o', 'json', '-f', 'manifest.yaml'],
    warmCache: true,
  },
  {
    name: 'delete-warm',
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['delete', '-f', 'manifest.yaml'],
    warmCache: true,
  },
  {
    name: 'rollout-status-warm',
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['rollout', 'status', 'deployment/web', '--timeout=300s'],
    warmCache: true,
    standin: { readyByDefault: false },
    whenWatching: (standin) => standin.setReady('Deployment', 'default', 'web', true),
  },
  {
    name: 'delete-namespace-warm',
    manifest: NAMESPACE_MANIFEST,
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['delete', '-f', 'manifest.yaml'],
    warmCache: true,
    standin: { namespaceFinalizeMs: null },
    whenWatching: (standin) => standin.finalizeNamespace('team'),
  },
];
