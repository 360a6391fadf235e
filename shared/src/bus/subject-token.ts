// Reversible encoding of any string into one NATS subject token.
//
// Kubernetes names may hold dots, which split NATS tokens. Letters, digits and
// '-' pass through; '.' becomes '_' (DNS-1123 names never hold '_', so dotted
// names stay readable); every other byte of the UTF-8 form becomes '~' and two
// upper-case hex digits. The empty string (the namespace of a cluster-scoped
// object, the core API group) becomes a lone '~', which no other input yields.
// The output never holds '.', '*', '>' or whitespace.
import { ErrorCodes, KubebusError } from '../errors/mod.js';

export const EMPTY_TOKEN = '~';
const PLAIN = /^[A-Za-z0-9-]$/;
// every subject of every message is encoded: the names Kubernetes allows take no loop
const ALL_PLAIN = /^[A-Za-z0-9-]+$/;
const PLAIN_OR_DOTS = /^[A-Za-z0-9.-]+$/;

export function encodeToken(value: string): string {
  if (value === '') return EMPTY_TOKEN;
  if (ALL_PLAIN.test(value)) return value;
  if (PLAIN_OR_DOTS.test(value)) return value.replaceAll('.', '_');
  let out = '';
  for (const char of value) {
    if (PLAIN.test(char)) out += char;
    else if (char === '.') out += '_';
    else {
      for (const byte of Buffer.from(char, 'utf8')) {
        out += '~' + byte.toString(16).toUpperCase().padStart(2, '0');
      }
    }
  }
  return out;
}

export function decodeToken(token: string): string {
  if (token === EMPTY_TOKEN) return '';
  if (token === '') throw invalid(token, 'an empty token');
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const char = token.charAt(i);
    if (char === '_') bytes.push(0x2e);
    else if (char === '~') {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw invalid(token, `a bad escape at ${i}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (PLAIN.test(char)) bytes.push(char.charCodeAt(0));
    else throw invalid(token, `the character ${JSON.stringify(char)}`);
  }
  const decoded = Buffer.from(bytes).toString('utf8');
  // Only the canonical encoding is accepted, so each string has exactly one token.
  if (encodeToken(decoded) !== token) throw invalid(token, 'a non-canonical encoding');
  return decoded;
}

function invalid(token: string, what: string): KubebusError {
  return new KubebusError(
    ErrorCodes.InvalidSubjectToken,
    `subject token ${JSON.stringify(token)} holds ${what}`,
  );
}
