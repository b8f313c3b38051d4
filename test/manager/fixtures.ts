/** Configurations the Deployment Manager tests deploy: a Service, a ConfigMap filled from it by $(ref), and one more. */
export const APP = `resources:
- name: db
  type: Service
  properties:
    spec: {ports: [{port: 5432}], selector: {app: db}}
- name: settings
  type: ConfigMap
  properties:
    data:
      dbHost: $(ref.db.spec.clusterIP)
- name: extra
  type: ConfigMap
  properties:
    data: {a: b}
`;

export const APP_WITHOUT_EXTRA = APP.slice(0, APP.indexOf('- name: extra'));

/** A registry server with the manager API on SQLite and a Kubernetes stand-in, and `POST /api/v1/expand`. */
export async function startManagerServer(prefix: string): Promise<{
  expand: (configuration: unknown) => Promise<{ status: number; text: string }>;
  close: () => Promise<void>;
}> {
  const { join } = await import('node:path');
  const { managerPaths } = await import('../../server/src/manager/manager-tokens.js');
  const { startKubeStandin } = await import('../kube-standin/server.js');
  const { ADMIN_TOKEN, tempDir, testServerOn } = await import('../server/helpers.js');
  const standin = await startKubeStandin();
  const dir = tempDir(prefix);
  const s = await testServerOn('sqlite', {
    manager: {
      clusters: { prod: standin.writeKubeconfig(dir, { namespace: 'default' }) },
      ...managerPaths(join(dir, 'registry.db')),
    },
  });
  await s.manager!.ready;
  return {
    async expand(configuration) {
      const res = await s.app.request('/api/v1/expand', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ configuration }),
      });
      return { status: res.status, text: await res.text() };
    },
    async close() {
      await s.manager?.idle();
      await s.manager?.close();
      await s.close();
      await standin.close();
    },
  };
}
