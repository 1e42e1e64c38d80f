import { describe, expect, it } from 'vitest';
import { groupSessions } from '../session-groups';
import type { LiveSession } from '../types';

function session(over: Partial<LiveSession>): LiveSession {
  return { session: 's', server: 'fs', client: { name: 'claude-code', version: '2.1.0' }, via: 'http', pid: 10, since_ms: 0, ...over };
}

describe('groupSessions', () => {
  it('counts one client’s HTTP sessions on one line, from the oldest', () => {
    const groups = groupSessions([
      session({ session: 'a', since_ms: 300 }),
      session({ session: 'b', since_ms: 100 }),
      session({ session: 'c', since_ms: 200 }),
    ]);
    expect(groups).toEqual([{ key: expect.any(String), client: 'claude-code 2.1.0', via: 'HTTP', count: 3, sinceMs: 100 }]);
  });

  it('keeps each connect process, each client and each version apart', () => {
    const groups = groupSessions([
      session({ session: 'a', via: 'connect', pid: 1, since_ms: 5 }),
      session({ session: 'b', via: 'connect', pid: 2, since_ms: 6 }),
      session({ session: 'c', client: { name: 'claude-code', version: '2.2.0' }, since_ms: 7 }),
      session({ session: 'd', client: { name: null, version: null }, since_ms: 8 }),
      session({ session: 'e', since_ms: 9 }),
    ]);
    expect(groups.map((g) => [g.client, g.via, g.count])).toEqual([
      ['claude-code 2.1.0', 'portcullis connect, pid 1', 1],
      ['claude-code 2.1.0', 'portcullis connect, pid 2', 1],
      ['claude-code 2.2.0', 'HTTP', 1],
      ['a client (2026, stateless)', 'HTTP', 1],
      ['claude-code 2.1.0', 'HTTP', 1],
    ]);
  });

  it('has nothing to show for no sessions', () => {
    expect(groupSessions([])).toEqual([]);
  });
});
