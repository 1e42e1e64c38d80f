// The Servers view's form for one `mcpServers` entry: its fields as text, and the entry the Rust
// side takes (`ServerEntry`). Lines, not JSON: one argument per line, `NAME=value` per environment
// line, `Name: value` per header line. What can be checked here is checked here (the gateway's
// parser checks the whole file again before anything is written).

import type { EntryProblem, ServerEntry } from './types';

export interface ServerForm {
  name: string;
  transport: 'stdio' | 'http';
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
}

export const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function emptyForm(): ServerForm {
  return { name: '', transport: 'stdio', command: '', args: '', env: '', url: '', headers: '' };
}

export function formFromEntry(name: string, entry: ServerEntry): ServerForm {
  const form = { ...emptyForm(), name };
  if (entry.transport === 'stdio') {
    form.command = entry.command;
    form.args = entry.args.join('\n');
    form.env = Object.entries(entry.env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
  } else {
    form.transport = 'http';
    form.url = entry.url;
    form.headers = Object.entries(entry.headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n');
  }
  return form;
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** `sep`-separated pairs, one per line; the lines without `sep` are problems of `field`. */
function pairs(text: string, sep: string, field: string, example: string, problems: EntryProblem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const i = line.indexOf(sep);
    const key = i > 0 ? line.slice(0, i).trim() : '';
    if (!key) {
      problems.push({ field, message: `"${line}" is not ${example}` });
      continue;
    }
    out[key] = line.slice(i + sep.length).trim();
  }
  return out;
}

/** The entry the form describes, or the form's problems (field by field). */
export function entryFromForm(form: ServerForm): { entry: ServerEntry | null; problems: EntryProblem[] } {
  const problems: EntryProblem[] = [];
  if (!NAME_RE.test(form.name.trim())) {
    problems.push({ field: 'name', message: "a name is letters, digits, '-', '_' and '.' (not first)" });
  }
  let entry: ServerEntry;
  if (form.transport === 'stdio') {
    if (!form.command.trim()) problems.push({ field: 'command', message: 'the command to start the server is required, e.g. npx' });
    const env = pairs(form.env, '=', 'env', 'NAME=value', problems);
    // Arguments keep their inner spaces: one argument per line, exactly.
    const args = form.args.split('\n').filter((a) => a.trim() !== '');
    entry = { transport: 'stdio', command: form.command.trim(), args, env };
  } else {
    if (!/^https?:\/\/\S+$/.test(form.url.trim())) {
      problems.push({ field: 'url', message: "the server's URL starts with http:// or https://" });
    }
    const headers = pairs(form.headers, ':', 'headers', 'Name: value', problems);
    entry = { transport: 'http', url: form.url.trim(), headers };
  }
  return problems.length ? { entry: null, problems } : { entry, problems };
}

/** The problems of one field, as one text (empty when none). */
export function problemText(problems: EntryProblem[], field: string): string {
  return problems
    .filter((p) => p.field === field)
    .map((p) => p.message)
    .join('; ');
}
