/**
 * kubectl runs whose request sequences are recorded in fixtures/ (kubectl's own -v=6 log) and replayed
 * by the tests against the stand-in. Re-record with `node dist/test/kube-standin/record-fixtures.js`.
 */

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
    args: ['rollout', 'status', 'deployment/web', '--timeout=10s'],
    warmCache: true,
  },
  {
    name: 'delete-namespace-warm',
    manifest: NAMESPACE_MANIFEST,
    setup: [['apply', '--server-side', '--field-manager=dm', '-f', 'manifest.yaml']],
    args: ['delete', '-f', 'manifest.yaml'],
    warmCache: true,
  },
];
