// Which kind of request a held call or an audit row is (its `method`), and how each kind's
// parameters read as text: the names the app gives the kinds, what the `tool` field holds for
// each, a sampling request's messages, an elicitation's message and fields. The one-line words of
// what is asked come from the gate (`PendingApproval.asks`); nothing here words a request again.

import { JsonNumber } from './exact-json';
import type { Asks, Method } from './types';

interface Kind {
  method: Method;
  /** The filter's choice ("Resource reads"). */
  plural: string;
  /** The small tag beside a row ("resource"). */
  tag: string;
  /** What the `tool` field holds, as a label ("URI"); `null` where it only repeats the kind. */
  target: string | null;
  /** A server's own request (sampling, elicitation, roots) rather than the agent's. */
  fromServer: boolean;
}

/** Every kind, in the order the filter lists them. */
export const KINDS = [
  { method: 'tools/call', plural: 'Tool calls', tag: 'tool', target: 'Tool', fromServer: false },
  { method: 'resources/read', plural: 'Resource reads', tag: 'resource', target: 'URI', fromServer: false },
  { method: 'resources/subscribe', plural: 'Resource watches', tag: 'watch', target: 'URI', fromServer: false },
  { method: 'prompts/get', plural: 'Prompts', tag: 'prompt', target: 'Prompt', fromServer: false },
  { method: 'sampling/createMessage', plural: 'Sampling', tag: 'sampling', target: null, fromServer: true },
  { method: 'elicitation/create', plural: 'Elicitation', tag: 'elicitation', target: null, fromServer: true },
  { method: 'roots/list', plural: 'Roots', tag: 'roots', target: null, fromServer: true },
] as const satisfies readonly Kind[];

type Unlisted = Exclude<Method, (typeof KINDS)[number]['method']>;
const everyKindListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyKindListed;

const BY_METHOD = new Map<Method, Kind>(KINDS.map((k) => [k.method, k]));

/** The kind of `method`; a method this build does not know reads as a tool call's neighbour. */
export function kindOf(method: Method | undefined | null): Kind {
  return BY_METHOD.get(method ?? 'tools/call') ?? { method: method as Method, plural: String(method), tag: String(method), target: 'Name', fromServer: false };
}

export function isToolCall(method: Method | undefined | null): boolean {
  return (method ?? 'tools/call') === 'tools/call';
}

/** The label of the `tool` field for a row of this kind ("Tool", "URI", "Prompt", "Request"). */
export function targetLabel(method: Method | undefined | null): string {
  return kindOf(method).target ?? 'Request';
}

/** The words with a URL's host split off, so it can be emphasized: the gate puts the host first
 * ("auth.example.com — everything asks you to open …"). */
export function splitHost(asks: Asks): { host: string | null; rest: string } {
  if (asks.host && asks.text.startsWith(asks.host)) return { host: asks.host, rest: asks.text.slice(asks.host.length) };
  return { host: null, rest: asks.text };
}

const obj = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export interface SamplingMessage {
  role: string;
  /** The text blocks, and a `[kind]` for any other block (an image, audio). */
  text: string;
}

export interface SamplingView {
  system: string | null;
  messages: SamplingMessage[];
  /** As written (the prompt's arguments keep numbers exact, lib/exact-json.ts). */
  maxTokens: string | null;
  /** The model hints, by name ("claude"). */
  hints: string[];
}

function contentText(content: unknown): string {
  const block = (b: unknown) => {
    const o = obj(b);
    if (!o) return '';
    return o.type === 'text' ? (str(o.text) ?? '') : `[${str(o.type) ?? '?'}]`;
  };
  return Array.isArray(content) ? content.map(block).join('\n') : block(content);
}

/** A `sampling/createMessage`'s params as text: what the person's model would be asked. */
export function samplingView(params: unknown): SamplingView {
  const p = obj(params) ?? {};
  const messages = Array.isArray(p.messages) ? p.messages : [];
  const prefs = obj(p.modelPreferences);
  const hints = Array.isArray(prefs?.hints) ? prefs.hints.map((h) => str(obj(h)?.name)).filter((h): h is string => !!h) : [];
  return {
    system: str(p.systemPrompt),
    messages: messages.map((m) => ({ role: str(obj(m)?.role) ?? '?', text: contentText(obj(m)?.content) })),
    maxTokens: typeof p.maxTokens === 'number' || p.maxTokens instanceof JsonNumber ? String(p.maxTokens) : null,
    hints,
  };
}

export interface ElicitationField {
  name: string;
  type: string;
  required: boolean;
  about: string | null;
}

export interface ElicitationView {
  message: string | null;
  /** URL mode: the link the server asks the person to open. */
  url: string | null;
  fields: ElicitationField[];
}

/** An `elicitation/create`'s params as text: the server's message, and the link or the form. */
export function elicitationView(params: unknown): ElicitationView {
  const p = obj(params) ?? {};
  const schema = obj(p.requestedSchema);
  const required = Array.isArray(schema?.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const properties = obj(schema?.properties) ?? {};
  return {
    message: str(p.message),
    url: p.mode === 'url' ? (str(p.url) ?? '') : null,
    fields: Object.entries(properties).map(([name, s]) => ({
      name,
      type: str(obj(s)?.type) ?? 'any',
      required: required.includes(name),
      about: str(obj(s)?.description) ?? str(obj(s)?.title),
    })),
  };
}
