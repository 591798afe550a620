// One job: actions (enable, disable, run now, edit, delete with confirmation), its definition with
// secrets shown as set / not set, its overlap policy and spread, its success expectation and missed-run policy,
// the next 10 occurrences from the engine, the occurrences that run, wait or were skipped by the overlap policy
// (from the ledger), and its history: each occurrence with every attempt under it (history.js), with lateness
// and a chart; a backfill of a past interval after a what-if (backfill.js); its pause, in force or not, with
// Pause until… and Resume now (job-pause.js). "Run now" polls the history until the new entry appears.
import { call, consoleBase, schedules } from "./api.js";
import { backfillSection } from "./backfill.js";
import { historyChart } from "./chart.js";
import { announce, confirmAction, failure, folded, h, show, stateBadge, table } from "./dom.js";
import { historyTable, loadLedger, placeAttempts, readHistory } from "./history.js";
import { inForce, pauseBanner, pauseControls } from "./job-pause.js";
import { zoned } from "./zones.js";

// The API never returns a write-only secret, so the page can only infer whether one is set. It requires these
// for each HTTP authentication type (shared/lifecycle/validation.py): a stored job therefore has them.
const REQUIRED_SECRETS = {
  basic: ["password"], clientcertificate: ["pfx", "password"], activedirectoryoauth: ["secret"],
};
// A Storage queue sasToken and a Service Bus sasKey are optional to the API: nothing says whether they are set.
const UNKNOWN = "unknown: write-only and optional, so the API does not say";
const SECRET_MEMBERS = new Set(["password", "pfx", "secret", "sasToken", "sasKey"]);

// [property path, "set" | "not set" | UNKNOWN] for every secret the action may hold; never a value.
function secretsOf(action, where) {
  const found = [];
  if (!action) return found;
  const auth = (action.request || {}).authentication;
  for (const name of auth ? REQUIRED_SECRETS[(auth.type || "").toLowerCase()] || [] : []) {
    found.push([`${where}.request.authentication.${name}`, "set"]);
  }
  if (action.queueMessage) {
    found.push([`${where}.queueMessage.sasToken`, action.queueMessage.sasToken ? "set" : UNKNOWN]);
  }
  for (const kind of ["serviceBusQueueMessage", "serviceBusTopicMessage"]) {
    if (!action[kind]) continue;
    const sb = action[kind].authentication;
    found.push([`${where}.${kind}.authentication.sasKey`,
      sb ? (sb.sasKey ? "set" : UNKNOWN) : "not set (no authentication)"]);
  }
  return found;
}

// The definition as shown: should an API ever echo a secret, its value still never reaches the page.
function withoutSecrets(value) {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k,
    SECRET_MEMBERS.has(k) && typeof v === "string" ? "(set, not shown)" : withoutSecrets(v)]));
}

function target(action) {
  if (!action) return "—";
  if (action.request) return `${action.request.method} ${action.request.uri}`;
  if (action.queueMessage) return `queue ${action.queueMessage.queueName} of ${action.queueMessage.storageAccount}`;
  const sb = action.serviceBusQueueMessage || action.serviceBusTopicMessage;
  if (sb) return `${sb.namespace} ${sb.queueName || sb.topicPath || ""}`;
  return action.type || "—";
}

function missedRunWords(policy) {
  const kind = (policy || {}).type || "Latest";
  if (/^skip$/i.test(kind)) return "Skip: occurrences missed while the scheduler could not run them do not run";
  if (/^all$/i.test(kind)) {
    return `All: the latest ${policy.maxRuns || 10} missed occurrences of the last ${policy.window || "P1D"} run, oldest first`;
  }
  return `${policy ? "Latest" : "Latest (default)"}: the latest missed occurrence runs once`;
}

function overlapWords(policy) {
  if (/^skip$/i.test(policy || "")) return "Skip: an occurrence due while the previous one runs is skipped";
  if (/^bufferone$/i.test(policy || "")) return "BufferOne: it runs when the previous one ends; at most one waits";
  return "Allow (default): occurrences may overlap";
}

// The ledger's occurrences that run, wait, or were skipped because another ran (newest first), with how long
// the ones that ran waited and for what.
function overlapTable(entries, zone) {
  const shown = entries.map((e) => e.properties || {}).filter((p) => ["running", "waiting"].includes((p.status || "").toLowerCase())
    || p.reason === "SkippedByOverlap" || p.waited);
  if (!shown.length) return h("p", { class: "muted", id: "overlap-none" }, "None among the latest entries: no occurrence waited, runs long or was skipped by the overlap policy.");
  const t = table("Occurrences that ran late, wait or were skipped, newest first", ["Occurrence", "Status", "Reason", "Waited", "Message"],
    shown.map((p) => [zoned(p.occurrenceTime || p.expectedExecutionTime, zone),
      h("span", { class: `outcome-${(p.status || "").toLowerCase()}` }, p.status || "—"), p.reason || "—",
      p.waited ? `${p.waited} (${p.waitedFor || "?"})` : "—", folded(p.message)]));
  t.id = "overlap-table";
  return t;
}

function section(id, title, ...content) {
  return h("section", { "aria-labelledby": `${id}-heading`, id },
    h("h2", { id: `${id}-heading` }, title), ...content);
}

export async function renderJob(ids) {
  const jobPath = `${ids.path}/jobs/${encodeURIComponent(ids.job)}`;
  document.title = `${ids.job} · Scheduler console`;
  const heading = h("h1", {}, `Job ${ids.job}`);
  let job;
  let history;
  try {
    const [read, lists] = await Promise.all([call("GET", jobPath), readHistory(jobPath)]);
    job = read;
    history = await placeAttempts(lists, (job.properties || {}).action);
  } catch (error) {
    show(heading, failure(error, "Could not read the job"));
    return;
  }
  const p = job.properties || {};
  const status = p.status || {};
  const [plan] = await schedules([{ ...p, from: status.nextExecutionTime }], 10)
    .catch((error) => [{ error: { message: String(error) } }]);
  const state = (p.state || "").toLowerCase();
  // A spread job fires at its offset after each time of its schedule, and exceptions and a pause change what
  // fires: the API's preview knows the instants.
  const controlled = (p.exceptions || []).length > 0 || inForce(p.pause);
  const preview = (p.spreadWindow || controlled) && state === "enabled"
    ? await call("GET", `${jobPath}/occurrences`, { query: { count: 10 } }).catch(() => null) : null;
  const zone = (p.recurrence || {}).timeZone;
  // The API returns no status for a disabled job (as the old service did): no counters, no next run.
  const unreported = state === "disabled" && !p.status;

  const act = async (label, work) => {
    for (const b of document.querySelectorAll("#job-actions button")) b.disabled = true;
    announce(`${label}…`);
    try {
      await work();
    } catch (error) {
      document.getElementById("action-result").replaceChildren(failure(error, label));
      for (const b of document.querySelectorAll("#job-actions button")) b.disabled = false;
      announce(`${label} failed.`);
    }
  };
  const setState = (wanted) => act(wanted === "Enabled" ? "Enable" : "Disable", async () => {
    await call("PATCH", jobPath, { body: { properties: { state: wanted } } });
    announce(`Job ${wanted.toLowerCase()}.`);
    await renderJob(ids);
  });
  const runNow = () => act("Run now", async () => {
    const before = history.occurrences.length ? history.occurrences[0].name : null;
    await call("POST", `${jobPath}/run`);
    announce("Run requested; waiting for its history entry…");
    for (let i = 0; i < 60; i += 1) {
      await new Promise((resolve) => { setTimeout(resolve, 1000); });
      const latest = await loadLedger(jobPath, 1);
      if (latest.length && latest[0].name !== before) {
        await renderJob(ids);
        announce(`New history entry: ${(latest[0].properties || {}).status}.`);
        document.getElementById("history-heading").focus();
        return;
      }
    }
    await renderJob(ids);
    announce("The run was requested; no history entry yet.");
  });
  const remove = async () => {
    if (!await confirmAction(`Delete job ${ids.job}?`, "Its definition and history are removed. This cannot be undone.")) {
      announce("Delete cancelled.");
      return;
    }
    await act("Delete", async () => {
      await call("DELETE", jobPath);
      location.href = `${consoleBase()}${ids.path}`;
    });
  };

  const pausing = pauseControls({ jobPath, pause: p.pause, zone, act, reload: () => renderJob(ids) });
  const definition = withoutSecrets({ ...p });
  delete definition.status;
  const secrets = [...secretsOf(p.action, "properties.action"),
    ...secretsOf((p.action || {}).errorAction, "properties.action.errorAction")];
  const occurrences = preview ? (preview.value || []).map((o) => o.fireTime)
    : plan && plan.occurrences ? plan.occurrences : [];
  show(
    heading,
    h("p", { class: "sub" }, job.id || jobPath),
    pauseBanner(p.pause, zone),
    h("div", { class: "toolbar", id: "job-actions", role: "group", "aria-label": "Job actions" },
      h("button", { type: "button", id: "enable", disabled: state === "enabled", onclick: () => setState("Enabled") }, "Enable"),
      h("button", { type: "button", id: "disable", disabled: state === "disabled", onclick: () => setState("Disabled") }, "Disable"),
      h("button", { type: "button", id: "run-now", onclick: runNow }, "Run now"),
      pausing.buttons,
      h("a", { class: "button secondary", href: `${consoleBase()}${jobPath}?action=edit` }, "Edit"),
      h("a", { class: "button secondary", href: `${consoleBase()}${jobPath}?action=occurrences` }, "Occurrences, what-if"),
      h("button", { type: "button", id: "delete", class: "danger", onclick: remove }, "Delete")),
    pausing.form,
    h("div", { id: "action-result" }),
    h("dl", { class: "props" },
      h("dt", {}, "State"), h("dd", {}, stateBadge(p.state)),
      h("dt", {}, "Schedule"), h("dd", { id: "schedule-words" }, plan && plan.description ? plan.description : "—"),
      h("dt", {}, "Action"), h("dd", {}, `${(p.action || {}).type || "?"}: ${target(p.action)}`),
      h("dt", {}, "Start time"), h("dd", {}, zoned(p.startTime, zone)),
      h("dt", {}, "Overlap policy"), h("dd", { id: "overlap-policy" }, overlapWords(p.overlapPolicy)),
      h("dt", {}, "Spread window"), h("dd", { id: "spread-window" }, p.spreadWindow
        ? `${p.spreadWindow}: each occurrence fires at a fixed offset inside it` : "— (on time)"),
      h("dt", {}, "Expect success within"), h("dd", { id: "expect-success-within" }, p.expectSuccessWithin
        ? `${p.expectSuccessWithin}: longer without a success, the job counts as silent` : "— (no expectation)"),
      h("dt", {}, "Missed-run policy"), h("dd", { id: "missed-run-policy" }, missedRunWords(p.missedRunPolicy)),
      h("dt", {}, "Next run"), h("dd", {}, unreported ? "— (the job is disabled)" : zoned(status.nextExecutionTime, zone)),
      h("dt", {}, "Last run"), h("dd", {}, unreported ? "not reported while the job is disabled"
        : zoned(status.lastExecutionTime, zone)),
      h("dt", { title: "All time: attempts (each retry and error action counts), failed attempts, faulted occurrences" }, "Attempts / failed / faulted"),
      h("dd", { id: "counters" }, unreported
        ? "Not reported while the job is disabled: the API returns no status for a disabled job. Its history below lists its runs."
        : `${status.executionCount ?? 0} / ${status.failureCount ?? 0} / ${status.faultedCount ?? 0}`)),
    section("occurrences", "Next 10 occurrences",
      state !== "enabled" ? h("p", { class: "muted" }, `The job is ${state || "not enabled"}: these are its schedule's next times.`) : null,
      plan && plan.error ? failure(plan.error.message) : null,
      p.spreadWindow && preview ? h("p", { class: "muted", id: "spread-note" }, `When they fire: each at the job's fixed offset inside its spread window (${p.spreadWindow}).`) : null,
      occurrences.length ? h("ol", { class: "occurrences" }, occurrences.map((o) => h("li", {}, zoned(o, zone))))
        : h("p", { class: "muted" }, "None: the schedule has no occurrence left.")),
    section("overlap", "Running, waiting and skipped", overlapTable(history.occurrences, zone)),
    section("history", "History", historyChart(history.groups, zone), historyTable(history.groups, zone)),
    backfillSection(jobPath, zone),
    section("definition", "Definition",
      secrets.length ? table("Secrets (values are never shown)", ["Property", "Set?"], secrets) : h("p", { class: "muted" }, "No secrets."),
      h("pre", { class: "json", tabindex: "0", "aria-label": "Job definition as JSON" }, JSON.stringify(definition, null, 2))),
  );
  document.getElementById("history-heading").setAttribute("tabindex", "-1");
}
