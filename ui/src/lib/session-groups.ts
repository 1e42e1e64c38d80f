import type { LiveSession } from './types';

/** The sessions of one client seen the same way: one line in the Servers view. */
export interface SessionGroup {
  /** Stable across polls: the client, how it is connected, and for `connect` its process. */
  key: string;
  /** What the client said it is at initialize; a 2026 client's shared session says nothing. */
  client: string;
  /** `portcullis connect, pid N` or `HTTP`. */
  via: string;
  count: number;
  /** The oldest session's start. */
  sinceMs: number;
}

export function clientName(c: LiveSession): string {
  if (!c.client.name) return 'a client (2026, stateless)';
  return c.client.version ? `${c.client.name} ${c.client.version}` : c.client.name;
}

/**
 * One line per client and way in: a `connect` process is one line (its pid), and the many HTTP
 * sessions one client opens and closes (each `initialize` is a session) count on one line rather
 * than crowding the card. Oldest first.
 */
export function groupSessions(sessions: LiveSession[]): SessionGroup[] {
  const groups = new Map<string, SessionGroup>();
  for (const s of sessions) {
    const client = clientName(s);
    const via = s.via === 'connect' ? `portcullis connect, pid ${s.pid}` : 'HTTP';
    const key = `${client}\u0000${via}`;
    const group = groups.get(key);
    if (group) {
      group.count += 1;
      group.sinceMs = Math.min(group.sinceMs, s.since_ms);
    } else {
      groups.set(key, { key, client, via, count: 1, sinceMs: s.since_ms });
    }
  }
  // Stable: sessions that began together stay in the order the keeper lists them.
  return [...groups.values()].sort((a, b) => a.sinceMs - b.sinceMs);
}
