// The condition builder's model, shared by the prompt's scoped grant (GrantPanel) and the policy
// editor's argument rules (ToolRules): a policy `when` object (DESIGN §4) as rows a person edits —
// one argument, one operator, one value each — and back. Rows on the same argument become one
// condition with several operators, all of which must hold, as the format reads them.
//
// What the gateway alone can judge (a regex in Rust syntax, a glob's classes) is left to its
// validation of the edited policy; this module checks only what it needs to build the object.

export type Operator =
  | 'eq'
  | 'ne'
  | 'in'
  | 'not_in'
  | 'regex'
  | 'contains'
  | 'prefix'
  | 'glob'
  | 'path_under'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'exists';

/** How a row's typed value becomes the operator's JSON value. */
type ValueKind = 'json' | 'text' | 'list' | 'number' | 'bool';

interface OperatorInfo {
  op: Operator;
  /** Reads after the argument's name: "path starts with /etc". */
  label: string;
  kind: ValueKind;
  /** What it tests, from the policy crate's documentation (the operator's tooltip). */
  help: string;
}

/** In the policy crate's documentation order. */
export const OPERATORS: OperatorInfo[] = [
  { op: 'eq', label: 'is', kind: 'json', help: 'equals this value (no type conversion: "5" is not 5)' },
  { op: 'ne', label: 'is not', kind: 'json', help: 'is missing or differs from this value' },
  { op: 'in', label: 'is one of', kind: 'list', help: 'equals one of these values' },
  { op: 'not_in', label: 'is none of', kind: 'list', help: 'is missing or equals none of these values' },
  { op: 'regex', label: 'matches regex', kind: 'text', help: 'a string this regular expression matches somewhere (anchor with ^ and $)' },
  { op: 'contains', label: 'contains', kind: 'json', help: 'a string containing this text, or a list with this element' },
  { op: 'prefix', label: 'starts with', kind: 'text', help: 'a string that starts with this text' },
  { op: 'glob', label: 'matches pattern', kind: 'text', help: 'a string this pattern matches whole (* any run, ? one character)' },
  {
    op: 'path_under',
    label: 'is under',
    kind: 'text',
    help: 'a path that is this directory or inside it, read lexically; one that climbs out with .. never matches',
  },
  { op: 'gt', label: '>', kind: 'number', help: 'a number greater than this' },
  { op: 'gte', label: '≥', kind: 'number', help: 'a number greater than or equal to this' },
  { op: 'lt', label: '<', kind: 'number', help: 'a number less than this' },
  { op: 'lte', label: '≤', kind: 'number', help: 'a number less than or equal to this' },
  { op: 'exists', label: 'is present', kind: 'bool', help: 'the argument is present (any value) or missing' },
];

const INFO = new Map(OPERATORS.map((o) => [o.op, o]));

export function operatorHelp(op: Operator): string {
  return INFO.get(op)?.help ?? '';
}

/** One test as the person edits it: `argument` is the path below `arguments` (`path`,
 * `files.0.path`) or `client.name` / `client.version`; `value` is the text as typed. */
export interface ConditionRow {
  argument: string;
  op: Operator;
  value: string;
}

export type When = Record<string, Record<string, unknown>>;

export type Built = { ok: true; when: When } | { ok: false; row: number | null; message: string };

const CLIENT_KEYS = ['client.name', 'client.version'];
const ARGUMENTS = 'arguments.';

export function emptyRow(argument = ''): ConditionRow {
  return { argument, op: 'eq', value: '' };
}

/** The `when` key a row reads. */
export function keyOf(argument: string): string {
  const a = argument.trim();
  return CLIENT_KEYS.includes(a) ? a : `${ARGUMENTS}${a}`;
}

/** The name a `when` key shows as (`arguments.path` → `path`). */
export function argumentOf(key: string): string {
  return key.startsWith(ARGUMENTS) ? key.slice(ARGUMENTS.length) : key;
}

/** A typed value where JSON is allowed: JSON when it parses (`5`, `true`, `"5"`, `[1]`), else the text itself. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A JSON value as the builder shows it (the inverse of `jsonOrText`). */
function showJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      JSON.parse(value);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value);
}

function parseValue(kind: ValueKind, text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  switch (kind) {
    case 'text':
      return text === '' ? { ok: false, message: 'needs a value' } : { ok: true, value: text };
    case 'json':
      return text === '' ? { ok: false, message: 'needs a value (type "" for the empty string)' } : { ok: true, value: jsonOrText(text) };
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? { ok: true, value: n } : { ok: false, message: 'needs a number' };
    }
    case 'bool':
      return text === 'true' || text === 'false' ? { ok: true, value: text === 'true' } : { ok: false, message: 'is present or missing' };
    case 'list': {
      if (text.trim().startsWith('[')) {
        const v = jsonOrText(text);
        return Array.isArray(v) ? { ok: true, value: v } : { ok: false, message: 'needs a JSON list or values separated by commas' };
      }
      const items = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
      return items.length ? { ok: true, value: items.map(jsonOrText) } : { ok: false, message: 'needs at least one value' };
    }
  }
}

function showValue(kind: ValueKind, value: unknown): string {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'number':
    case 'bool':
      return String(value);
    case 'json':
      return showJson(value);
    case 'list': {
      if (!Array.isArray(value)) return JSON.stringify(value);
      const shown = value.map(showJson);
      // Items that hold a comma cannot be read back from a comma list.
      return shown.some((s) => s.includes(',')) || !shown.length ? JSON.stringify(value) : shown.join(', ');
    }
  }
}

/** Checks the rows and builds the policy `when` object, or says which row is wrong and why. */
export function buildWhen(rows: ConditionRow[]): Built {
  if (!rows.length) return { ok: false, row: null, message: 'Add at least one condition.' };
  const when: When = {};
  for (const [i, row] of rows.entries()) {
    const argument = row.argument.trim();
    if (!argument) return { ok: false, row: i, message: 'Name the argument the condition reads.' };
    if (argument.split('.').some((s) => s === '')) {
      return { ok: false, row: i, message: `"${argument}" has an empty segment (write nested paths as a.b or files.0.path).` };
    }
    const info = INFO.get(row.op);
    if (!info) return { ok: false, row: i, message: `Unknown operator ${row.op}.` };
    const value = parseValue(info.kind, row.value);
    if (!value.ok) return { ok: false, row: i, message: `"${argument} ${info.label}" ${value.message}.` };
    const key = keyOf(argument);
    const tests = (when[key] ??= {});
    if (row.op in tests) {
      return { ok: false, row: i, message: `"${argument}" has "${info.label}" twice; one condition holds each operator once.` };
    }
    tests[row.op] = value.value;
  }
  return { ok: true, when };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The rows for a `when` object, or null when it holds something the builder cannot show (an
 * unknown operator, a condition that is not an object): that one is edited in the raw JSON. */
export function rowsOf(when: unknown): ConditionRow[] | null {
  if (!isObject(when)) return null;
  const rows: ConditionRow[] = [];
  for (const [key, tests] of Object.entries(when)) {
    if (!isObject(tests)) return null;
    const argument = argumentOf(key);
    // A path below `arguments` that reads like a client key would be read back as the client's.
    if (key !== keyOf(argument)) return null;
    for (const [op, value] of Object.entries(tests)) {
      const info = INFO.get(op as Operator);
      if (!info) return null;
      rows.push({ argument, op: info.op, value: showValue(info.kind, value) });
    }
  }
  return rows;
}

function phrase(argument: string, op: string, value: unknown): string {
  const info = INFO.get(op as Operator);
  if (!info) return `${argument} ${op} ${JSON.stringify(value)}`;
  if (info.op === 'exists') return `${argument} ${value === false ? 'is missing' : 'is present'}`;
  const shown = info.kind === 'text' && typeof value === 'string' ? value : JSON.stringify(value);
  return `${argument} ${info.label} ${shown}`;
}

/** A `when` object in words: "path starts with /etc and mode is "w"". */
export function describeWhen(when: unknown): string {
  if (!isObject(when)) return JSON.stringify(when);
  const parts: string[] = [];
  for (const [key, tests] of Object.entries(when)) {
    const argument = argumentOf(key);
    if (!isObject(tests)) parts.push(`${argument} ${JSON.stringify(tests)}`);
    else for (const [op, value] of Object.entries(tests)) parts.push(phrase(argument, op, value));
  }
  return parts.length ? parts.join(' and ') : 'always';
}

/** The property names of a tool's `inputSchema` (the arguments a condition can offer). */
export function schemaArguments(schema: unknown): string[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  return Object.keys(schema.properties);
}
