// A job's history as its page shows it: each occurrence of the ledger (the newer api-version's history, one entry
// per occurrence), newest first, and under it every attempt it made (its attempts list, one entry per attempt:
// the first, each retry, the error action, each naming its occurrence). Which attempt belongs to which occurrence
// is the server's rule (POST console/attempts: shared/console/attempts.py, the one `scheduler jobs history` uses
// too); the attempts of an occurrence not listed are shown under a row of their own.
import { call, consoleBase } from "./api.js";
import { folded, h, seconds, table } from "./dom.js";
import { zoned } from "./zones.js";

export const HISTORY_TOP = 50;
const MOST_ATTEMPTS = 1000; // a job keeps at most 1,000 attempts

// The newest occurrences (the ledger); `top` 1 tells whether a run has been recorded.
export async function loadLedger(jobPath, top = HISTORY_TOP) {
  const page = await call("GET", `${jobPath}/history`, { query: { $top: top } });
  return (page.value || []).slice(0, top);
}

// Attempts, newest first by due, down to `since`: none is due before its occurrence.
async function loadAttempts(jobPath, since) {
  const items = [];
  let page = await call("GET", `${jobPath}/attempts`);
  for (;;) {
    items.push(...(page.value || []));
    const last = items.length ? Date.parse((items[items.length - 1].properties || {}).expectedExecutionTime) : NaN;
    if (!page.nextLink || items.length >= MOST_ATTEMPTS || (since !== null && last < since)) return items;
    page = await call("GET", page.nextLink);
  }
}

// Only what the rule reads goes to the server: not the messages, which may hold whole responses.
const MEMBERS = ["executionTag", "occurrenceTime", "trigger", "expectedExecutionTime", "startTime", "endTime",
  "actionName", "status", "retryCount", "repeatCount", "attempts"];
const slim = (e) => ({ properties: Object.fromEntries(MEMBERS.map((m) => [m, (e.properties || {})[m]])) });

// The two lists: the newest occurrences, and the attempts back to the oldest of them.
export async function readHistory(jobPath) {
  const occurrences = await loadLedger(jobPath);
  const times = occurrences.map((e) => Date.parse((e.properties || {}).occurrenceTime)).filter((t) => !Number.isNaN(t));
  const attempts = await loadAttempts(jobPath, times.length ? Math.min(...times) : null);
  return { occurrences, attempts };
}

// {occurrences, groups: [{occurrence: entry | null, attempts: [entry, ...]}]}, newest first; `action` is the
// job's (its retry policies say when each retry was due).
export async function placeAttempts({ occurrences, attempts }, action) {
  const answer = await call("POST", `${consoleBase()}/attempts`, {
    body: { occurrences: occurrences.map(slim), attempts: attempts.map(slim), action: action || {} },
  });
  const groups = answer.value.map((g) => ({
    occurrence: g.occurrence === null ? null : occurrences[g.occurrence], attempts: g.attempts.map((i) => attempts[i]),
  }));
  return { occurrences, groups };
}

export function lateness(p) {
  return p.startTime && p.expectedExecutionTime ? Date.parse(p.startTime) - Date.parse(p.expectedExecutionTime) : null;
}

function label(p) {
  const retry = p.retryCount || 0;
  if (/^erroraction$/i.test(p.actionName || "")) return retry ? `error action, retry ${retry}` : "error action";
  return retry ? `retry ${retry}` : "attempt 1";
}

function outcome(status) {
  return h("span", { class: `outcome-${(status || "").toLowerCase()}` }, status || "—");
}

function summary(p, attempts) {
  if (!attempts.length) return folded(p.message);
  const mains = attempts.filter((a) => !/^erroraction$/i.test((a.properties || {}).actionName || "")).length;
  const error = attempts.length > mains ? `, then the error action (${(attempts[attempts.length - 1].properties || {}).status})` : "";
  return h("span", { class: "message" }, `${mains} attempt${mains === 1 ? "" : "s"}${error}`);
}

// One row per occurrence (its lateness: its first attempt's), then one per attempt, indented.
export function historyTable(groups, zone) {
  const rows = [];
  const kinds = [];
  for (const g of groups) {
    const first = (g.attempts[0] || {}).properties || {};
    const late = lateness(first);
    if (g.occurrence) {
      const p = g.occurrence.properties || {};
      rows.push([zoned(p.occurrenceTime || p.expectedExecutionTime, zone), p.trigger || "—",
        h("span", {}, outcome(p.status), p.reason ? ` (${p.reason})` : ""), zoned(first.startTime, zone),
        late === null ? "—" : seconds(late), summary(p, g.attempts)]);
    } else {
      rows.push(["?", "not in the ledger", "—", "—", "—", "—"]);
    }
    kinds.push("occurrence");
    for (const a of g.attempts) {
      const p = a.properties || {};
      const own = lateness(p);
      rows.push(["", label(p), outcome(p.status), zoned(p.startTime, zone), own === null ? "—" : seconds(own), folded(p.message)]);
      kinds.push("attempt");
    }
  }
  const n = groups.length;
  const t = table(`The latest ${n} occurrence${n === 1 ? "" : "s"}, newest first, each followed by its attempts`,
    ["Occurrence", "Trigger / attempt", "Status", "Started", "Lateness", "Message"], rows, [4]);
  t.id = "history-table";
  [...t.tBodies[0].rows].forEach((tr, i) => tr.classList.add(`${kinds[i] || "occurrence"}-row`));
  return t;
}
