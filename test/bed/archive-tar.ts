// Reads a .tar.gz and writes out only the members asked for, each to a path
// the caller chose: a name in the archive never becomes a path on disk, so no
// archive can write outside the cache (no `..`, no links followed). ustar,
// GNU long names and pax path records are understood; the header checksum of
// every block is checked, so a damaged archive is refused, not half-read.
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

const BLOCK = 512;

export class TarError extends Error {
  override readonly name = 'TarError';
}

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
}

/** An octal number field, or GNU's base-256 form for large sizes. */
function numeric(header: Buffer, offset: number, length: number): number {
  const first = header[offset] ?? 0;
  if ((first & 0x80) !== 0) {
    let value = first & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + (header[offset + i] ?? 0);
    return value;
  }
  const text = field(header, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text))
    throw new TarError(`a tar header holds ${JSON.stringify(text)} where a number belongs`);
  return parseInt(text, 8);
}

/** The header checksum: the sum of its bytes with the checksum field read as spaces. */
function checksumOk(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  return sum === numeric(header, 148, 8);
}

/** `path=` of a pax extended header, if it has one. */
function paxPath(body: Buffer): string | undefined {
  let at = 0;
  let path: string | undefined;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number(body.subarray(at, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = body.subarray(space + 1, at + length - 1).toString('utf8');
    if (record.startsWith('path=')) path = record.slice('path='.length);
    at += length;
  }
  return path;
}

const normal = (name: string) => name.replace(/^(\.\/)+/, '');

/**
 * Extracts the members named in `wanted` (archive name → destination path).
 * Returns the names found; a damaged archive throws a TarError (or zlib's error).
 */
export async function extractMembers(
  archive: string,
  wanted: ReadonlyMap<string, string>,
): Promise<ReadonlySet<string>> {
  const found = new Set<string>();
  let pending: Buffer = Buffer.alloc(0);
  // what the bytes after the current header are
  let body:
    { left: number; padding: number; out?: FileHandle; keep?: Buffer[]; kind: string } | undefined;
  let nextName: string | undefined;
  let ended = false;

  const startEntry = async (header: Buffer) => {
    if (!checksumOk(header)) throw new TarError('a tar header fails its checksum');
    const size = numeric(header, 124, 12);
    const type = String.fromCharCode(header[156] ?? 0);
    const prefix = field(header, 345, 155);
    const short = field(header, 0, 100);
    const name = normal(nextName ?? (prefix === '' ? short : `${prefix}/${short}`));
    nextName = undefined;
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (type === 'L' || type === 'x') {
      body = { left: size, padding, keep: [], kind: type };
      return;
    }
    const destination = wanted.get(name);
    const regular = type === '0' || type === '\0' || type === '7';
    if (destination !== undefined && regular) {
      if (found.has(name)) throw new TarError(`the archive holds ${name} twice`);
      found.add(name);
      body = { left: size, padding, out: await open(destination, 'wx', 0o600), kind: type };
    } else {
      body = { left: size, padding, kind: type };
    }
  };

  const finishEntry = async () => {
    if (body === undefined) return;
    await body.out?.close();
    if (body.keep !== undefined) {
      const data = Buffer.concat(body.keep);
      nextName = body.kind === 'L' ? field(data, 0, data.length) : paxPath(data);
    }
    body = undefined;
  };

  // pipeline, not pipe: a read error reaches here (pipe would leave the loop
  // waiting forever) and every stream is closed when the loop throws
  let refusal: unknown;
  const read = async (input: AsyncIterable<Buffer>) => {
    try {
      await readAll(input);
    } catch (error) {
      refusal = error; // pipeline reports it as the abort it causes
      throw error;
    }
  };
  const readAll = async (input: AsyncIterable<Buffer>) => {
    for await (const chunk of input) {
      if (ended) continue; // the zero blocks' tail
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (body !== undefined) {
          if (body.left > 0) {
            if (pending.length === 0) break;
            const take = pending.subarray(0, Math.min(body.left, pending.length));
            if (body.out !== undefined) await body.out.write(take);
            body.keep?.push(Buffer.from(take));
            body.left -= take.length;
            pending = pending.subarray(take.length);
            continue;
          }
          if (pending.length < body.padding) break;
          pending = pending.subarray(body.padding);
          await finishEntry();
          continue;
        }
        if (pending.length < BLOCK) break;
        const header = pending.subarray(0, BLOCK);
        pending = pending.subarray(BLOCK);
        if (header.every((byte) => byte === 0)) {
          ended = true;
          break;
        }
        await startEntry(header);
      }
    }
  };

  try {
    try {
      await pipeline(createReadStream(archive), createGunzip(), read);
    } catch (error) {
      throw refusal ?? error;
    }
    // without its closing zero blocks, an archive may still end between members
    if (body !== undefined || (!ended && pending.length > 0))
      throw new TarError('the archive ends in the middle of a file');
  } finally {
    await body?.out?.close();
  }
  return found;
}
