/**
 * Records, for each scenario, the request lines kubectl itself logs (-v=6) into fixtures/<name>.txt.
 * Run: `node dist/test/kube-standin/record-fixtures.js` (writes into test/kube-standin/fixtures).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertSucceeded, kubectl, requestLinesFromKubectlLog } from './kubectl.js';
import { MANIFEST, reactToWatch, SCENARIOS } from './scenarios.js';
import { startKubeStandin } from './server.js';

const out = new URL('../../../test/kube-standin/fixtures/', import.meta.url).pathname;
for (const scenario of SCENARIOS) {
  const standin = await startKubeStandin(scenario.standin);
  const dir = mkdtempSync(join(tmpdir(), 'kube-record-'));
  const kubeconfig = standin.writeKubeconfig(dir);
  writeFileSync(join(dir, 'manifest.yaml'), scenario.manifest ?? MANIFEST);
  const cacheDir = join(dir, 'cache');
  const cwdArgs = (args: string[]) => args.map((a) => (a === 'manifest.yaml' ? join(dir, a) : a));
  for (const setup of scenario.setup)
    assertSucceeded(await kubectl(cwdArgs(setup), { kubeconfig, cacheDir }));
  reactToWatch(scenario, standin);
  const run = assertSucceeded(await kubectl([...cwdArgs(scenario.args), '-v=6'], { kubeconfig, cacheDir }));
  const lines = requestLinesFromKubectlLog(run.stderr);
  writeFileSync(
    join(out, `${scenario.name}.txt`),
    `# kubectl ${scenario.args.join(' ')} (exit ${run.code})\n${lines.join('\n')}\n`,
  );
  console.log(`${scenario.name}: ${lines.length} requests`);
  await standin.close();
  rmSync(dir, { recursive: true, force: true });
}
