import { describe, expect, it } from 'vitest';
import { emptyForm, entryFromForm, formFromEntry, problemText } from '../server-entry';

describe('the server form', () => {
  it('turns lines into a stdio entry, keeping spaces inside an argument', () => {
    const form = { ...emptyForm(), name: 'fs', command: ' npx ', args: '-y\n@scope/server\n\n/home/me/My Files', env: 'TOKEN=a=b\n' };
    const { entry, problems } = entryFromForm(form);
    expect(problems).toEqual([]);
    expect(entry).toEqual({ transport: 'stdio', command: 'npx', args: ['-y', '@scope/server', '/home/me/My Files'], env: { TOKEN: 'a=b' } });
  });

  it('turns header lines into an http entry', () => {
    const form = { ...emptyForm(), name: 'web', transport: 'http' as const, url: 'https://example.com/mcp', headers: 'Authorization: Bearer x:y' };
    expect(entryFromForm(form).entry).toEqual({ transport: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x:y' } });
  });

  it('reports each bad field and builds no entry', () => {
    const stdio = entryFromForm({ ...emptyForm(), name: 'bad name', command: '', env: 'novalue' });
    expect(stdio.entry).toBeNull();
    expect(stdio.problems.map((p) => p.field)).toEqual(['name', 'command', 'env']);
    expect(problemText(stdio.problems, 'env')).toContain('NAME=value');
    const http = entryFromForm({ ...emptyForm(), name: '.hidden', transport: 'http', url: 'ftp://x', headers: ': v' });
    expect(http.problems.map((p) => p.field)).toEqual(['name', 'url', 'headers']);
    expect(problemText(http.problems, 'command')).toBe('');
  });

  it('round-trips an entry through the form', () => {
    const entry = { transport: 'stdio' as const, command: 'node', args: ['a.js', '--flag'], env: { A: '1', B: '2' } };
    expect(entryFromForm(formFromEntry('x', entry)).entry).toEqual(entry);
    const web = { transport: 'http' as const, url: 'http://127.0.0.1:9/mcp', headers: { 'X-Key': 'k' } };
    expect(entryFromForm(formFromEntry('y', web)).entry).toEqual(web);
  });
});
