import { describe, expect, it } from 'vitest';
import { validatePolicyValue } from '../policy-schema';
import everything from '../../../../policies/everything.json';
import filesystem from '../../../../policies/filesystem.json';
import proxmox from '../../../../policies/proxmox-seed.json';

const msgs = (v: unknown) => validatePolicyValue(v).map((p) => `${p.path}: ${p.message}`);

describe('policy schema check', () => {
  it('accepts the shipped policies', () => {
    expect(msgs(everything)).toEqual([]);
    expect(msgs(filesystem)).toEqual([]);
    expect(msgs(proxmox)).toEqual([]);
  });

  it('reports each problem with a gateway-style path', () => {
    const bad = {
      version: '2',
      default: 'maybe',
      acton: 'x',
      hide: ['ok', 3],
      tools: {
        'get-sum': { rate_limit: { max: 0, window: 60 }, reason: null },
        q: { rules: [{ when: { query: { eq: 1 } }, action: 'allow' }, { when: {}, action: 'allow' }] },
      },
    };
    expect(msgs(bad)).toEqual([
      '$.version: expected one of "1", found the string "2"',
      '$.default: expected one of "allow", "deny", "require_approval", found the string "maybe"',
      '$.acton: unknown field "acton", expected one of "version", "default", "hide", "approval_timeout", "redact", "results", "tools", "resources", "prompts", "server_requests"',
      '$.hide[1]: expected a string, found the number 3',
      '$.tools["get-sum"].rate_limit.max: must be at least 1, found 0',
      '$.tools["get-sum"].reason: expected a string, found null',
      '$.tools["q"].rules[0].when["query"]: key "query" does not match ^(arguments(\\.[^.]+)+|client\\.(name|version))$',
      '$.tools["q"].rules[1].when: needs at least 1 entry',
    ]);
  });

  it('requires version and an object', () => {
    expect(msgs({})).toEqual(['$: missing field "version"']);
    expect(msgs([])).toEqual(['$: expected an object, found an array']);
    expect(msgs({ version: '1', approval_timeout: 1.5 })).toEqual(['$.approval_timeout: expected an integer, found the number 1.5']);
  });
});
