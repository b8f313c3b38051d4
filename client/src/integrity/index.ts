/**
 * The verifiable checksum log (issue 11, docs/integrity.md): RFC 6962 Merkle log over a hash
 * store, record encoding, Ed25519 keys, signed checkpoints, proofs, and the client's verifier.
 * Shared by the client and the registry server.
 */
export * from './checkpoint.js';
export * from './errors.js';
export * from './hash-store.js';
export * from './keys.js';
export * from './merkle-hash.js';
export * from './merkle-log.js';
export * from './note.js';
export * from './proof.js';
export * from './record.js';
export * from './verifier.js';
