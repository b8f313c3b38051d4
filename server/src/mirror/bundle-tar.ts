/**
 * One pass over a tar stream for bundle reading (bundle-format.ts): each entry's bytes are handed
 * on as views into the chunks the stream delivers, never copied or buffered per entry, and a
 * header is decoded for what a bundle needs only (name with its ustar prefix, size, type,
 * checksum). Measured on the 10,000-version bundle of bench/mirror.ts, node-tar's `Parser` (a
 * stream per entry) cost more than the gunzip and the sha256 together, and its `Header` (every
 * field, dates included) a third of what was left.
 *
 * Only what a bundle holds is accepted: regular files, then the end-of-archive marker (two zero
 * blocks), then nothing but zeros. Anything else (a link, a directory, a pax header, a lone zero
 * block, a bad checksum, data after the end) and a stream that ends before the marker are errors.
 */
import { types } from 'tar';

const BLOCK = 512;

export interface TarEntry {
  path: string;
  size: number;
  /** node-tar's name of the entry type: 'File', 'OldFile', 'Directory', 'SymbolicLink', … */
  type: string;
}

export interface TarEntrySink {
  /** The entry's bytes as they arrive: views into the stream's chunks (keep them, they are not reused). */
  data(part: Buffer): void;
  /** All `size` bytes have arrived. */
  end(): void;
}

/** `fail` must throw: the walker stops at the first problem. */
export class TarWalker {
  private readonly pending = Buffer.alloc(BLOCK);
  private pendingFill = 0;
  private sink: TarEntrySink | undefined;
  private remaining = 0;
  private padding = 0;
  private zeroBlocks = 0;

  constructor(
    private readonly onEntry: (entry: TarEntry) => TarEntrySink,
    private readonly fail: (message: string) => never,
  ) {}

  write(chunk: Buffer): void {
    let at = 0;
    const length = chunk.length;
    while (at < length) {
      if (this.sink) {
        const take = Math.min(this.remaining, length - at);
        this.sink.data(chunk.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.finishEntry();
      } else if (this.padding > 0) {
        const take = Math.min(this.padding, length - at);
        at += take;
        this.padding -= take;
      } else if (this.zeroBlocks >= 2) {
        for (; at < length; at++) {
          if (chunk[at] !== 0) this.fail('not a valid archive (data after its end-of-archive marker)');
        }
      } else if (this.pendingFill === 0 && length - at >= BLOCK) {
        this.header(chunk.subarray(at, at + BLOCK));
        at += BLOCK;
      } else {
        const take = Math.min(BLOCK - this.pendingFill, length - at);
        chunk.copy(this.pending, this.pendingFill, at, at + take);
        this.pendingFill += take;
        at += take;
        if (this.pendingFill === BLOCK) {
          this.pendingFill = 0;
          this.header(this.pending);
        }
      }
    }
  }

  /** The stream ended: it must have ended after the end-of-archive marker. */
  end(): void {
    if (this.sink || this.padding > 0 || this.pendingFill > 0) this.fail('the archive is truncated');
    if (this.zeroBlocks < 2) this.fail('the archive is truncated (it has no end-of-archive marker)');
  }

  private header(block: Buffer): void {
    if (isZero(block)) {
      this.zeroBlocks++;
      return;
    }
    if (this.zeroBlocks > 0) this.fail('not a valid archive (an entry after a zero block)');
    const entry = decodeHeader(block, this.fail);
    const size = entry.size;
    this.sink = this.onEntry(entry);
    this.remaining = size;
    this.padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (size === 0) this.finishEntry();
  }

  private finishEntry(): void {
    const sink = this.sink!;
    this.sink = undefined;
    sink.end();
  }
}

function isZero(block: Buffer): boolean {
  // A header's name starts at byte 0 and its checksum is never zero: most blocks fail fast here.
  if (block[0] !== 0 || block[148] !== 0) return false;
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0) return false;
  return true;
}

/** An octal field (NUL- or space-terminated, leading spaces allowed); undefined when not one. */
function octal(block: Buffer, start: number, length: number): number | undefined {
  let i = start;
  const end = start + length;
  while (i < end && block[i] === 0x20) i++;
  let value = 0;
  let digits = 0;
  for (; i < end; i++) {
    const c = block[i]!;
    if (c === 0 || c === 0x20) break;
    if (c < 0x30 || c > 0x37) return undefined;
    value = value * 8 + (c - 0x30);
    digits++;
  }
  return digits === 0 ? undefined : value;
}

function text(block: Buffer, start: number, length: number): string {
  let end = start;
  while (end < start + length && block[end] !== 0) end++;
  return block.toString('utf8', start, end);
}

function decodeHeader(block: Buffer, fail: (message: string) => never): TarEntry {
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += block[i]!;
  for (let i = 156; i < BLOCK; i++) sum += block[i]!;
  if (octal(block, 148, 8) !== sum) fail('not a valid archive (an entry header has a wrong checksum)');
  let path = text(block, 0, 100);
  // POSIX ustar: a long name's leading part is in the prefix field.
  if (block.toString('latin1', 257, 263) === 'ustar\0') {
    const prefix = text(block, 345, 155);
    if (prefix) path = `${prefix}/${path}`;
  }
  // Base-256 sizes (byte 124 with its high bit set) are for entries of 8 GiB and more.
  const size = block[124]! & 0x80 ? Number.MAX_SAFE_INTEGER : octal(block, 124, 12);
  if (size === undefined) fail(`not a valid archive (the entry ${path} has no size)`);
  const code = block[156] === 0 ? '' : String.fromCharCode(block[156]!);
  let type: string = (types.isCode(code) && types.name.get(code)) || `unknown (${code})`;
  // Old tars marked a directory as a file with a trailing slash.
  if (type === 'File' && path.endsWith('/')) type = 'Directory';
  return { path, size: size!, type };
}
