/**
 * The indexing worker (docs/server.md, "Index building off the request thread"): runs
 * `indexSnapshot` for one task at a time, asking the main thread for blobs and stored content, and
 * sends the templates back in batches (each batch is one short deserialisation on the main thread).
 * New content is not sent back: the main thread has it already, so a file names it by path.
 */
import { parentPort } from 'node:worker_threads';
import { type IndexedFile, indexSnapshot } from './build-index.js';
import {
  type FromWorker,
  type PackedBuffers,
  type ToWorker,
  toWireError,
  unpackBuffers,
  type WireFile,
  type WireTemplate,
} from './build-index-pool.js';

/** Versions per batch of templates sent back. */
const BATCH_VERSIONS = 500;

const port = parentPort;
if (!port) throw new Error('build-index-worker runs as a worker thread');

const post = (message: FromWorker) => port.postMessage(message);
const replies = new Map<number, (packed: PackedBuffers) => void>();
let nextId = 0;

function request(message: { type: 'read'; paths: string[] } | { type: 'contents'; shas: string[] }) {
  const id = nextId++;
  return new Promise<Map<string, Buffer>>((resolve) => {
    replies.set(id, (packed) => resolve(unpackBuffers(packed)));
    post({ ...message, id });
  });
}

async function runTask(task: Extract<ToWorker, { type: 'task' }>): Promise<void> {
  // Which path each new content came from, to name it in the answer.
  const pathOf = new Map<Buffer, string>();
  const wire = (f: IndexedFile): WireFile => {
    const { content, ...rest } = f;
    if (!content) return rest;
    const contentPath = pathOf.get(content);
    if (contentPath === undefined) throw new Error(`content of ${f.path} has no source path`);
    return { ...rest, contentPath };
  };
  try {
    const built = await indexSnapshot(task.entries, {
      knownSha: task.knownSha,
      ...(task.previous ? { previous: task.previous } : {}),
      read: async (paths) => {
        const got = await request({ type: 'read', paths: [...paths] });
        for (const [path, content] of got) pathOf.set(content, path);
        return got;
      },
      contents: (shas) => request({ type: 'contents', shas: [...shas] }),
    });
    let batch: WireTemplate[] = [];
    let versions = 0;
    for (const t of built.templates) {
      batch.push({ ...t, versions: t.versions.map((v) => ({ ...v, files: v.files.map(wire) })) });
      versions += t.versions.length;
      if (versions >= BATCH_VERSIONS) {
        post({ type: 'templates', templates: batch });
        batch = [];
        versions = 0;
      }
    }
    if (batch.length) post({ type: 'templates', templates: batch });
    post({
      type: 'done',
      findings: built.findings,
      registryYaml: built.registryYaml ? wire(built.registryYaml) : null,
    });
  } catch (error) {
    post({ type: 'failed', error: toWireError(error) });
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'reply') {
    const resolve = replies.get(message.id);
    replies.delete(message.id);
    resolve?.(message.packed);
  } else {
    replies.clear();
    void runTask(message);
  }
});
