/**
 * The request thread's side of the expansion workers (docs/manager.md, "Expansions off the request
 * thread"). Each expansion runs in a worker thread with a heap bound of its own; a worker is kept
 * for the next expansion (idle workers never hold the process open), so there are at most as many
 * as the manager's expansion admission lets run at once. A worker that dies (an expansion that
 * outgrows its heap) fails its expansion with EXPANSION_TOO_LARGE and is not reused.
 */
import { Worker } from 'node:worker_threads';
import type { DeploymentInput } from '../../../client/src/deploy/index.js';
import { DmError } from '../../../client/src/error.js';
import { fromWireError, toWireError } from '../indexer/build-index-pool.js';
import type { CatalogView } from './catalog-resolver.js';
import type { ExpansionJob } from './expand-configuration.js';
import type { FromExpansionWorker, ToExpansionWorker } from './expansion-worker.js';

/** An expansion worker's heap bound, MB: a 7 MB configuration of 24,000 resources peaked near 200 MB. */
export const EXPANSION_WORKER_HEAP_MB = 512;

export class ExpansionPool {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();

  constructor(private readonly heapMb = EXPANSION_WORKER_HEAP_MB) {}

  /** The expansion as objects (for a change the manager plans and applies). */
  expand(job: ExpansionJob, catalog: CatalogView): Promise<DeploymentInput> {
    return this.run(job, catalog, false) as Promise<DeploymentInput>;
  }

  /** `{config, layout, references}` as JSON text (POST /expand's answer). */
  expandToJson(job: ExpansionJob, catalog: CatalogView): Promise<string> {
    return this.run(job, catalog, true) as Promise<string>;
  }

  async close(): Promise<void> {
    const workers = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private run(job: ExpansionJob, catalog: CatalogView, answer: boolean): Promise<unknown> {
    const worker = this.idle.pop() ?? this.spawn();
    worker.ref();
    return new Promise<unknown>((resolve, reject) => {
      const send = (m: ToExpansionWorker) => worker.postMessage(m);
      const reply = (call: number, work: Promise<unknown>) =>
        work.then(
          (value) => send({ type: 'reply', call, value }),
          (error: unknown) => send({ type: 'reply', call, error: toWireError(error) }),
        );
      const finish = () => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
      };
      const onMessage = (m: FromExpansionWorker) => {
        if (m.type === 'resolve') void reply(m.call, catalog.resolve(m.reference));
        else if (m.type === 'file') void reply(m.call, catalog.fileContent(m.sha256));
        else {
          finish();
          worker.unref();
          if (this.all.has(worker)) this.idle.push(worker);
          if (m.type === 'done') resolve(answer ? m.answer : m.input);
          else reject(fromWireError(m.error));
        }
      };
      let crash: unknown;
      const onError = (error: unknown) => {
        crash = error;
      };
      const onExit = () => {
        finish();
        this.all.delete(worker);
        reject(crashError(crash, this.heapMb));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.once('exit', onExit);
      send({ type: 'expand', job, answer });
    });
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./expansion-worker.js', import.meta.url), {
      name: 'dm-manager-expand',
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, stackSizeMb: 4 },
    });
    // An idle worker that dies leaves the pool (a running one's expansion reports it).
    worker.on('error', () => {});
    worker.once('exit', () => {
      this.all.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    this.all.add(worker);
    return worker;
  }
}

function crashError(cause: unknown, heapMb: number): Error {
  if ((cause as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new DmError(
      'EXPANSION_TOO_LARGE',
      `the expansion needed more than the ${heapMb} MB of memory the server gives one expansion`,
      { category: 'limit', cause },
    );
  }
  const reason = cause instanceof Error ? cause.message : String(cause ?? 'it exited');
  // Anything else is the server's fault (500), as an exception of the expansion itself would be.
  return new Error(`the expansion worker stopped: ${reason}`, { cause });
}
