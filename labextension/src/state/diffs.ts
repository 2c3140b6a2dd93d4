import { parsePatch } from 'diff';

export type DiffLineKind = 'add' | 'delete' | 'context' | 'hunk' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

export interface FileDiff {
  /** The file's path (the b/ side of a git-style diff). */
  path: string;
  added: number;
  deleted: number;
  lines: DiffLine[];
}

function stripPrefix(name: string | undefined): string {
  return (name ?? '').replace(/^[ab]\//, '');
}

/** A unified diff (one or many files, as staged edits carry) split per file, line by line. */
export function parseUnifiedDiff(text: string): FileDiff[] {
  if (!text.trim()) {
    return [];
  }
  return parsePatch(text)
    .filter(patch => patch.hunks.length > 0)
    .map(patch => {
      const lines: DiffLine[] = [];
      let added = 0;
      let deleted = 0;
      for (const hunk of patch.hunks) {
        lines.push({
          kind: 'hunk',
          text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`
        });
        for (const line of hunk.lines) {
          const marker = line[0];
          if (marker === '+') {
            added++;
            lines.push({ kind: 'add', text: line });
          } else if (marker === '-') {
            deleted++;
            lines.push({ kind: 'delete', text: line });
          } else if (marker === '\\') {
            lines.push({ kind: 'note', text: line });
          } else {
            lines.push({ kind: 'context', text: line });
          }
        }
      }
      return { path: stripPrefix(patch.newFileName || patch.oldFileName), added, deleted, lines };
    });
}
