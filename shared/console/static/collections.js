// Collections of a subscription: state, SKU, quota use (jobs used / max) and job counts by state; then the
// destinations held back (destinations.js).
import { collectionPath, consoleBase, limitsOf, listAll } from "./api.js";
import { destinationsSection } from "./destinations.js";
import { announce, failure, h, show, stateBadge, table } from "./dom.js";

const STATES = ["enabled", "disabled", "faulted", "completed"];

export function renderSubscriptionPrompt() {
  show(
    h("h1", {}, "Job collections"),
    h("form", { method: "get", action: consoleBase() },
      h("div", { class: "field" },
        h("label", { for: "subscription" }, "Subscription id"),
        h("input", { id: "subscription", name: "subscription", required: true, autocomplete: "on", size: 40 })),
      h("button", { type: "submit" }, "Show collections")),
  );
  document.getElementById("subscription").focus();
}

function parseId(id) {
  const m = /\/resourceGroups\/([^/]+)\//i.exec(id || "");
  return m ? decodeURIComponent(m[1]) : "";
}

export async function renderCollections(sub) {
  document.title = `Collections of ${sub} · Scheduler console`;
  show(h("h1", {}, "Job collections"), h("p", { class: "sub" }, `Subscription ${sub}`), h("p", {}, "Loading…"));
  let collections;
  try {
    collections = await listAll(`/subscriptions/${encodeURIComponent(sub)}/providers/Microsoft.Scheduler/jobCollections`);
  } catch (error) {
    show(h("h1", {}, "Job collections"), failure(error, "Could not list the collections"));
    return;
  }
  const limits = collections.length
    ? await limitsOf(collections.map((c) => ({ properties: c.properties || {} }))).catch(() => []) : [];
  const rows = await Promise.all(collections.map(async (c, index) => {
    const group = parseId(c.id);
    const p = c.properties || {};
    let counts = null;
    try {
      const jobs = await listAll(`${collectionPath(sub, group, c.name)}/jobs`);
      counts = Object.fromEntries(STATES.map((s) => [s, 0]));
      for (const job of jobs) {
        const state = ((job.properties || {}).state || "").toLowerCase();
        counts[state] = (counts[state] || 0) + 1;
      }
      counts.total = jobs.length;
    } catch (error) {
      counts = { error: String(error) };
    }
    const limit = limits[index];
    const max = limit && !limit.error ? limit.maxJobs : "?"; // the plan's limit tightened by the quota
    const used = counts.error ? "?" : counts.total;
    return [
      h("a", { href: consoleBase() + collectionPath(sub, group, c.name) }, c.name),
      group, c.location || "—", stateBadge(p.state), (p.sku || {}).name || "Standard",
      `${used} / ${max}`,
      ...STATES.map((s) => (counts.error ? "?" : String(counts[s]))),
    ];
  }));
  show(
    h("h1", {}, "Job collections"),
    h("p", { class: "sub" }, `Subscription ${sub}`),
    h("div", { class: "toolbar" }, h("a", { class: "button", id: "new-collection",
      href: `${consoleBase()}?subscription=${encodeURIComponent(sub)}&action=create` }, "New collection")),
    table(`${collections.length} collection${collections.length === 1 ? "" : "s"}`,
      ["Collection", "Resource group", "Location", "State", "SKU", "Quota (jobs used / max)",
        "Enabled", "Disabled", "Faulted", "Completed"], rows, [6, 7, 8, 9]),
    destinationsSection(sub),
  );
  announce(`${collections.length} collections loaded.`);
}
