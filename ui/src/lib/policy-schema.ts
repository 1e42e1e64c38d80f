// Checks a policy document against policies/policy.schema.json (generated from the Rust types),
// so the raw editor shows problems as you type. The gateway's `validate_policy` stays the judge:
// it also checks globs and regular expressions, which a schema cannot.
//
// Only the JSON Schema keywords that schema uses are understood: type, properties, required,
// additionalProperties, propertyNames.pattern, minProperties, items, minimum, format (uint32,
// uint64), const, enum, oneOf and local $ref.

import schemaJson from '../../../policies/policy.schema.json';
import type { Segment } from './json-doc';

export interface SchemaProblem {
  /** Gateway-style path: `$`, `$.tools["vm_start"].approval_timeout`, `$.hide[0]`. */
  path: string;
  segments: Segment[];
  message: string;
}

type Schema = boolean | SchemaObject;
interface SchemaObject {
  $ref?: string;
  type?: string;
  const?: unknown;
  enum?: unknown[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  required?: string[];
  minProperties?: number;
  propertyNames?: { pattern?: string };
  items?: Schema;
  minimum?: number;
  format?: string;
  $defs?: Record<string, Schema>;
}

export const policySchema = schemaJson as SchemaObject;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value)}`;
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `${value}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

const TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
};

const FORMAT_MAX: Record<string, number> = { uint32: 4294967295, uint64: Number.MAX_SAFE_INTEGER };

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

function fieldPath(path: string, name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `${path}.${name}` : keyPath(path, name);
}

function keyPath(path: string, name: string): string {
  return `${path}[${JSON.stringify(name)}]`;
}

function quotedList(items: string[]): string {
  return items.map((s) => JSON.stringify(s)).join(', ');
}

export function validateAgainst(root: SchemaObject, value: unknown): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const resolve = (schema: Schema): Schema => {
    let s = schema;
    for (let guard = 0; typeof s === 'object' && s.$ref && guard < 32; guard++) {
      const name = s.$ref.replace(/^#\/\$defs\//, '');
      s = root.$defs?.[name] ?? true;
    }
    return s;
  };
  const report = (path: string, segments: Segment[], message: string) =>
    problems.push({ path, segments, message });

  const check = (v: unknown, schema: Schema, path: string, segs: Segment[]): void => {
    const s = resolve(schema);
    if (s === true) return;
    if (s === false) {
      report(path, segs, 'not allowed here');
      return;
    }
    if (s.oneOf) {
      const consts = s.oneOf.map(resolve);
      if (consts.every((c) => typeof c === 'object' && 'const' in c)) {
        const allowed = consts.map((c) => (c as SchemaObject).const);
        if (!allowed.some((a) => a === v)) {
          report(path, segs, `expected one of ${quotedList(allowed.map(String))}, found ${describe(v)}`);
        }
      } else {
        const matching = consts.filter((c) => validateAgainst({ ...root, ...(c as SchemaObject) }, v).length === 0);
        if (matching.length !== 1) report(path, segs, `found ${describe(v)}, which matches no allowed form`);
      }
      return;
    }
    if ('const' in s && s.const !== v) {
      report(path, segs, `expected ${JSON.stringify(s.const)}, found ${describe(v)}`);
      return;
    }
    if (s.type && !hasType(v, s.type)) {
      report(path, segs, `expected ${TYPE_WORDS[s.type] ?? s.type}, found ${describe(v)}`);
      return;
    }
    if (s.enum && !s.enum.some((a) => a === v)) {
      report(path, segs, `expected one of ${quotedList(s.enum.map(String))}, found ${describe(v)}`);
      return;
    }
    if (typeof v === 'number') {
      if (s.minimum !== undefined && v < s.minimum) {
        report(path, segs, `must be at least ${s.minimum}, found ${v}`);
      }
      const max = s.format ? FORMAT_MAX[s.format] : undefined;
      if (max !== undefined && v > max) report(path, segs, `must be at most ${max}, found ${v}`);
    }
    if (Array.isArray(v) && s.items !== undefined) {
      v.forEach((item, i) => check(item, s.items!, `${path}[${i}]`, [...segs, i]));
    }
    if (hasType(v, 'object') && (s.properties || s.additionalProperties !== undefined)) {
      const obj = v as Record<string, unknown>;
      const known = Object.keys(s.properties ?? {});
      const isMap = s.properties === undefined && typeof s.additionalProperties === 'object';
      for (const required of s.required ?? []) {
        if (!(required in obj)) report(path, segs, `missing field ${JSON.stringify(required)}`);
      }
      if (s.minProperties !== undefined && Object.keys(obj).length < s.minProperties) {
        report(path, segs, `needs at least ${s.minProperties} entr${s.minProperties === 1 ? 'y' : 'ies'}`);
      }
      const pattern = s.propertyNames?.pattern ? new RegExp(s.propertyNames.pattern, 'u') : null;
      for (const [name, item] of Object.entries(obj)) {
        const p = isMap ? keyPath(path, name) : fieldPath(path, name);
        const itemSegs = [...segs, name];
        if (pattern && !pattern.test(name)) {
          report(p, itemSegs, `key ${JSON.stringify(name)} does not match ${s.propertyNames!.pattern}`);
        }
        const propSchema = s.properties?.[name];
        if (propSchema !== undefined) {
          check(item, propSchema, p, itemSegs);
        } else if (s.additionalProperties === false) {
          report(p, itemSegs, `unknown field ${JSON.stringify(name)}, expected one of ${quotedList(known)}`);
        } else if (s.additionalProperties !== undefined) {
          check(item, s.additionalProperties, p, itemSegs);
        }
      }
    }
  };

  check(value, root, '$', []);
  return problems;
}

/** Problems of a parsed policy document against the policy schema. */
export function validatePolicyValue(value: unknown): SchemaProblem[] {
  return validateAgainst(policySchema, value);
}
