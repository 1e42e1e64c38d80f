// Tool name patterns of the policy format (policies/README.md, "Tool name patterns"). The UI only
// tells a pattern from a plain name (to list patterns apart from tools); what a pattern matches
// and which key wins is the gateway's to say (`explain_policy`).

export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}
