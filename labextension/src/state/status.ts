/** One thing that can serve or not: a language server, a debug adapter, a kernel language... */
export interface StatusRow {
  resource: string;
  name: string;
  available: boolean | null;
  /** Why not, as the server words it (`why_not`, `reason`, or a resource's error). */
  reason: string | null;
  /** What it serves (languages, kernel name). */
  detail: string | null;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Entries of `group` when each is an object saying whether it is `available`. */
function availabilityGroup(group: unknown): [string, Json][] | null {
  if (!isObject(group)) {
    return null;
  }
  const entries = Object.entries(group);
  const ok =
    entries.length > 0 &&
    entries.every(([, item]) => isObject(item) && typeof item.available === 'boolean');
  return ok ? (entries as [string, Json][]) : null;
}

function detailOf(item: Json): string | null {
  if (Array.isArray(item.languages)) {
    return item.languages.join(', ');
  }
  return typeof item.kernel_name === 'string' ? item.kernel_name : null;
}

/**
 * The rows of `GET status`: for each resource, each of its servers, adapters, tiers or
 * languages that says whether it is available, and why not; a resource with no such list is
 * one row of its own.
 */
export function statusRows(report: unknown): StatusRow[] {
  const resources = isObject(report) && isObject(report.resources) ? report.resources : {};
  const rows: StatusRow[] = [];
  for (const [resource, value] of Object.entries(resources)) {
    if (!isObject(value)) {
      continue;
    }
    if (typeof value.error === 'string') {
      rows.push({ resource, name: resource, available: false, reason: value.error, detail: null });
      continue;
    }
    const groups = Object.values(value)
      .map(availabilityGroup)
      .filter((group): group is [string, Json][] => group !== null);
    if (groups.length === 0) {
      const available = typeof value.available === 'boolean' ? value.available : null;
      rows.push({ resource, name: resource, available, reason: null, detail: null });
      continue;
    }
    for (const [name, item] of groups.flat()) {
      const reason = item.why_not ?? item.reason ?? null;
      rows.push({
        resource,
        name,
        available: item.available as boolean,
        reason: typeof reason === 'string' ? reason : null,
        detail: detailOf(item)
      });
    }
  }
  return rows;
}
