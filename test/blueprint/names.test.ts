import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base32LowerNoPad, generateDataObjectName } from '../../client/src/blueprint/names.js';

describe('generateDataObjectName()', () => {
  it('base32LowerNoPad() matches the RFC 4648 vectors, lower case and unpadded', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'my'],
      ['fo', 'mzxq'],
      ['foo', 'mzxw6'],
      ['foob', 'mzxw6yq'],
      ['fooba', 'mzxw6ytb'],
      ['foobar', 'mzxw6ytboi'],
    ];
    for (const [input, output] of vectors) assert.equal(base32LowerNoPad(Buffer.from(input)), output);
  });

  it('generateDataObjectName() keeps root keys, strips #, hashes contextified keys', () => {
    assert.equal(generateDataObjectName('', 'my-cluster'), 'my-cluster');
    assert.equal(generateDataObjectName('Inst.x', '#global'), 'global');
    // the names in the guided-tour cases gt05 and gt06
    assert.equal(generateDataObjectName('Inst.export-import', 'cluster'), 'hdolifep4vqsgkday5ybknzweovtea4x');
    assert.equal(
      generateDataObjectName('Inst.subinst-templates', 'cluster'),
      'vmthjblij2zquxqzp5ed7oa5pbhgq5zj',
    );
    assert.notEqual(generateDataObjectName('', 'Not_A_DNS_Name'), 'Not_A_DNS_Name');
  });
});
