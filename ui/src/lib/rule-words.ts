// Why a call is held, in plain words, from the policy rule the gateway names (`tools.<key>`,
// `tools.<key>.rules[<i>]`, `default`, `no policy file`, `pin:changed`). The rule's own name is
// shown beside it, so nothing is lost in the wording.
//
// TODO(h-decide): show the policy's own `reason` for asking once PendingApproval carries it.

export function ruleInWords(rule: string): string {
  if (rule === 'pin:changed') return 'The server changed this tool since it was first seen:';
  if (rule === 'default') return 'The policy asks about every tool it does not list:';
  if (rule === 'no policy file') return 'This server has no policy file, so every call asks you:';
  const m = /^tools\.(.+?)(?:\.rules\[(\d+)\])?$/.exec(rule);
  if (m && m[2] !== undefined) return `Rule ${Number(m[2]) + 1} of the policy entry "${m[1]}" asks you:`;
  if (m) return `The policy entry "${m[1]}" asks you:`;
  return 'The policy asks you:';
}
