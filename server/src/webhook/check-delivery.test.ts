/**
 * The webhook check (docs/server.md, "Webhooks"): secrets travel sealed and are opened in the
 * worker, only for the registries of the delivery's repository.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { encryptSecret } from '../store/secrets.js';
import { checkDelivery, type DeliveryCandidate } from './check-delivery.js';

const key = randomBytes(32);
const body = Buffer.from(
  JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'Acme/Web', default_branch: 'main' } }),
);
const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('checkDelivery', () => {
  it('opens the sealed secrets of the delivery repository and names the registries they verify', () => {
    const candidates: DeliveryCandidate[] = [
      { index: 0, source: 'github.com/acme/other', sealedSecret: encryptSecret(key, 's3cret') },
      { index: 1, source: 'github.com/acme/web', sealedSecret: encryptSecret(key, 's3cret') },
      { index: 2, source: 'github.com/acme/web', sealedSecret: encryptSecret(key, 'another') },
    ];
    const check = checkDelivery(body, sign('s3cret'), candidates, key);
    assert.equal(check.kind, 'verified');
    assert.deepEqual(check.kind === 'verified' && check.verified, [1]);
  });

  it('a secret sealed under another key, or not sealed at all, verifies nothing and breaks nothing', () => {
    const otherKey = randomBytes(32);
    const candidates: DeliveryCandidate[] = [
      { index: 0, source: 'github.com/acme/web', sealedSecret: encryptSecret(otherKey, 's3cret') },
      { index: 1, source: 'github.com/acme/web', sealedSecret: 'not base64 ciphertext' },
      { index: 2, source: 'github.com/acme/web', sealedSecret: encryptSecret(key, 's3cret') },
    ];
    const check = checkDelivery(body, sign('s3cret'), candidates, key);
    assert.deepEqual(check.kind === 'verified' && check.verified, [2]);
    const none = checkDelivery(body, sign('s3cret'), candidates.slice(0, 2), key);
    assert.deepEqual(none, { kind: 'unsigned', repository: 'Acme/Web' });
  });

  it('the plaintext of a sealed secret is not accepted as a signature key', () => {
    const sealed = encryptSecret(key, 's3cret');
    const check = checkDelivery(
      body,
      sign(sealed),
      [{ index: 0, source: 'github.com/acme/web', sealedSecret: sealed }],
      key,
    );
    assert.equal(check.kind, 'unsigned');
  });
});
