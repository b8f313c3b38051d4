/**
 * The channel between dm and its Jinja rendering process (docs/expansion.md, "Speed"): a stream
 * socket on the child's fd 3, each message a frame of a 4-byte length (big-endian) and the
 * message in V8's serialization (what Node's IPC channel with `serialization: 'advanced'` sends,
 * so the same values travel). The child reads and writes its fd with `node:fs` alone: Node's IPC
 * channel loads `child_process` and `net` in the child at every start (~10 ms of its CPU).
 */
import { read, writeSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';

/** The child's end of the channel. */
export const CHANNEL_FD = 3;

/** A message as one frame: its length, then the message serialized. */
export function encodeFrame(message: unknown): Buffer {
  const body = serialize(message);
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/**
 * Cuts a byte stream into frames and gives each message to `onMessage`; a frame longer than
 * `maxBytes` is refused (`onOverflow`, then nothing more is read).
 */
export class FrameReader {
  overflowed = false;
  /** The bytes of the frames not complete yet (they start at a frame's start), and their size. */
  private parts: Buffer[] = [];
  private size = 0;
  /** How many bytes from the first part on complete the next frame (its length, at first). */
  private need = 4;

  constructor(
    private readonly maxBytes: number,
    private readonly onMessage: (message: unknown) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    this.parts.push(chunk);
    this.size += chunk.length;
    // A large frame arrives in many chunks: they are joined once, when it is whole.
    if (this.size < this.need) return;
    const buffer = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    let at = 0;
    for (;;) {
      if (buffer.length - at < 4) {
        this.need = 4;
        break;
      }
      const length = buffer.readUInt32BE(at);
      if (length > this.maxBytes) {
        this.overflowed = true;
        this.onOverflow();
        return;
      }
      if (buffer.length - at - 4 < length) {
        this.need = 4 + length;
        break;
      }
      const message = deserialize(buffer.subarray(at + 4, at + 4 + length));
      at += 4 + length;
      this.onMessage(message);
      if (this.overflowed) return;
    }
    if (at < buffer.length) {
      this.parts.push(buffer.subarray(at));
      this.size = buffer.length - at;
    }
  }
}

/** The child's side: sends one message (blocking until written: the fd is the child's own). */
export function sendOnChannel(message: unknown): void {
  const frame = encodeFrame(message);
  let written = 0;
  while (written < frame.length) written += writeSync(CHANNEL_FD, frame, written, frame.length - written);
}

/**
 * The child's side: reads messages from the channel until its end (dm closed it, or exited),
 * then calls `onEnd`.
 */
export function readChannel(onMessage: (message: unknown) => void, onEnd: () => void): void {
  const frames = new FrameReader(Number.MAX_SAFE_INTEGER, onMessage, () => {});
  const chunk = Buffer.allocUnsafe(256 * 1024);
  const next = (): void => {
    read(CHANNEL_FD, chunk, 0, chunk.length, null, (error, bytes) => {
      if (error || bytes === 0) {
        onEnd();
        return;
      }
      // A copy: the chunk buffer is read into again while a partial frame may still hold it.
      frames.push(Buffer.from(chunk.subarray(0, bytes)));
      next();
    });
  };
  next();
}
