/**
 * How a thing serves: `ready`; `absent`, not installed or not set up, which is optional (a
 * language the user never asked for); `broken`, present or configured and failing.
 */
export type Readiness = 'ready' | 'absent' | 'broken';

/** One thing that can serve or not: a language server, a debug adapter, a kernel language... */
export interface StatusRow {
  resource: string;
  name: string;
  available: boolean | null;
  readiness: Readiness;
  /** Why not, as the server words it (`why_not`, `reason`, or a resource's error). */
  reason: string | null;
  /** The command that installs what is absent, when the reason names one. */
  install: string | null;
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

// The server's words for something that is not there (discovery.missing_binary, a missing
// kernelspec, rustup's proxy without the component, a worker tier with no command): absent,
// not broken. Anything else unavailable was found and fails.
const ABSENT = [
  /^no binary \(/i,
  /^no \w+ kernel is installed/i,
  /Unknown binary '[^']+' in official toolchain/,
  /^No command is configured/
];
const INSTALL_COMMAND = /^(pip|pipx|uv|conda|mamba|python3?|npm|apt(-get)?|rustup|go|brew|dnf|jupyter) /;

/** The install command the server's reason names, if any. */
export function installCommand(reason: string | null): string | null {
  if (!reason) {
    return null;
  }
  const named = /to add it: ([^\n]+?)\.?$/.exec(reason) ?? /for a rustup shim: ([^)]+)\)/.exec(reason);
  if (named) {
    return named[1].trim();
  }
  const quoted = [...reason.matchAll(/`([^`]+)`/g)].map(match => match[1].trim());
  return quoted.find(text => INSTALL_COMMAND.test(text)) ?? null;
}

export function readinessOf(available: boolean | null, reason: string | null, enabled = true): Readiness {
  if (available !== false) {
    return 'ready';
  }
  if (!enabled || (reason !== null && ABSENT.some(pattern => pattern.test(reason)))) {
    return 'absent';
  }
  return 'broken';
}

function row(resource: string, name: string, available: boolean | null, reason: string | null,
  detail: string | null = null, enabled = true): StatusRow {
  const readiness = readinessOf(available, reason, enabled);
  const why = !enabled && !reason ? 'turned off in the server configuration' : reason;
  return {
    resource,
    name,
    available,
    readiness,
    reason: why,
    install: readiness === 'absent' ? installCommand(why) : null,
    detail
  };
}

function errors(resource: string, value: unknown, what: string): StatusRow[] {
  return isObject(value)
    ? Object.entries(value).map(([name, error]) => row(resource, name, false, `${what}: ${String(error)}`))
    : [];
}

/**
 * The rows of `GET status`: for each resource, each of its servers, adapters, tiers or
 * languages that says whether it is available, and why not; a resource with no such list is
 * one row of its own. Configuration that does not load (a spec, a tool, a resource, a worker
 * backend) is a broken row.
 */
export function statusRows(report: unknown): StatusRow[] {
  const top = isObject(report) ? report : {};
  const resources = isObject(top.resources) ? top.resources : {};
  const rows: StatusRow[] = [];
  for (const [resource, value] of Object.entries(resources)) {
    if (!isObject(value)) {
      continue;
    }
    if (typeof value.error === 'string') {
      rows.push(row(resource, resource, false, value.error));
      continue;
    }
    const groups = Object.values(value)
      .map(availabilityGroup)
      .filter((group): group is [string, Json][] => group !== null);
    if (groups.length === 0) {
      rows.push(row(resource, resource, typeof value.available === 'boolean' ? value.available : null, null));
    }
    for (const [name, item] of groups.flat()) {
      const reason = item.why_not ?? item.reason ?? null;
      rows.push(row(resource, name, item.available as boolean, typeof reason === 'string' ? reason : null,
        detailOf(item), item.enabled !== false));
    }
    rows.push(...errors(resource, value.spec_errors, 'its configuration does not load'));
    if (typeof value.backend_error === 'string') {
      rows.push(row(resource, 'backend', false, value.backend_error));
    }
  }
  rows.push(...errors('resources', top.resource_errors, 'did not start'));
  rows.push(...errors('tools', top.tool_load_errors, 'does not load'));
  return rows;
}

/** The rows by readiness, in the order a person reads them: broken, ready, absent. */
export function groupByReadiness(rows: StatusRow[]): { readiness: Readiness; rows: StatusRow[] }[] {
  return (['broken', 'ready', 'absent'] as Readiness[])
    .map(readiness => ({ readiness, rows: rows.filter(r => r.readiness === readiness) }))
    .filter(group => group.rows.length > 0);
}
