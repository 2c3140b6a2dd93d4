import { describe, expect, it } from 'vitest';

import { parseUnifiedDiff } from '../src/state/diffs';

// The shape structural/edits.py produces: git-style, one section per file.
const TWO_FILES = `--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,2 +1,2 @@
 x = 1
-print(x)
+log(x)
--- a/b.py
+++ b/b.py
@@ -1 +1 @@
-print(2)
\\ No newline at end of file
+log(2)
\\ No newline at end of file
`;

describe('parseUnifiedDiff', () => {
  it('splits a multi-file diff per file with counts', () => {
    const files = parseUnifiedDiff(TWO_FILES);
    expect(files.map(f => [f.path, f.added, f.deleted])).toEqual([
      ['pkg/a.py', 1, 1],
      ['b.py', 1, 1]
    ]);
  });

  it('classifies every line', () => {
    const [first, second] = parseUnifiedDiff(TWO_FILES);
    expect(first.lines.map(l => l.kind)).toEqual(['hunk', 'context', 'delete', 'add']);
    expect(first.lines[3].text).toBe('+log(x)');
    expect(second.lines.map(l => l.kind)).toEqual(['hunk', 'delete', 'note', 'add', 'note']);
  });

  it('is empty for an empty diff', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
  });
});
