import { describe, expect, it } from 'vitest';
import { choiceFor, conditionsFrom, parents, unavailable, urlBase, type Axes } from '../grant';
import { checkSchema } from '../schema-check';
import { parseExact, stringifyExact } from '../exact-json';
import { canonicalArguments, sameCall } from '../same-call';
import { agentName, sessionLabel } from '../agent-name';
import { actionFor, keyFor, PROMPT_KEYS } from '../prompt-keys';
import { makeApproval } from '../mock-data';

const base: Axes = { allow: true, which: 'any', whose: 'session', howLong: 900, condition: null, reason: null };

describe('grant axes → the gateway choice', () => {
  it.each<[Partial<Axes>, unknown]>([
    [{ which: 'this', howLong: 'once' }, { approve: 'once' }],
    [{ allow: false, which: 'this', howLong: 'once', reason: ' not now ' }, { deny: { reason: 'not now', always: false } }],
    [{ howLong: 'always' }, { approve: 'always' }],
    [{ allow: false, howLong: 'always', reason: 'wrong target' }, { deny: { reason: 'wrong target', always: true } }],
    [
      { whose: 'every', howLong: 'restart' },
      { grant: { allow: true, reason: null, every_session: true, duration_secs: null, when: null, exact: false } },
    ],
    [
      { which: 'this', howLong: 3600 },
      { grant: { allow: true, reason: null, every_session: false, duration_secs: 3600, when: null, exact: true } },
    ],
    [
      { allow: false, which: 'condition', condition: { when: { 'arguments.url': { prefix: 'https://x.org/' } }, label: '' }, howLong: 300, reason: 'ask me first' },
      { grant: { allow: false, reason: 'ask me first', every_session: false, duration_secs: 300, when: { 'arguments.url': { prefix: 'https://x.org/' } }, exact: false } },
    ],
    [
      { which: 'condition', condition: { when: { 'arguments.path': { path_under: '/srv/www' } }, label: '' }, howLong: 'always', reason: 'ignored' },
      { rule: { allow: true, reason: null, when: { 'arguments.path': { path_under: '/srv/www' } } } },
    ],
    [
      { allow: false, which: 'condition', condition: { when: { 'arguments.cmd': { eq: 'rm -rf /' } }, label: '' }, howLong: 'always', reason: ' no ' },
      { rule: { allow: false, reason: 'no', when: { 'arguments.cmd': { eq: 'rm -rf /' } } } },
    ],
  ])('%j → %j', (over, want) => {
    expect(choiceFor({ ...base, ...over })).toEqual(want);
  });

  it('refuses combinations that mean nothing, and says why', () => {
    expect(unavailable({ ...base, howLong: 'once' })).toContain('only this call');
    expect(unavailable({ ...base, which: 'this', howLong: 'always' })).toContain('always');
    expect(unavailable({ ...base, which: 'condition' })).toBe('pick a condition');
    expect(choiceFor({ ...base, howLong: 'once' })).toBeNull();
  });

  it('offers conditions cut from the call: parent directories, URL host, exact command', () => {
    const got = conditionsFrom({ path: '/home/me/src/app.ts', url: 'https://API.example.com/v1?q=1', command: 'ls -la', n: 3 });
    expect(got.map((c) => c.label)).toEqual([
      'path under /home/me/src',
      'path under /home/me',
      'path under /home',
      'url on https://api.example.com/',
      'command exactly ls -la',
    ]);
    expect(got[0].when).toEqual({ 'arguments.path': { path_under: '/home/me/src' } });
    expect(got[4].when).toEqual({ 'arguments.command': { eq: 'ls -la' } });
  });

  it('never offers a parent above a `..` or a URL with credentials', () => {
    expect(parents('/srv/../etc/passwd')).toEqual(['/srv']);
    expect(urlBase('https://user@evil.example/')).toBeNull();
    expect(urlBase('ftp://x/')).toBeNull();
  });
});

describe('the input schema check', () => {
  const schema = {
    type: 'object',
    required: ['path'],
    additionalProperties: false,
    properties: { path: { type: 'string' }, n: { type: 'integer' }, mode: { enum: ['a', 'b'] }, tags: { type: 'array', items: { type: 'string' } } },
  };
  it('accepts what fits', () => {
    expect(checkSchema(parseExact('{"path": "/x", "n": 12345678901234567890, "mode": "a", "tags": ["t"]}'), schema)).toEqual([]);
  });
  it('names each problem by path', () => {
    expect(checkSchema(parseExact('{"n": 1.5, "mode": "c", "tags": [1], "extra": true}'), schema)).toEqual([
      { path: 'arguments.path', message: 'is required' },
      { path: 'arguments.n', message: 'must be integer, is number' },
      { path: 'arguments.mode', message: 'must be one of "a", "b"' },
      { path: 'arguments.tags[0]', message: 'must be string, is integer' },
      { path: 'arguments.extra', message: 'is not a property of this tool' },
    ]);
  });
  it('without a schema checks nothing', () => {
    expect(checkSchema(parseExact('{"a": 1}'), null)).toEqual([]);
  });
  it('pretty-prints the arguments with their exact digits', () => {
    expect(stringifyExact(parseExact('{"n":12345678901234567890,"a":[1,{}],"s":"x\\ny"}'))).toBe(
      '{\n  "n": 12345678901234567890,\n  "a": [\n    1,\n    {}\n  ],\n  "s": "x\\ny"\n}',
    );
  });
});

describe('identical calls', () => {
  it('compares session, server, tool and canonical arguments', () => {
    const a = makeApproval({ arguments_json: '{"b": 1, "a": 12345678901234567890}' });
    expect(canonicalArguments(a.arguments_json)).toBe('{"a":12345678901234567890,"b":1}');
    expect(sameCall(a, { ...a, id: 'x', arguments_json: '{"a":12345678901234567890,"b":1}' })).toBe(true);
    expect(sameCall(a, { ...a, arguments_json: '{"a":12345678901234567891,"b":1}' })).toBe(false);
    expect(sameCall(a, { ...a, session: 'other' })).toBe(false);
    expect(sameCall(a, { ...a, tool: 'other' })).toBe(false);
  });
});

describe('the agent and its session', () => {
  it.each([
    ['claude-code', 'Claude Code'],
    ['Cursor', 'Cursor'],
    ['cursor-vscode', 'Cursor'],
    ['my-own-agent', 'my-own-agent'],
    [null, 'Unknown agent'],
  ])('%s → %s', (name, want) => expect(agentName(name)).toBe(want));
  it('shortens a long session id', () => {
    expect(sessionLabel('9f2c4a7e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a3b4c')).toBe('9f2c4a7e');
    expect(sessionLabel('sess-7f3a')).toBe('sess-7f3a');
  });
});

describe('prompt keys', () => {
  it('are the terminal approver letters, plus e and x', () => {
    expect(Object.keys(PROMPT_KEYS).join('')).toBe('asAdDrex');
    expect(keyFor('deny-reason')).toBe('r');
    expect(actionFor({ key: 'A', ctrlKey: false, altKey: false, metaKey: false })).toBe('approve-always');
    expect(actionFor({ key: 'a', ctrlKey: true, altKey: false, metaKey: false })).toBeNull();
    expect(actionFor({ key: 'q', ctrlKey: false, altKey: false, metaKey: false })).toBeNull();
  });
});

