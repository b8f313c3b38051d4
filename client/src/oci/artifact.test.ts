import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatReference, parseReference } from '../reference/reference.js';
import { sha256Hex, versionDigest } from '../registry/digest.js';
import {
  buildArtifact,
  parseTemplateConfig,
  parseTemplateManifest,
  type TemplateConfig,
  tagOfVersion,
  unpackLayer,
  versionOfTag,
} from './artifact.js';

function version(files: Record<string, string>): { config: TemplateConfig; contents: Map<string, Buffer> } {
  const contents = new Map(Object.entries(files).map(([p, c]) => [p, Buffer.from(c)]));
  const list = [...contents].map(([path, data]) => ({ path, sha256: sha256Hex(data), size: data.length }));
  return {
    contents,
    config: {
      registry: 'github.com/acme/templates',
      collection: '',
      template: 'redis',
      version: 'v1.0.3',
      kind: 'jinja',
      templateFile: 'redis.jinja',
      digest: versionDigest(list),
      files: list,
    },
  };
}

describe('the OCI artifact of a template version', () => {
  it('buildArtifact() is deterministic: the same files in any order give the same manifest digest', async () => {
    const a = version({ 'redis.jinja': 'x', 'helpers/h.jinja': 'y', 'example.yaml': 'z' });
    const b = version({ 'example.yaml': 'z', 'redis.jinja': 'x', 'helpers/h.jinja': 'y' });
    const [one, two] = await Promise.all([
      buildArtifact(a.config, a.contents),
      buildArtifact(b.config, b.contents),
    ]);
    assert.equal(one.manifestDigest, two.manifestDigest);
    assert.ok(one.layer.equals(two.layer));
    const changed = version({ 'redis.jinja': 'x!', 'helpers/h.jinja': 'y', 'example.yaml': 'z' });
    assert.notEqual(
      (await buildArtifact(changed.config, changed.contents)).manifestDigest,
      one.manifestDigest,
    );
  });

  it('what buildArtifact() writes parses back, and its layer unpacks to the same files', async () => {
    const v = version({ 'redis.jinja': 'resources: []\n', 'a/b/c.txt': 'ü'.repeat(300) });
    const artifact = await buildArtifact(v.config, v.contents);
    const manifest = parseTemplateManifest(artifact.manifest, 'test');
    assert.equal(manifest.config.digest, artifact.configDigest);
    const config = parseTemplateConfig(artifact.config, 'test');
    assert.deepEqual(config, {
      ...v.config,
      files: [...v.config.files].sort((a, b) => (a.path < b.path ? -1 : 1)),
    });
    assert.deepEqual(await unpackLayer(artifact.layer, config, 'test'), v.contents);
  });

  it('a config whose files do not give its digest, or a layer holding another file, is refused', async () => {
    const v = version({ 'redis.jinja': 'x' });
    const artifact = await buildArtifact(v.config, v.contents);
    const forged = Buffer.from(
      artifact.config
        .toString()
        .replace(/"digest":"sha256:[0-9a-f]+"/, `"digest":"sha256:${'0'.repeat(64)}"`),
    );
    assert.throws(() => parseTemplateConfig(forged, 'x'), /its config's files give sha256:/);
    const other = version({ 'redis.jinja': 'y' });
    const otherLayer = (await buildArtifact(other.config, other.contents)).layer;
    await assert.rejects(
      unpackLayer(otherLayer, v.config, 'x'),
      /redis\.jinja in its layer is not the file its config names/,
    );
  });

  it("tagOfVersion() and versionOfTag() are inverse on versions with build metadata (Helm's _ for +)", () => {
    assert.equal(tagOfVersion('v1.0.3+build.5'), 'v1.0.3_build.5');
    assert.equal(versionOfTag('v1.0.3_build.5'), 'v1.0.3+build.5');
    assert.equal(versionOfTag('latest'), undefined);
    fc.assert(
      fc.property(
        fc.nat(50),
        fc.nat(50),
        fc.nat(50),
        fc.option(fc.stringMatching(/^[a-z0-9]{1,8}$/)),
        (a, b, c, build) => {
          const v = `v${a}.${b}.${c}${build ? `+${build}` : ''}`;
          assert.equal(versionOfTag(tagOfVersion(v)), v);
          assert.doesNotMatch(tagOfVersion(v), /\+/);
        },
      ),
    );
  });

  it('oci:// references print back as written (format ∘ parse is the identity on canonical forms)', () => {
    const component = fc.stringMatching(/^[a-z0-9]+(?:[._-][a-z0-9]+)?$/);
    fc.assert(
      fc.property(
        fc.constantFrom('localhost:5000', '127.0.0.1:5000', 'ghcr.io', 'registry.example:8443'),
        component,
        component,
        fc.option(component),
        component,
        fc.constantFrom('v1', 'v1.0', '=v1.0.3', 'v2.0.0-rc.1'),
        (host, owner, repo, collection, template, v) => {
          const text = `oci://${host}/${owner}/${repo}/${collection ? `${collection}/` : ''}${template}:${v}`;
          const ref = parseReference(text);
          assert.equal(ref.kind === 'registry' && ref.scheme, 'oci');
          assert.equal(formatReference(ref), text);
        },
      ),
    );
  });
});
