// The job form's expectation and missed-run fields (newer api-version): how often the job should succeed
// (`expectSuccessWithin`: longer without a success, the job counts as silent, docs/operate.md), and what runs of
// the occurrences missed while the scheduler could not run them (`missedRunPolicy`, docs/decisions.md "Missed
// runs, backfill, the ledger"). Empty removes the member (no expectation; Latest, the default).
import { h } from "./dom.js";
import { field, get, number, put, trimmed } from "./form-fields.js";

const POLICIES = [
  ["", "Latest (default): the latest missed occurrence runs once"],
  ["Skip", "Skip: missed occurrences do not run"],
  ["All", "All: the latest missed occurrences of a window run, oldest first"],
];

export function expectFields(ctx) {
  const path = ["properties", "missedRunPolicy"];
  const kind = (POLICIES.find(([v]) => v && v.toLowerCase() === String(get(ctx.doc, [...path, "type"]) ?? "").toLowerCase()) || [""])[0];
  const parts = [
    field(ctx, "job-expect", "Expect a success within", ["properties", "expectSuccessWithin"], {
      parse: trimmed, placeholder: "PT2M",
      help: "An ISO 8601 duration from PT1M to 18 months (PT2M, PT1H, P1D): longer without a success, the job "
        + "counts as silent. Empty: no expectation." }),
    field(ctx, "job-missed", "Occurrences missed while the scheduler could not run them", [...path, "type"], {
      choices: POLICIES, structural: true, format: () => kind, parse: (v) => {
        // window and maxRuns belong to All only.
        if (v !== "All") for (const member of ["window", "maxRuns"]) put(ctx.doc, [...path, member], undefined);
        return v || undefined;
      } }),
  ];
  if (kind === "All") {
    parts.push(h("div", { class: "row" },
      field(ctx, "job-missed-window", "Window", [...path, "window"], { parse: trimmed, placeholder: "P1D",
        help: "Missed occurrences older than this are skipped (ISO 8601, at most P60D; default P1D)." }),
      field(ctx, "job-missed-max", "At most", [...path, "maxRuns"], { type: "number", parse: number, inputmode: "numeric",
        help: "Missed occurrences that run (1 to 100; default 10)." })));
  }
  return parts;
}
