/**
 * clusterRefusal(): what kubectl's answer means (docs/deployments.md "When the cluster says no"),
 * over kubectl's own words as kubectl 1.32 prints them against kube-apiserver 1.20 (recorded in the
 * cluster suite), with the real kubectl reading a kubeconfig for the context and the server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterRefusal, isUnreachable, Kubectl, kubectlSays } from './kubectl.js';

const KLOG =
  'E1128 17:47:33.898577   13134 memcache.go:265] "Unhandled Error" err="couldn\'t get current server API group list: the server has asked for the client to provide credentials"\n';
const UNAUTHORIZED = `${KLOG}error: You must be logged in to the server (the server has asked for the client to provide credentials)\n`;
const REFUSED =
  'E1128 17:47:34.012645   13145 memcache.go:265] "Unhandled Error" err="couldn\'t get current server API group list: Get \\"https://127.0.0.1:1/api?timeout=32s\\": dial tcp 127.0.0.1:1: connect: connection refused"\nThe connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n';
const rbac = (name: string) =>
  `Error from server (Forbidden): configmaps "${name}" is forbidden: User "dm-viewer" cannot patch resource "configmaps" in API group "" in the namespace "default"\n`;
const TERMINATING =
  'Error from server (Forbidden): error when creating "STDIN": configmaps "a" is forbidden: unable to create new content in namespace team because it is being terminated\n';

describe('clusterRefusal()', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-kubectl-test-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: prod, context: {cluster: c, user: u}}]\ncurrent-context: prod\n',
  );
  const kubectl = new Kubectl({ kubeconfig });

  it('clusterRefusal() says a refused token in kubectl words with the context and server, CLUSTER_UNAUTHORIZED', async () => {
    const e = await clusterRefusal(kubectl, UNAUTHORIZED);
    assert.equal(e?.code, 'CLUSTER_UNAUTHORIZED');
    assert.equal(e?.category, 'unauthorized');
    assert.equal(
      e?.message,
      "the cluster at https://127.0.0.1:6443 refused the credentials of context 'prod': You must be logged in to the server (the server has asked for the client to provide credentials)",
    );
  });

  it('clusterRefusal() says an RBAC refusal of every object as CLUSTER_FORBIDDEN; one object of several, or an admission refusal, is not', async () => {
    const all = await clusterRefusal(kubectl, rbac('a') + rbac('b'), 2);
    assert.equal(all?.code, 'CLUSTER_FORBIDDEN');
    assert.equal(all?.category, 'forbidden');
    assert.match(
      all?.message ?? '',
      /^the cluster at https:\/\/127\.0\.0\.1:6443 refused what context 'prod' asked: Error from server \(Forbidden\): configmaps "a" is forbidden: User "dm-viewer" cannot patch/,
    );
    assert.equal(await clusterRefusal(kubectl, rbac('a'), 2), undefined);
    assert.equal(await clusterRefusal(kubectl, TERMINATING), undefined);
  });

  it('clusterRefusal() leaves nothing answering to isUnreachable(), which names it by kubectl words', async () => {
    assert.equal(await clusterRefusal(kubectl, REFUSED), undefined);
    assert.equal(isUnreachable(REFUSED), true);
    assert.equal(isUnreachable(UNAUTHORIZED), false);
    assert.equal(
      kubectlSays(REFUSED),
      'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?',
    );
  });
});
