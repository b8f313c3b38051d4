/**
 * The Python oracle of the differential tests: `python3` when it imports jinja2 and yaml, else
 * /usr/bin/python3 (Debian's python3-jinja2 and python3-yaml). Without one, those tests fail.
 */
import { spawnSync } from 'node:child_process';

export function findOracle(): string | undefined {
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import jinja2, yaml'], { encoding: 'utf8' });
    if (probe.status === 0) return python;
  }
  return undefined;
}
