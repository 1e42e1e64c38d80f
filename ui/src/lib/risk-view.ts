// What the risk badge says (DESIGN §5 "its class and risk"): the gateway decides a held call's
// risk level and says where it came from (`risk_basis`); the prompt shows that answer and its
// source, never a guess of its own. A tool the server never listed, or whose definition changed
// since it was pinned, is high risk whatever its name suggests, and the badge says why loudly.

import type { Risk, RiskBasis, ToolClass } from './ipc';

export interface RiskView {
  /** The class in words ("Writes"). */
  classLabel: string;
  /** The level in words ("High risk"); null when only the class is known (catalog rows). */
  levelLabel: string | null;
  /** Where the level comes from, in plain words. */
  why: string | null;
  /** A never-listed or changed tool: shown as a warning, not as a quiet tag. */
  alarm: boolean;
}

export const CLASS_LABELS: Record<ToolClass, string> = {
  read: 'Reads',
  write: 'Writes',
  execute: 'Executes',
  delete: 'Deletes',
  unknown: 'Unknown effect',
};

const LEVEL_LABELS: Record<Risk, string> = {
  low: 'Low risk',
  medium: 'Medium risk',
  high: 'High risk',
  critical: 'Critical risk',
};

const WHY: Record<RiskBasis, string> = {
  policy: 'from the policy',
  guessed: 'guessed from the name',
  never_listed: 'never listed by the server',
  definition_changed: 'definition changed since pinned',
};

export function riskView(risk: ToolClass, level?: Risk | null, basis?: RiskBasis | null): RiskView {
  return {
    classLabel: CLASS_LABELS[risk] ?? risk,
    levelLabel: level ? (LEVEL_LABELS[level] ?? level) : null,
    why: basis ? (WHY[basis] ?? basis) : null,
    alarm: basis === 'never_listed' || basis === 'definition_changed',
  };
}
