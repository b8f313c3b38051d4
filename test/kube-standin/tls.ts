/**
 * A throw-away self-signed certificate for the TLS stand-in (valid for 127.0.0.1), made with the
 * openssl command line once per process. Test code only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Certificate {
  cert: string;
  key: string;
}

let cached: Certificate | undefined;

export function loopbackCertificate(): Certificate {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'kube-standin-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=kube-standin',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'ignore' },
  );
  cached = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  return cached;
}
