// The policy editor's tool search: every word must appear in the tool's name or description,
// ignoring case, so "file write" finds write_file and "delete a VM" finds vm_destroy's description.

import type { ToolRow } from '../state/policy-editor.svelte';

export function filterRows(rows: ToolRow[], query: string): ToolRow[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return rows;
  return rows.filter((row) => {
    const text = `${row.name} ${row.info?.title ?? ''} ${row.info?.description ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
