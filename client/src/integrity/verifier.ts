/**
 * The client's side of the checksum log (docs/integrity.md §5): verify a server's signed
 * checkpoint, check that it extends the latest checkpoint this client verified before (and
 * remember the newer one), and check a version digest against the log with an inclusion proof.
 * Transport-agnostic: the server's answers come through a ChecksumLogSource (HTTP in the CLI, a
 * direct call in tests), the remembered checkpoint through a CheckpointMemory.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { DmError } from '../error.js';
import { type VerifiedCheckpoint, verifyCheckpoint } from './checkpoint.js';
import { integrityError } from './errors.js';
import type { Awaitable } from './hash-store.js';
import { type LogVerifier, parseVerifierKey } from './keys.js';
import { MAX_NOTE_BYTES } from './note.js';
import { verifyConsistency, verifyRecordInclusion } from './proof.js';
import { encodeRecord, type LogRecord, parseRecord, recordKey } from './record.js';

/** Where a client keeps the latest checkpoint it verified (the signed note's text). */
export interface CheckpointMemory {
  load(): Awaitable<string | undefined>;
  save(note: string): Awaitable<void>;
  /** Names the place in messages (a file path). */
  readonly where: string;
}

export class MemoryCheckpointMemory implements CheckpointMemory {
  readonly where = 'memory';
  #note: string | undefined;
  constructor(note?: string) {
    this.#note = note;
  }
  load(): string | undefined {
    return this.#note;
  }
  save(note: string): void {
    this.#note = note;
  }
}

/** One file per log, e.g. `$XDG_STATE_HOME/dm/checksums/<key name>/latest`; written atomically. */
export class FileCheckpointMemory implements CheckpointMemory {
  constructor(readonly where: string) {}
  async load(): Promise<string | undefined> {
    try {
      const bytes = await readFile(this.where);
      if (bytes.length > MAX_NOTE_BYTES) {
        throw integrityError(
          'CHECKSUM_CHECKPOINT_INVALID',
          `${this.where} is larger than a checkpoint can be`,
        );
      }
      return bytes.toString('utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
  async save(note: string): Promise<void> {
    await mkdir(dirname(this.where), { recursive: true });
    await writeFileAtomic(this.where, note);
  }
}

/** The server's answer to a lookup: the record, its index, and its inclusion proof in `checkpoint`. */
export interface LookupAnswer {
  /** The record's leaf data (record.ts). */
  record: string;
  index: number;
  proof: readonly Uint8Array[];
  /** The signed checkpoint the proof is relative to. */
  checkpoint: string;
}

/** What the verifier asks the log's server. */
export interface ChecksumLogSource {
  latestCheckpoint(): Promise<string>;
  consistencyProof(first: number, second: number): Promise<readonly Uint8Array[]>;
  lookup(key: string): Promise<LookupAnswer>;
}

export interface ChecksumVerifierOptions {
  /** The log's verifier key (text or parsed). */
  key: string | LogVerifier;
  source: ChecksumLogSource;
  memory: CheckpointMemory;
}

export interface VerifiedRecord {
  record: LogRecord;
  index: number;
  checkpoint: VerifiedCheckpoint;
}

export class ChecksumVerifier {
  readonly key: LogVerifier;
  readonly #source: ChecksumLogSource;
  readonly #memory: CheckpointMemory;

  constructor(options: ChecksumVerifierOptions) {
    this.key = typeof options.key === 'string' ? parseVerifierKey(options.key) : options.key;
    this.#source = options.source;
    this.#memory = options.memory;
  }

  /** The latest checkpoint this client verified, verified again with the key; undefined at first. */
  async remembered(): Promise<VerifiedCheckpoint | undefined> {
    const note = await this.#memory.load();
    if (note === undefined) return undefined;
    try {
      return verifyCheckpoint(note, this.key);
    } catch (error) {
      if (!(error instanceof DmError)) throw error;
      throw new DmError(error.code, `the remembered checkpoint in ${this.#memory.where}: ${error.message}`, {
        category: error.category,
        hint: 'if the log key was replaced on purpose, remove that file; otherwise it was altered',
      });
    }
  }

  /**
   * Verifies a checkpoint (default: the server's latest) and checks it is consistent with the
   * remembered one: a larger tree must extend it, an equal one must have the same root, a
   * smaller one must be its prefix. Remembers it when it is newer. Returns it.
   */
  async advance(note?: string): Promise<VerifiedCheckpoint> {
    const next = verifyCheckpoint(note ?? (await this.#source.latestCheckpoint()), this.key);
    const previous = await this.remembered();
    if (previous === undefined) {
      await this.#memory.save(next.note);
      return next;
    }
    const [older, newer] = next.size < previous.size ? [next, previous] : [previous, next];
    const proof =
      older.size === newer.size || older.size === 0
        ? []
        : await this.#source.consistencyProof(older.size, newer.size);
    try {
      verifyConsistency(older.size, newer.size, older.root, newer.root, proof);
    } catch (error) {
      if (!(error instanceof DmError) || error.code !== 'CHECKSUM_LOG_INCONSISTENT') throw error;
      throw integrityError(
        'CHECKSUM_LOG_INCONSISTENT',
        `the checksum log ${this.key.name} at size ${next.size} contradicts the one verified before at size ${previous.size} (${this.#memory.where}): ${error.message}`,
        {
          details: { log: this.key.name, size: next.size, rememberedSize: previous.size },
          hint: 'the server rewrote its log or shows different clients different logs; report it to the server operator',
        },
      );
    }
    if (next.size > previous.size) await this.#memory.save(next.note);
    return next;
  }

  /**
   * Looks up the log's record of `expected.template@expected.version`, verifies its checkpoint
   * and inclusion proof, and throws CHECKSUM_MISMATCH when the log's digest is not `expected.digest`.
   */
  async verifyDigest(expected: Pick<LogRecord, 'template' | 'version' | 'digest'>): Promise<VerifiedRecord> {
    encodeRecord(expected); // throws CHECKSUM_RECORD_INVALID before anything is asked
    const key = recordKey(expected);
    const answer = await this.#source.lookup(key);
    const checkpoint = await this.advance(answer.checkpoint);
    if (!Number.isSafeInteger(answer.index) || answer.index < 0 || answer.index >= checkpoint.size) {
      throw integrityError(
        'CHECKSUM_INCLUSION_FAILED',
        `the checksum log ${this.key.name} answered record ${answer.index} for ${key}, outside its ${checkpoint.size} records`,
      );
    }
    const record = parseRecord(answer.record);
    try {
      verifyRecordInclusion(answer.index, checkpoint.size, answer.record, answer.proof, checkpoint.root);
    } catch (error) {
      if (!(error instanceof DmError) || error.code !== 'CHECKSUM_INCLUSION_FAILED') throw error;
      throw integrityError(
        'CHECKSUM_INCLUSION_FAILED',
        `the checksum log ${this.key.name} answered a record for ${key} that its checkpoint at size ${checkpoint.size} does not contain`,
        { details: { key, index: answer.index, size: checkpoint.size } },
      );
    }
    if (recordKey(record) !== key) {
      throw integrityError(
        'CHECKSUM_MISMATCH',
        `the checksum log ${this.key.name} answered the record of ${recordKey(record)} when asked for ${key}`,
      );
    }
    if (record.digest !== expected.digest) {
      const how =
        record.supersedes === expected.digest
          ? `an accepted change replaced ${expected.digest} with ${record.digest}`
          : `the log has ${record.digest}`;
      throw integrityError(
        'CHECKSUM_MISMATCH',
        `${key} has digest ${expected.digest} here, but in the checksum log ${this.key.name} (record ${answer.index}) ${how}`,
        {
          details: {
            key,
            expected: expected.digest,
            logged: record.digest,
            index: answer.index,
            log: this.key.name,
          },
          hint: 'the registry content changed after it was first published; do not use it until you know why',
        },
      );
    }
    return { record, index: answer.index, checkpoint };
  }
}
