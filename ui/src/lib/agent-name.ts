// The agent as a person knows it: clientInfo.name mapped to the product's name ("claude-code" →
// "Claude Code"); a name not in the table is shown as given. The session as a short label.

const KNOWN: Record<string, string> = {
  'claude-code': 'Claude Code',
  'claude-ai': 'Claude Desktop',
  'claude-desktop': 'Claude Desktop',
  cursor: 'Cursor',
  'cursor-vscode': 'Cursor',
  'visual studio code': 'VS Code',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  zed: 'Zed',
  cline: 'Cline',
  continue: 'Continue',
  'gemini-cli-mcp-client': 'Gemini CLI',
  codex: 'Codex',
  'codex-mcp-client': 'Codex',
  goose: 'Goose',
  'mcp-inspector': 'MCP Inspector',
};

export function agentName(name: string | null | undefined): string {
  if (!name) return 'Unknown agent';
  return KNOWN[name.trim().toLowerCase()] ?? name;
}

/** The first 8 characters of a long session id: enough to tell sessions apart on screen. */
export function sessionLabel(session: string): string {
  return session.length > 12 ? session.slice(0, 8) : session;
}
