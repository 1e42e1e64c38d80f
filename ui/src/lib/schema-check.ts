// A small check of edited arguments against a tool's `inputSchema` (JSON Schema): the top-level
// value is an object, `required` properties are present, and each value has its declared `type`
// (string, number, integer, boolean, object, array, null, or a list of them), and a declared
// `enum` holds it. Nested objects and arrays are checked the same way. It catches the slips a
// person makes while editing; the server still validates for itself.

import { JsonNumber, type ExactValue } from './exact-json';

export interface SchemaProblem {
  path: string;
  message: string;
}

type Schema = Record<string, unknown>;

function typeOf(v: ExactValue): string {
  if (v === null) return 'null';
  if (v instanceof JsonNumber) return /^-?\d+$/.test(v.text) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function fits(actual: string, declared: unknown): boolean {
  const types = Array.isArray(declared) ? declared : [declared];
  return types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
}

function plain(v: ExactValue): unknown {
  return v instanceof JsonNumber ? Number(v.text) : v;
}

/** Problems of `value` against `schema` (none when `schema` is not an object). */
export function checkSchema(value: ExactValue, schema: unknown, path = 'arguments'): SchemaProblem[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const s = schema as Schema;
  const actual = typeOf(value);
  if (s.type !== undefined && !fits(actual, s.type)) {
    return [{ path, message: `must be ${[s.type].flat().join(' or ')}, is ${actual}` }];
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(plain(value)))) {
    return [{ path, message: `must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` }];
  }
  const out: SchemaProblem[] = [];
  if (actual === 'object') {
    const obj = value as Record<string, ExactValue>;
    for (const key of Array.isArray(s.required) ? s.required : []) {
      if (typeof key === 'string' && !(key in obj)) out.push({ path: `${path}.${key}`, message: 'is required' });
    }
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const [key, v] of Object.entries(obj)) {
      if (key in props) out.push(...checkSchema(v, props[key], `${path}.${key}`));
      else if (s.additionalProperties === false) out.push({ path: `${path}.${key}`, message: 'is not a property of this tool' });
    }
  }
  if (actual === 'array' && s.items && typeof s.items === 'object') {
    (value as ExactValue[]).forEach((v, i) => out.push(...checkSchema(v, s.items, `${path}[${i}]`)));
  }
  return out;
}
