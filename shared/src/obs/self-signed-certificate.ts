// A self-signed serving certificate made in memory at start, for /metrics over
// HTTPS when no certificate is mounted — what controller-runtime's metrics
// server does (its certwatcher falls back to a self-signed pair). Node can sign
// but not write X.509, and the runtime image has no openssl: the certificate
// is encoded here in DER, ECDSA P-256 with SHA-256, a handful of fields only.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

export interface ServingCertificate {
  /** PEM */
  readonly cert: string;
  /** PEM (PKCS #8) */
  readonly key: string;
}

const tlv = (tag: number, content: Buffer): Buffer => {
  const length = content.length;
  const header =
    length < 0x80
      ? Buffer.from([tag, length])
      : length < 0x100
        ? Buffer.from([tag, 0x81, length])
        : Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  return Buffer.concat([header, content]);
};

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) base128.unshift((value & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return at.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(iso, 'ascii'));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [
    ...groups(head),
    ...Array<string>(ip.includes('::') ? missing : 0).fill('0'),
    ...groups(tail),
  ];
  return Buffer.concat(all.map((group) => Buffer.from(group.padStart(4, '0'), 'hex')));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

/** A self-signed certificate for these DNS names and IP addresses, valid from now for `days`. */
export function selfSignedCertificate(options: {
  readonly commonName: string;
  readonly hosts: readonly string[];
  readonly days?: number;
  readonly now?: Date;
}): ServingCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 60_000); // a little clock skew
  const notAfter = new Date(now.getTime() + (options.days ?? 365) * 86_400_000);
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01; // positive and without a leading zero byte
  const name = sequence(
    tlv(0x31, sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(options.commonName, 'utf8')))),
  );
  const altNames = sequence(
    ...options.hosts.map((host) =>
      isIP(host) === 0 ? tlv(0x82, Buffer.from(host, 'ascii')) : tlv(0x87, ipBytes(host)),
    ),
  );
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // v3
    tlv(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      sequence(
        extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
        extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x07, 0x80]))), // digitalSignature
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // serverAuth
        extension('2.5.29.17', false, altNames),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(
    tbs,
    ECDSA_WITH_SHA256,
    tlv(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
  const base64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
