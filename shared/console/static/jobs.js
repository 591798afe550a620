// Jobs of a collection: state, schedule in words, next and last run (with the last outcome), counters;
// filtered by state through the API's $filter, paged with $top/$skip (one extra row tells whether a next
// page exists, whatever the API does with nextLink). Above them, the collection's load forecast for the next
// 24 hours (forecast.js); under them, its dead letters (dead-letters.js).
import { call, consoleBase, limitsOf, schedules } from "./api.js";
import { collectionActions } from "./collection-actions.js";
import { deadLettersSection } from "./dead-letters.js";
import { announce, failure, h, show, stateBadge, table } from "./dom.js";
import { forecastSection } from "./forecast.js";
import { zoned } from "./zones.js";

const PAGE_SIZE = 25;
const STATES = ["Enabled", "Disabled", "Faulted", "Completed"];

function jobName(job) {
  const name = job.name || "";
  return name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
}

async function lastOutcome(ids, name) {
  try {
    const page = await call("GET", `${ids.path}/jobs/${encodeURIComponent(name)}/history`, { query: { $top: 1 } });
    const entry = (page.value || [])[0];
    return entry ? (entry.properties || {}).status : null;
  } catch {
    return null;
  }
}

// What the API enforces: the plan's limits, tightened by the collection's quota (never "no limit"), and the
// history it keeps, in the server's words (shared/console/checks.py: `scheduler collections show` says the same).
export function limitWords(limits) {
  if (!limits || limits.error || !limits.words) return { jobs: "?", recurrence: "?", auth: "?", retention: "?" };
  return limits.words;
}

function collectionSummary(collection, ids, limits, count) {
  const p = collection.properties || {};
  const words = limitWords(limits);
  return h("dl", { class: "props" },
    h("dt", {}, "State"), h("dd", {}, stateBadge(p.state)),
    h("dt", {}, "SKU"), h("dd", {}, (p.sku || {}).name || "Standard"),
    h("dt", {}, "Location"), h("dd", {}, collection.location || "—"),
    h("dt", {}, "Jobs"), h("dd", { id: "max-jobs" }, count === null ? `at most ${words.jobs}` : `${count} of at most ${words.jobs}`),
    h("dt", {}, "Each job runs"), h("dd", { id: "min-interval" }, words.recurrence),
    h("dt", {}, "Outbound authentication"), h("dd", {}, words.auth),
    h("dt", {}, "History kept"), h("dd", { id: "history-kept" }, words.retention),
    h("dt", {}, "Concurrent executions"), h("dd", { id: "max-concurrent" }, p.maxConcurrentExecutions
      ? `at most ${p.maxConcurrentExecutions} at once, across every instance` : "no limit"),
    h("dt", {}, "Target rate limits"), h("dd", { id: "rate-limits" }, (p.targetRateLimits || []).length
      ? p.targetRateLimits.map((r) => `${r.host}: ${r.requestsPerSecond}/s`).join(", ") : "none"),
    h("dt", {}, "Automatic spread"), h("dd", { id: "auto-spread" }, (p.autoSpread || {}).tolerance
      ? `occurrences of a second over a destination's rate limit fire up to ${p.autoSpread.tolerance} later`
      : "off"),
    h("dt", {}, "Resource id"), h("dd", {}, collection.id || ids.path));
}

export async function renderJobs(ids, query) {
  document.title = `${ids.collection} · Scheduler console`;
  const state = STATES.find((s) => s.toLowerCase() === (query.get("state") || "").toLowerCase()) || "";
  const page = Math.max(0, Number.parseInt(query.get("page") || "0", 10) || 0);
  const heading = h("h1", {}, `Jobs of ${ids.collection}`);
  show(heading, h("p", {}, "Loading…"));
  let collection;
  let jobs;
  try {
    collection = await call("GET", ids.path);
    const listed = await call("GET", `${ids.path}/jobs`, { query: {
      $top: PAGE_SIZE + 1, $skip: page * PAGE_SIZE || undefined, $filter: state ? `state eq '${state}'` : undefined } });
    jobs = listed.value || [];
  } catch (error) {
    show(heading, failure(error, "Could not read the collection"));
    return;
  }
  const more = jobs.length > PAGE_SIZE;
  jobs = jobs.slice(0, PAGE_SIZE);
  const words = jobs.length ? await schedules(jobs.map((j) => j.properties || {})).catch(() => []) : [];
  const [limits] = await limitsOf([{ properties: collection.properties || {} }]).catch(() => [null]);
  const outcomes = await Promise.all(jobs.map((j) => lastOutcome(ids, jobName(j))));
  const rows = jobs.map((job, i) => {
    const p = job.properties || {};
    const s = p.status || {};
    const zone = (p.recurrence || {}).timeZone;
    const described = words[i] || {};
    const outcome = outcomes[i];
    // The API returns no status for a disabled job: its counters are not reported, not zero.
    const unreported = (p.state || "").toLowerCase() === "disabled" && !p.status;
    const counter = (n) => (unreported ? h("span", { title: "not reported while the job is disabled" }, "—") : String(n ?? 0));
    return [
      h("a", { href: `${consoleBase()}${ids.path}/jobs/${encodeURIComponent(jobName(job))}` }, jobName(job)),
      stateBadge(p.state),
      described.description || (described.error ? described.error.message : "—"),
      unreported ? "— (disabled)" : zoned(s.nextExecutionTime, zone),
      h("span", {}, unreported ? "not reported" : zoned(s.lastExecutionTime, zone), outcome ? " " : "",
        outcome ? h("span", { class: `outcome-${outcome.toLowerCase()}` }, `(${outcome})`) : ""),
      counter(s.executionCount), counter(s.failureCount), counter(s.faultedCount),
    ];
  });
  const here = (changes) => {
    const q = new URLSearchParams({ ...(state ? { state } : {}), page: String(page), ...changes });
    if (!q.get("state")) q.delete("state");
    if (q.get("page") === "0") q.delete("page");
    const text = q.toString();
    return `${consoleBase()}${ids.path}${text ? `?${text}` : ""}`;
  };
  // Applied by a button, not on change: arrowing through a closed <select> changes its value at every key.
  const filter = h("form", { id: "state-filter-form", class: "filter", role: "search", "aria-label": "Filter jobs",
    action: `${consoleBase()}${ids.path}`, method: "get",
    onsubmit: (event) => {
      event.preventDefault();
      location.assign(here({ state: event.target.elements.state.value, page: "0" }));
    } },
  h("label", { for: "state-filter" }, "Filter by state"),
  h("select", { id: "state-filter", name: "state" },
    h("option", { value: "" }, "All states"), STATES.map((s) => h("option", { value: s, selected: s === state }, s))),
  h("button", { type: "submit", id: "apply-filter", class: "secondary" }, "Apply filter"));
  const pager = h("nav", { class: "toolbar", "aria-label": "Pages" },
    page > 0 ? h("a", { class: "button secondary", href: here({ page: String(page - 1) }), rel: "prev" }, "Previous page") : null,
    h("span", {}, `Page ${page + 1}`),
    more ? h("a", { class: "button secondary", href: here({ page: String(page + 1) }), rel: "next" }, "Next page") : null);
  show(
    heading,
    h("p", { class: "sub" }, `Resource group ${ids.group}, subscription ${ids.sub}`),
    collectionSummary(collection, ids, limits, !state && page === 0 && !more ? jobs.length : null),
    forecastSection(ids, (collection.properties || {}).autoSpread),
    ...collectionActions(ids, collection, !state && page === 0 && !more ? jobs.length : null,
      () => renderJobs(ids, query)),
    h("div", { class: "toolbar" },
      h("a", { class: "button", href: `${consoleBase()}${ids.path}?action=create` }, "New job"), filter),
    table(`Jobs${state ? ` in state ${state}` : ""}, page ${page + 1}`,
      ["Job", "State", "Schedule", "Next run", "Last run (outcome)", "Runs", "Failures", "Faulted"], rows, [5, 6, 7]),
    jobs.some((j) => ((j.properties || {}).state || "").toLowerCase() === "disabled")
      ? h("p", { class: "note" }, "— The API returns no status for a disabled job, so its runs are not counted here; "
        + "its page lists its history.") : null,
    pager,
    deadLettersSection(ids),
  );
  announce(`${jobs.length} jobs shown.`);
}
