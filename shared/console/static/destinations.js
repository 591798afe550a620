// The destinations the scheduler holds back (GET /subscriptions/{s}/providers/Microsoft.Scheduler/destinations,
// newer api-version; shared/api/destinations.py), shown on a subscription's page: the deployment's, so every
// subscription's jobs share them. One row per destination: its circuit, failures in a row, next probe, budget
// (requests a second while pushed back), hold until and last push-back. An Open circuit (nothing goes to it but
// one probe every few seconds) is highlighted: its row is marked (class circuit-open) and its circuit in red and
// bold, so colour is not the only sign. Times in UTC (a destination has no zone).
import { call } from "./api.js";
import { failure, fill, h, table } from "./dom.js";
import { zoned } from "./zones.js";

const HEAD = ["Destination", "Circuit", "Failures", "Next probe", "Budget", "Hold until", "Last push-back"];

function row(d) {
  const circuit = d.circuit || "Closed";
  const pushed = d.lastPushBack ? `HTTP ${d.lastPushBack.status} at ${zoned(d.lastPushBack.at, null)}` : "—";
  return [d.destination, h("span", { class: `circuit circuit-${circuit.toLowerCase()}` }, circuit),
    String(d.failures ?? 0), zoned(d.nextProbe, null),
    d.budget === null || d.budget === undefined ? "—" : `${Number(d.budget.toPrecision(3))}/s`,
    zoned(d.holdUntil, null), pushed];
}

export function destinationsTable(answer) {
  const items = answer.value || [];
  if (!items.length) {
    return h("p", { id: "destinations-none", class: "muted" }, "No destination pushes back or fails.");
  }
  const caption = `${items.length} destination${items.length === 1 ? "" : "s"} held back, as of ${zoned(answer.asOf, null)}`;
  const shown = table(caption, HEAD, items.map(row), [2]);
  shown.id = "destinations-table";
  for (const cell of shown.querySelectorAll(".circuit-open")) cell.closest("tr").classList.add("circuit-open");
  return shown;
}

// Filled when the answer comes, so the rest of the page does not wait for it.
export function destinationsSection(sub) {
  const heading = h("h2", { id: "destinations-heading" }, "Destinations");
  const note = h("p", { class: "sub" }, "Targets that push back (429, 503) or keep failing, for every subscription's jobs.");
  const box = h("section", { id: "destinations", "aria-labelledby": "destinations-heading" }, heading, note,
    h("p", {}, "Loading…"));
  call("GET", `/subscriptions/${encodeURIComponent(sub)}/providers/Microsoft.Scheduler/destinations`)
    .then((answer) => fill(box, heading, note, destinationsTable(answer || {})))
    .catch((error) => fill(box, heading, note, error.status === 403
      // A role over some collections only: the deployment's list is not for it, and that is no error of the page.
      ? h("p", { class: "muted" }, "Only a role over the whole subscription's jobs (Reader or above) shows them.")
      : failure(error, "Could not read the destinations")));
  return box;
}
